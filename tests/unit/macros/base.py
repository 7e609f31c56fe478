"""Render the lakehouse adapter's macros with Jinja alone: no Spark, no JVM, no dbt run.

As dbt-databricks' tests/unit/macros/base.py does for its adapter: every macro file of the
adapter (src/dbt/include/lakehouse/macros/*/*.sql) is compiled once in dbt's own Jinja
environment (dbt_common's get_environment: the do and loopcontrols extensions, dbt's filters)
and rendered against a small stub of dbt's context:

- `config.get` reads the model's configs from a plain dict the test writes;
- `return()` raises dbt's MacroReturn and every macro is called through a wrapper that catches
  it, as dbt's MacroGenerator does, so a macro returning a dict (idempotent_merge_config) hands
  the dict to its caller;
- `exceptions.raise_compiler_error` is dbt's own (a CompilationError);
- `modules` is dbt's (re, datetime, itertools, pytz);
- `adapter` answers the adapter methods the macros call with LakehouseAdapter's own methods
  (impl.py: the strategy list, seed check, determinism check, identifiers, interval parser),
  none of which needs a connection;
- `model` carries the unique_id, language and compiled_code the messages and the determinism
  check read, and the yml's columns and constraints a contract check reads;
- `var`, `invocation_args_dict` and `flags.WHICH` give the interval vars, the event-time flags
  and the command, as dbt hands them to a model; `cast` renders as dbt's default__cast.

Anything else a macro reaches for (run_query, statement, log, ...) is not stubbed: the macros
rendered here are the SQL renderers and the config check, which run no query.
"""

from __future__ import annotations

import functools
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jinja2
from dbt.context.base import get_context_modules
from dbt.context.exceptions_jinja import raise_compiler_error
from dbt_common.clients.jinja import get_environment
from dbt_common.exceptions.macros import MacroReturn
from dbt_common.utils.jinja import MACRO_PREFIX

from dbt.adapters.lakehouse.impl import LakehouseAdapter
from dbt.adapters.lakehouse.strategy.interval import (
    parse_interval,
)
from dbt.include import lakehouse

MACRO_DIR = Path(lakehouse.PACKAGE_PATH) / "macros"
MODEL_ID = "model.scratch.m"


def normalize(sql: str) -> str:
    """Whitespace folded to single spaces, none just inside parentheses: an expected statement
    is written as readable SQL, line breaks and indentation free."""
    return " ".join(sql.split()).replace("( ", "(").replace(" )", ")")


def interval(start: str, end: str) -> dict[str, Any]:
    """interval_bounds() of a run given these vars: the adapter's own parser (interval.py)."""
    return parse_interval(MODEL_ID, start, end).as_dict()


def defined_macros(template: jinja2.Template, context: dict[str, Any]) -> dict[str, Any]:
    """The macros a template defines, bound to context: name -> jinja2 Macro (dbt's parser
    stores `{% macro x %}` as dbt_macro__x; calls inside the templates use the plain name)."""
    module = template.make_module(vars=context)
    return {
        name.removeprefix(MACRO_PREFIX): value
        for name, value in vars(module).items()
        if isinstance(value, jinja2.runtime.Macro)
    }


@functools.cache
def templates() -> tuple[jinja2.Environment, dict[str, jinja2.Template]]:
    """Every macro file of the adapter, compiled once per test process: macro name -> the
    template that defines it."""
    env = get_environment()
    env.loader = jinja2.FileSystemLoader(str(MACRO_DIR))
    found: dict[str, jinja2.Template] = {}
    for path in sorted(MACRO_DIR.glob("*/*.sql")):
        template = env.get_template(str(path.relative_to(MACRO_DIR)))
        found.update(dict.fromkeys(defined_macros(template, dict(env.globals)), template))
    return env, found


class StubConfig:
    """dbt's `config` in a model's context: `get` reads the model's configs."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def get(self, name: str, default: Any = None, validator: Any = None) -> Any:
        return self.values.get(name, default)


class StubAdapter:
    """The adapter methods the idempotent_merge macros call: LakehouseAdapter's own (impl.py),
    the ones that need no connection (strategy list, seed check, determinism, identifiers,
    interval parser), and dbt-spark's quote."""

    valid_incremental_strategies = LakehouseAdapter.valid_incremental_strategies
    check_seed_file = LakehouseAdapter.check_seed_file
    find_nondeterministic = LakehouseAdapter.find_nondeterministic
    quote_column = LakehouseAdapter.quote_column
    column_name = LakehouseAdapter.column_name
    parse_interval = LakehouseAdapter.parse_interval
    quote = LakehouseAdapter.quote  # dbt-spark's SparkAdapter.quote


class Macros:
    """The adapter's macros bound to one model: `macros.name(*args)` calls a macro and returns
    what it returns (its return() value, or its rendered text)."""

    def __init__(
        self,
        config: dict[str, Any],
        compiled_code: str = "select 1 as id",
        language: str = "sql",
        variables: dict[str, Any] | None = None,
        invocation_args: dict[str, Any] | None = None,
        command: str = "run",
        columns: dict[str, Any] | None = None,
        constraints: list[dict[str, Any]] | None = None,
    ) -> None:
        env, defined_in = templates()
        variables = variables or {}
        self._macros: dict[str, Any] = {}
        # every macro is reached through self._call, which ends a return() as dbt does
        self.context: dict[str, Any] = {
            **env.globals,
            "config": StubConfig(config),
            # a dict, as dbt's model context is: Jinja reads model.unique_id from its keys
            "model": {
                "unique_id": MODEL_ID,
                "language": language,
                "compiled_code": compiled_code,
                "columns": columns or {},
                "constraints": constraints or [],
            },
            "adapter": StubAdapter(),
            "modules": get_context_modules(),
            "exceptions": SimpleNamespace(raise_compiler_error=raise_compiler_error),
            "return": self._return,
            "execute": True,
            "var": lambda name, default=None: variables.get(name, default),
            # dbt's invocation_args_dict (the event-time flags) and flags.WHICH (the command)
            "invocation_args_dict": invocation_args or {},
            "flags": SimpleNamespace(WHICH=command),
            # dbt's cast() as its default__cast renders it
            "cast": lambda field, data_type: f"cast({field} as {data_type})",
            **{name: functools.partial(self._call, name) for name in defined_in},
        }
        for template in set(defined_in.values()):
            self._macros.update(defined_macros(template, self.context))

    @staticmethod
    def _return(value: Any) -> None:
        raise MacroReturn(value)

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._macros[name](*args, **kwargs)
        except MacroReturn as returned:
            return returned.value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._macros:
            raise AttributeError(f"no macro named {name} in {MACRO_DIR}")
        return functools.partial(self._call, name)
