"""What a user sees: dbt's own lines, nothing from the JVM (no dependency resolution report, no
Java warnings, no Spark/Hive/DataNucleus logging below ERROR)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import pytest
from support.processes import step_env

from dbt.adapters.lakehouse.session.jvm import filtered_child_output
from retry_safe.project import run_module

# What reaches the console is the JVM's logging and the filter: one pass runs these, the Delta
# one, where replacing a Delta table (a table model's rerun, a full refresh) once logged a
# metastore ERROR and a stack trace (session_settings.py). A new Iceberg project's console is
# the wheel-install test's.
pytestmark = pytest.mark.format_independent(run_in="local")

DBT_LINE = re.compile(r"^(\x1b\[0m)?\d\d:\d\d:\d\d  ")
REPORT_LINE = re.compile(r"^[\w.]+ \(delta\): \d+ files, ")


def read_stderr_until(capfd: pytest.CaptureFixture[str], last: str, timeout: float = 10) -> str:
    """Everything written to fd 2 until `last` appears (the filter thread forwards it)."""
    seen = ""
    deadline = time.monotonic() + timeout
    while last not in seen and time.monotonic() < deadline:
        seen += capfd.readouterr().err
        time.sleep(0.05)
    return seen


def test_the_filter_drops_only_the_incubator_warning_and_vacuums_lines(capfd):
    # standard output first, flushed before standard error: both reach the filter's pipe
    script = (
        "import sys; sys.stdout.write("
        "'Deleted 0 files and directories in a total of 1 directories.\\n"
        "Deleted 3 files (4,096 bytes) and directories in a total of 2 directories.\\n"
        "Found 2 files (10 bytes) and directories in a total of 1 directories that are safe "
        "to delete.\\n"
        "a line on standard output\\n'); sys.stdout.flush(); sys.stderr.write("
        "'WARNING: Using incubator modules: jdk.incubator.vector\\n"
        "12:00:00 ERROR HiveAlterHandler: a real problem\\n"
        "WARNING: something else\\n"
        "the end')"
    )
    with filtered_child_output():
        child = subprocess.Popen([sys.executable, "-c", script])
    assert child.wait(timeout=60) == 0
    assert read_stderr_until(capfd, "the end") == (
        "a line on standard output\n"
        "12:00:00 ERROR HiveAlterHandler: a real problem\nWARNING: something else\nthe end"
    )
    # this process's own standard output and error are the real ones again
    print("after the block", file=sys.stderr)
    print("and on standard output")
    assert capfd.readouterr() == ("and on standard output\n", "after the block\n")


# An ERROR line (log4j's `00:05:18 ERROR HiveAlterHandler: ...`, or dbt's `1 of 3 ERROR ...`)
# or a Java stack trace: none may appear in a successful run's output.
TROUBLE = re.compile(r" ERROR |^\s+at [\w$.]+\(|^Caused by: ")


@pytest.mark.slow
def test_dbt_runs_print_only_dbt_lines(tmp_path, target):
    """A fresh process: JVM start, metastore creation, seeds, one incremental model, the orders
    pipeline twice (its Python model's first load and MERGE), then a full refresh of the
    incremental model, which replaces its table (on Delta that logged a metastore ERROR with a
    Java stack trace: session_settings.py)."""
    env = step_env(
        DBT_TARGET=target,
        LAKEHOUSE_HOME=str(tmp_path / "lakehouse"),
        LAKEHOUSE_SCHEMA="console",
    )
    plan = [
        ["seed"],
        ["retail_daily_product_cart_abandonment", "2026-01-01", "2026-01-04"],
        ["path:models/order_changes", "2026-10-03", "2026-10-04"],
        ["path:models/order_changes", "2026-10-04", "2026-10-05"],
        ["full-refresh", "retail_daily_product_cart_abandonment", "2026-01-01", "2026-01-04"],
        # Delta's VACUUM printed a line per table on the JVM's standard output
        ["maintain", "retail_daily_product_cart_abandonment"],
    ]
    done = run_module(["retry_safe.scenario", "steps", json.dumps(plan)], env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    output = done.stdout.splitlines() + done.stderr.splitlines()
    assert [line for line in output if TROUBLE.search(line)] == []
    assert done.stderr == ""
    # lakehouse maintain's report, a line per table (the model's and the interval ledger)
    report = [line for line in done.stdout.splitlines() if REPORT_LINE.match(line)]
    assert [line.split(":")[0] for line in report] == [
        "console.retail_daily_product_cart_abandonment (delta)",
        "lakehouse.interval_ledger (delta)",
    ]
    others = [
        line
        for line in done.stdout.splitlines()
        if not DBT_LINE.match(line) and not line.startswith("STEP ") and line not in report
    ]
    assert others == []
    # the cart model's first load, then its full refresh
    cart = "OK created sql incremental model console.retail_daily_product_cart_abandonment"
    assert done.stdout.count(cart) == 2
    # the staging model loaded day 1, then merged day 2
    created = "OK created python incremental model console.stg_order_change_lines"
    assert done.stdout.count(created) == 2
