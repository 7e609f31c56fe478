"""`dbt show` of a Python model: a clear message instead of Python sent to Spark as SQL.

dbt-core's show task wraps every selected node's compiled code in the macro `get_show_sql`
(`select ... limit n`) and runs it as SQL. A Python model's compiled code is Python, so Spark
answered with a PARSE_SYNTAX_ERROR quoting the model's docstring. The adapter calls
`refuse_python_model` before that macro runs (LakehouseAdapter.execute_macro).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

SHOW_MACRO = "get_show_sql"


def python_model_message(model: Mapping[str, Any]) -> str:
    """What to do instead of `dbt show --select <a Python model>`."""
    name = model.get("name", "?")
    return (
        f"{name} is a Python model ({model.get('original_file_path', '?')}): dbt show runs "
        "SQL and cannot preview a Python model's code. Build it (dbt run --select "
        f"{name}, with the vars it needs) and query its table: "
        f"dbt show --inline \"select * from {{{{ ref('{name}') }}}}\""
    )


def refuse_python_model(macro_name: str, context: Mapping[str, Any] | None) -> None:
    """Raise the message when the show task is about to wrap a Python model's code."""
    if macro_name != SHOW_MACRO or not context:
        return
    model = context.get("model")
    if isinstance(model, Mapping) and model.get("language") == "python":
        raise DbtRuntimeError(python_model_message(model))
