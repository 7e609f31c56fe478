"""Two runs of one model at the same time against one table: the same interval, and overlapping
intervals.

The embedded Derby metastore admits one process, so the two writers share a Derby network server
(retry_safe.metastore) as they would share a Hive metastore in production. The first process
loads the setup while the second starts its session; both meet at a barrier, then run the same
steps together. Each run either commits or fails with the table format's own conflict error; the
failed steps are rerun afterwards, and the tables must then hold exactly the documents' rows: an
additive batch applied once, every cart day once.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.processes import step_env

from retry_safe.metastore import derby_network_server
from retry_safe.project import PROJECT_DIR
from retry_safe.scenario import command

CART = "retail_daily_product_cart_abandonment"
SETUP = [
    ["seed"],
    ["customer_balances_additive", "2026-11-01", "2026-11-02"],
    [CART, "2026-01-01", "2026-01-02"],
]
# The same additive batch twice at once, then two overlapping intervals of the cart model.
CONCURRENT = [
    [
        ["customer_balances_additive", "2026-11-02", "2026-11-03"],
        [CART, "2026-01-01", "2026-01-03"],
    ],
    [
        ["customer_balances_additive", "2026-11-02", "2026-11-03"],
        [CART, "2026-01-02", "2026-01-04"],
    ],
]
# The documents' tables, as text: Ben's 200 plus batch 2's 25 once (applied batches 1 and 2);
# the cart days 1 to 3.
ADDITIVE = [
    ["1", "Ada", "100", "1", "False", "1", "[1]"],
    ["2", "Ben", "225", "2", "False", "2", "[1, 2]"],
    ["3", "Cyd", "300", "1", "False", "1", "[1]"],
]
CART_ROWS = [
    ["2026-01-01", "P1", "Trail Shoe", "footwear", "3", "1", "2", "0.6667"],
    ["2026-01-01", "P2", "Rain Jacket", "outerwear", "1", "0", "1", "1.0000"],
    ["2026-01-01", "P3", "Wool Socks", "accessories", "1", "1", "0", "0.0000"],
    ["2026-01-02", "P1", "Trail Shoe", "footwear", "2", "1", "1", "0.5000"],
    ["2026-01-02", "P2", "Rain Jacket", "outerwear", "3", "2", "1", "0.3333"],
    ["2026-01-03", "P1", "Trail Shoe", "footwear", "1", "1", "0", "0.0000"],
    ["2026-01-03", "P3", "Wool Socks", "accessories", "3", "0", "3", "1.0000"],
]
# What each format raises when another writer committed first.
CONFLICTS = {
    "delta": ("DELTA_CONCURRENT_", "ConcurrentAppendException", "ConcurrentDeleteReadException"),
    "iceberg": ("CommitFailedException", "ValidationException", "Found conflicting files"),
}


def scenario(
    env: dict[str, str], plan: list, dump: list[str] = (), log: str = "logs"
) -> subprocess.Popen:
    return subprocess.Popen(
        command(plan, dump, keep_going=True),
        cwd=PROJECT_DIR,
        env={**env, "DBT_LOG_PATH": str(Path(env["LAKEHOUSE_HOME"]) / log)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def outcomes(process: subprocess.Popen) -> tuple[list[dict], dict]:
    out, err = process.communicate(timeout=900)
    steps = [json.loads(x[5:]) for x in out.splitlines() if x.startswith("STEP ")]
    dumps = [json.loads(x[5:]) for x in out.splitlines() if x.startswith("DUMP ")]
    assert steps or dumps, err[-3000:]
    return steps, (dumps[0] if dumps else {})


@pytest.mark.slow
def test_concurrent_runs_commit_or_conflict_and_never_duplicate(tmp_path, target, table_format):
    home = tmp_path / "lakehouse"
    with derby_network_server(tmp_path / "derby") as metastore:
        env = step_env(
            **metastore,
            LAKEHOUSE_HOME=str(home),
            LAKEHOUSE_SCHEMA="analytics",
            DBT_TARGET=target,
            LAKEHOUSE_HIVE_LOCKS="true",
        )
        # The first writer loads the setup while the second starts its session; both then
        # meet at the barrier and run their steps together.
        barrier = str(tmp_path / "barrier")
        waits = [["barrier", barrier, 2]]
        plans = [[*SETUP, *waits, *CONCURRENT[0]], [*waits, *CONCURRENT[1]]]
        writers = [scenario(env, plan, log=f"logs{n}") for n, plan in enumerate(plans)]
        first, second = [outcomes(writer)[0] for writer in writers]
        setup, results = first[: len(SETUP)], [first[len(SETUP) :], second]
        assert all(step["ok"] for step in setup), setup

        failed = [step for steps in results for step in steps if not step["ok"]]
        for step in failed:
            assert any(name in step["error"] for name in CONFLICTS[table_format]), step["error"][
                -3000:
            ]
        rerun, tables = outcomes(
            scenario(env, [step["step"] for step in failed], [CART, "customer_balances_additive"])
        )
        assert all(step["ok"] for step in rerun), rerun

    assert tables["customer_balances_additive"]["rows"] == ADDITIVE
    assert tables[CART]["rows"] == CART_ROWS
