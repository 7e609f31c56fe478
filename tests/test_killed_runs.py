"""Reference document 004: a run killed (SIGKILL) while its MERGE is being written, then rerun.

Each step runs in a process of its own, as a scheduler's task would, against a warehouse of its
own (the embedded Derby metastore admits one process at a time).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from retry_safe.project import PROJECT_DIR, run_module

# test_orders.ORDERS as text: the table a clean run of both days leaves.
ORDERS = [
    ["1001", "C01", "shipped", "25.50", "EUR", "2026-10-01 09:15:00", "2026-10-02 08:00:00"],
    ["1002", "C02", "cancelled", "12.00", "EUR", "2026-10-01 10:02:00", "2026-10-03 09:00:00"],
    ["1004", "C01", "shipped", "40.00", "EUR", "2026-10-02 12:45:00", "2026-10-04 08:30:00"],
    ["1005", "C09", "cancelled", "8.75", "EUR", "2026-10-03 14:10:00", "2026-10-04 10:00:00"],
    ["1006", "C02", "shipped", "19.90", "EUR", "2026-10-04 11:20:00", "2026-10-04 16:45:00"],
]
MERGE_MARKER = "merge into analytics.orders as target"


def step_env(home: Path, target: str) -> dict[str, str]:
    return {
        **os.environ,
        "LAKEHOUSE_HOME": str(home),
        "LAKEHOUSE_SCHEMA": "analytics",
        "DBT_TARGET": target,
        "DBT_LOG_PATH": str(home / "logs"),
    }


def step(
    env: dict[str, str], *args: str, kill_at: str | None = None
) -> subprocess.CompletedProcess | str:
    if kill_at is None:
        return run_module(["retry_safe.scenario", *args], env, timeout=900)
    command = [sys.executable, "-m", "retry_safe.scenario", *args]
    log = Path(env["DBT_LOG_PATH"]) / "dbt.log"
    offset = log.stat().st_size if log.exists() else 0
    process = subprocess.Popen(
        command,
        cwd=PROJECT_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if log.exists():
                with log.open() as handle:
                    handle.seek(offset)
                    if kill_at in handle.read():
                        os.killpg(process.pid, signal.SIGKILL)
                        process.wait()
                        return "killed"
            time.sleep(0.05)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return f"not killed: exit {process.returncode}"


def dump(env: dict[str, str]) -> dict:
    done = step(env, "dump", "orders")
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("DUMP "))
    return json.loads(line.removeprefix("DUMP "))


@pytest.mark.slow
def test_merge_killed_mid_write_then_rerun_equals_a_clean_run(tmp_path, target, table_format):
    env = step_env(tmp_path / "lakehouse", target)
    first = step(env, "run", "path:models/orders", "2026-10-03", "2026-10-04")
    assert first.returncode == 0, first.stderr[-3000:]

    assert (
        step(env, "run", "path:models/orders", "2026-10-04", "2026-10-05", kill_at=MERGE_MARKER)
        == "killed"
    )
    rerun = step(env, "run", "path:models/orders", "2026-10-04", "2026-10-05")
    assert rerun.returncode == 0, rerun.stderr[-3000:]

    orders = dump(env)["orders"]
    assert orders["rows"] == ORDERS
    assert len({row[0] for row in orders["rows"]}) == len(orders["rows"]), "duplicate order_id"
    # Every commit is a whole statement: the first load's create, then MERGEs only; a killed
    # MERGE left no partial commit behind.
    first_commit, *later = orders["history"]
    if table_format == "delta":
        assert first_commit == "CREATE OR REPLACE TABLE AS SELECT"
        assert set(later) <= {"MERGE"} and 1 <= len(later) <= 2
    else:
        # Iceberg: the atomic create-as-select and each copy-on-write MERGE commit one
        # snapshot each ("overwrite"; a create may also record "append").
        assert first_commit in {"append", "overwrite"}
        assert set(later) <= {"overwrite"} and 1 <= len(later) <= 2
