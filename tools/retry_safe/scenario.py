"""Run dbt steps in a process of their own and print tables as JSON: for kill/retry scenarios.

    python -m retry_safe.scenario run <selector> <start> <end>
    python -m retry_safe.scenario steps [--keep-going] '<json list of steps>' [<table> ...]
    python -m retry_safe.scenario dump <table> [<table> ...]

`run` is what a scheduler's task does (and what a test kills with SIGKILL). `steps` runs a list
of steps in one process, each `["seed"]`, `[selector, start, end]` (dbt run), `["build",
selector, start, end]` (dbt build: the models' tests too, and audited models published only once
they pass), `["full-refresh", selector, start, end]` (dbt run --full-refresh: the tables
rebuilt, a Delta table replaced in one commit), `["retry"]` (dbt retry: what the last
invocation's run_results.json left to do), `["sql", <statement>]` (one statement on the target's
session, outside dbt: a fix of a source), `["maintain", selector]` (the package's `lakehouse
maintain`, in this process), `["catchup", selector, since, until]` (the package's `lakehouse
catchup`, in this process: the window's intervals the ledger lacks, each run once) or `["barrier", <folder>, <n>]` (start the session, then wait until
n processes reached the barrier: concurrent runs start together), printing a STEP line per step;
`--keep-going` goes on after a failed step.
It then dumps the tables named after the steps. `dump` prints each table's rows, columns and
commit history, and the schema's relations, as one JSON line starting with DUMP.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from dbt_common.tests import enable_test_caching

from retry_safe.project import configure_environment, interval_flags, run_dbt, table_format
from retry_safe.tables import dump_tables


def command(
    plan: list[list[str]], tables: Sequence[str] = (), keep_going: bool = False
) -> list[str]:
    """The command line that runs `steps` on plan in a process of its own."""
    options = ["--keep-going"] if keep_going else []
    return [
        sys.executable,
        "-m",
        "retry_safe.scenario",
        "steps",
        *options,
        json.dumps(plan),
    ] + list(tables)


def run(
    selector: str,
    start: str,
    end: str,
    target: str | None = None,
    dbt_command: str = "run",
    options: Sequence[str] = (),
) -> None:
    """One scheduler task: the interval as event-time flags (a later step of the same process
    keeps dbt's partial parsing); dbt_command "build" runs the models' tests too; options are
    more of dbt's flags (--full-refresh); the vars SCENARIO_VARS holds (JSON), if any."""
    target = target or os.environ.get("DBT_TARGET", "local")
    run_dbt(
        [dbt_command, "--select", selector, *options, *interval_flags(start, end)],
        target,
        scenario_vars(),
    )


def scenario_vars() -> dict | None:
    """dbt's --vars for every step: the JSON in SCENARIO_VARS, if set."""
    text = os.environ.get("SCENARIO_VARS")
    return json.loads(text) if text else None


def barrier(folder: str, parties: int) -> None:
    """Start the session, then wait until `parties` processes have reached this barrier."""
    run_dbt(["debug"], os.environ.get("DBT_TARGET", "local"))
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / str(os.getpid())).touch()
    while len(list(Path(folder).iterdir())) < parties:
        time.sleep(0.01)


def steps(plan: list[list[str]], keep_going: bool = False) -> bool:
    """Run the steps in order and print one STEP line each; False if any failed.

    Without keep_going the first failure raises with dbt's error text. The steps pass their
    interval as event-time flags, so a step after the first keeps dbt's partial parsing; the
    parsed Jinja templates are kept between the steps too, as dbt Labs' test fixtures keep them
    (a scheduler's task runs one dbt command per process).
    """
    enable_test_caching()
    target = os.environ.get("DBT_TARGET", "local")
    all_passed = True
    for step in plan:
        if step[0] == "barrier":
            barrier(step[1], int(step[2]))
            continue
        try:
            if step == ["seed"]:
                run_dbt(["seed"], target)
            elif step == ["retry"]:
                run_dbt(["retry"], target)
            elif step[0] == "sql":
                session(target).sql(step[1]).collect()
            elif step[0] == "maintain":
                maintain(step[1], target)
            elif step[0] == "catchup":
                catchup(*step[1:], target=target)
            elif step[0] == "build":
                run(*step[1:], target=target, dbt_command="build")
            elif step[0] == "full-refresh":
                run(*step[1:], target=target, options=["--full-refresh"])
            else:
                run(*step, target=target)
        except AssertionError as failure:
            if not keep_going:
                raise
            all_passed = False
            print("STEP " + json.dumps({"step": step, "ok": False, "error": str(failure)}))
        else:
            print("STEP " + json.dumps({"step": step, "ok": True}))
    return all_passed


def maintain(selector: str, target: str) -> None:
    """`lakehouse maintain --select selector` in this process (its dbt shares the session)."""
    lakehouse("maintain", selector, target)


def catchup(selector: str, since: str, until: str, target: str) -> None:
    """`lakehouse catchup --select selector` over [since, until) in this process; its report
    lines go to standard output."""
    lakehouse("catchup", selector, target, "--since", since, "--until", until)


def lakehouse(command: str, selector: str, target: str, *options: str) -> None:
    """The package's `lakehouse <command> --select selector` in this process, with the vars
    SCENARIO_VARS holds; a failure raises."""
    from dbt.adapters.lakehouse.commands import cli

    extra = ["--vars", os.environ["SCENARIO_VARS"]] if os.environ.get("SCENARIO_VARS") else []
    status = cli.main([command, "--select", selector, *options, "--target", target, *extra])
    if status != 0:
        raise AssertionError(f"lakehouse {command} --select {selector} ended with {status}")


def session(target: str):
    """The target's Spark session, as dbt opens it (`dbt debug` writes no run results): the
    server targets' Spark Connect session, else the embedded one."""
    from dbt.adapters.lakehouse.session.connect import open_session

    run_dbt(["debug"], target)
    spark = open_session()
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
    return spark


def dump(tables: list[str]) -> None:
    target = os.environ.get("DBT_TARGET", "local")
    spark = session(target)
    schema = os.environ.get("LAKEHOUSE_SCHEMA", "analytics")
    print("DUMP " + json.dumps(dump_tables(spark, schema, tables, table_format(target))))


def main(argv: list[str]) -> int:
    configure_environment()
    if argv[:1] == ["run"] and len(argv) == 4:
        run(*argv[1:])
    elif argv[:1] == ["steps"] and len(argv) >= 2:
        keep_going = argv[1] == "--keep-going"
        rest = argv[2:] if keep_going else argv[1:]
        passed = steps(json.loads(rest[0]), keep_going)
        if rest[1:]:
            dump(rest[1:])
        return 0 if passed else 1
    elif argv[:1] == ["dump"] and len(argv) > 1:
        dump(argv[1:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
