"""Runs killed with SIGKILL at three points of the incremental models, then rerun.

Reference document 004, for the whole project. The plan below loads every pipeline over two or
three intervals. Each killed step runs in a process of its own, as a scheduler's task would,
against a warehouse of its own: in `make test` in a bucket (S3Proxy, `retry_safe.s3`) with the
PostgreSQL metastore object storage needs, in `make soak` on local disk with the embedded Derby
metastore too (it admits one process at a time). Each is killed (the whole process group, JVM included) at one of three points of one model:

- `before`: when the model's change set is being computed, before its MERGE starts;
- `writing`: when the MERGE has written its first data file into the table folder but the
  table has no new commit yet (the process is frozen with SIGSTOP, the commit checked, then
  killed);
- `committed`: right after the table commit (the MERGE, or the first load's CREATE), before
  dbt records the model's success.

And two points of a `dbt build` of the audited orders (write-audit-publish), on the day the
table already exists:

- `staged` (`make soak`): right after the model's change was staged (an Iceberg branch; on
  Delta nothing written), before or while its tests run;
- `publishing`: in the on-run-end hook, as it starts the publishing write (Iceberg's
  fast-forward, Delta's MERGE).

The next process reruns the killed step, then runs on to the next kill; the Python cart
model's killed interval is run again by `lakehouse catchup` over its whole window instead, as a
scheduler's catch-up after an outage would: it finds exactly the killed days missing from the
interval ledger. At the end, every table must hold exactly the reference documents' rows for the
intervals of the plan (the same rows the pipelines' own tests expect), with no duplicate keys, a
last catch-up of the cart and balance windows must find nothing missing (every interval in the
ledger once, the killed ones included), and the schema must hold exactly the plan's relations: no
staging relation of a killed run may be left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from support.expected import as_text
from support.passes import SOAK
from support.pipelines import F1_STEP, ORDERS_STEP, PLAN, SEEDS, TABLES, columns_of
from support.processes import step_env

from retry_safe.project import PROJECT_DIR
from retry_safe.s3 import BUCKET
from retry_safe.scenario import command

CART = "retail_daily_product_cart_abandonment"


@dataclass(frozen=True)
class Kill:
    step: tuple[str, ...]  # the PLAN step killed
    model: str
    point: str  # before | writing | committed | staged | publishing


# Every incremental model once; each point on SQL and on Python models (`make soak`).
ALL_KILLS = [
    Kill((CART, "2026-01-02", "2026-01-04"), CART, "before"),
    Kill((f"{CART}_df", "2026-01-02", "2026-01-04"), f"{CART}_df", "writing"),
    # the first load's CREATE
    Kill((ORDERS_STEP, "2026-10-03", "2026-10-04"), "rejected_orders", "committed"),
    # audited: on Delta the publish's MERGE, on Iceberg the MERGE into its branch
    Kill(("build", ORDERS_STEP, "2026-10-04", "2026-10-05"), "orders", "writing"),
    Kill((F1_STEP, "2026-11-02", "2026-11-03"), "f1_drivers_merge_df", "before"),
    Kill((F1_STEP, "2026-11-03", "2026-11-04"), "f1_drivers_merge", "committed"),
    Kill(
        ("customer_balances_versioned", "2026-11-02", "2026-11-03"),
        "customer_balances_versioned",
        "writing",
    ),
    # applied twice would be wrong
    Kill(
        ("customer_balances_additive", "2026-11-02", "2026-11-03"),
        "customer_balances_additive",
        "committed",
    ),
]
# The orders file of October 4 as `dbt build`: the audited orders killed once staged and once
# as the publish starts (the "writing" kill above lands in its MERGE: on Delta
# the publish's, on Iceberg the branch's).
AUDITED_STEP = ("build", ORDERS_STEP, "2026-10-04", "2026-10-05")
PLAN = [list(AUDITED_STEP) if step == list(AUDITED_STEP[1:]) else step for step in PLAN]
ALL_KILLS[4:4] = [
    Kill(AUDITED_STEP, "orders", "staged"),
    Kill(AUDITED_STEP, "orders", "publishing"),
]
# `make test`: a Python model while writing (its rows staged in a temporary view), the audited
# orders' publish, and the additive balances' first load right after its CREATE committed (a
# first load's commit, and a batch that must not be applied twice: its rerun finds batch 1
# applied, with no ledger entry of the killed run): every row of the fault table about killed
# runs (docs/guarantees.md) but the SQL model killed before its MERGE (nothing written, as the
# audited kill once staged on Delta) and a kill after a MERGE's commit (the same rerun as after
# a CREATE's), which `make soak` runs. 4 processes instead of 11, over the plan's steps these
# kills need (the Python cart model's days, the two orders files, the additive balance
# batches). `make soak` runs the whole plan and kills every incremental model, and the audited
# build at its three points.
FIRST_ADDITIVE = Kill(
    ("customer_balances_additive", "2026-11-01", "2026-11-02"),
    "customer_balances_additive",
    "committed",
)
KILLS = ALL_KILLS if SOAK else [ALL_KILLS[1], ALL_KILLS[5], FIRST_ADDITIVE]
EXPECTED = dict(TABLES)
if not SOAK:
    KEPT = ("seed", f"{CART}_df", "customer_balances_additive", "build")
    PLAN = [
        step
        for step in PLAN
        if step[0] in KEPT or step == [ORDERS_STEP, "2026-10-03", "2026-10-04"]
    ]
    EXPECTED = {
        table: expected
        for table, expected in TABLES.items()
        if table in (f"{CART}_df", "orders", "rejected_orders", "customer_balances_additive")
    }
# The killed cart days run again by a catch-up over the model's window, not by their step; the
# last process's catch-ups find nothing missing.
CATCHUP = {
    (f"{CART}_df", "2026-01-02", "2026-01-04"): [
        "catchup",
        f"{CART}_df",
        "2026-01-01",
        "2026-01-04",
    ]
}
NOTHING_MISSING = [
    ["catchup", f"{CART}_df", "2026-01-01", "2026-01-04"],
    ["catchup", "customer_balances_additive", "2026-11-01", "2026-11-03"],
]
# The schema afterwards: the seeds and the plan's models, nothing else.
RELATIONS = sorted([*SEEDS, "retail_session_products", "stg_order_change_lines", *EXPECTED])


def invocations(step: list[str]) -> int:
    """The dbt invocations a step of a killed run's plan makes: one, or for a catch-up one per
    day of the killed interval it loads again (the test checks it loads exactly those)."""
    killed = next((k for k, caught_up in CATCHUP.items() if caught_up == step), None)
    if killed is None:
        return 1
    return (date.fromisoformat(killed[2]) - date.fromisoformat(killed[1])).days


class Scenario:
    """A warehouse of its own, and steps run in processes of their own."""

    def __init__(
        self, home: Path, target: str, table_format: str, storage: dict | None = None
    ) -> None:
        self.table_format = table_format
        self.warehouse = home / table_format / "warehouse" / "analytics.db"
        self.log = home / "logs" / "dbt.log"
        self.env = step_env(
            LAKEHOUSE_HOME=str(home),
            LAKEHOUSE_SCHEMA="analytics",
            DBT_TARGET=target,
            DBT_LOG_PATH=str(home / "logs"),
        )
        if storage is not None:
            # the bucket's objects are files of the S3 server's folder: the kills watch them
            self.warehouse = storage.pop("objects") / "analytics.db"
            self.env.update(storage)
            self.env.pop("LAKEHOUSE_METASTORE_CLASSPATH", None)  # the one `lakehouse jars` put

    def run(self, plan: list[list[str]], dump: list[str]) -> tuple[dict, str]:
        """The steps in one process: the dump of the tables, and the process's output."""
        done = subprocess.run(
            command(plan, dump),
            cwd=PROJECT_DIR,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        line = next(x for x in done.stdout.splitlines() if x.startswith("DUMP "))
        return json.loads(line.removeprefix("DUMP ")), done.stdout

    def files(self, model: str) -> tuple[set[str], set[str]]:
        """(data files, commit files) of a table folder."""
        data, commits = set(), set()
        for path in (self.warehouse / model).rglob("*"):
            if path.suffix == ".json" and path.parent.name in {"_delta_log", "metadata"}:
                commits.add(str(path))
            elif path.name.endswith(".parquet") and "_delta_log" not in path.parts:
                data.add(str(path))
        return data, commits

    def markers(self, kill: Kill) -> list[str]:
        relation = f"analytics.{kill.model}"
        if kill.point == "staged":
            # the model's report line (Delta: its view; Iceberg: its branch)
            return [
                f"staged for audit in {kill.model}__dbt_audit,",
                f"in {relation}.branch_dbt_audit_",
            ]
        if kill.point == "publishing":
            # the on-run-end hook's write: Iceberg's fast-forward, or the model's ledger entry
            # set for Delta's MERGE (the JSON ends with the model; the stages write nothing, and
            # the staged parents published before it, stg_order_change_lines, set their own)
            if self.table_format == "iceberg":
                return [f"fast_forward('{relation}'"]
            return [f'"model": "model.retry_safe.{kill.model}"}}']
        if kill.point == "before":
            return [f"computed once into the temporary view {kill.model}__dbt_changes"]
        if kill.point == "writing":
            return [f"merge into {relation} as target", f"merge into {relation}.branch_dbt_audit_"]
        # the report's query, which runs only after a commit (a MERGE, or a first load's CREATE)
        return [f"describe history {relation} limit 1", f"from {relation}.snapshots"]

    def kill_while_writing(self, process: subprocess.Popen, kill: Kill) -> str:
        """Freeze the process as its MERGE starts, then let it run in 10 ms slices until a data
        file of the MERGE appears; kill it there and say whether the table had a new commit."""
        os.killpg(process.pid, signal.SIGSTOP)
        data_before, commits_before = self.files(kill.model)
        while process.poll() is None:
            data, commits = self.files(kill.model)
            if data - data_before:
                landed = "writing" if commits == commits_before else "after the commit"
                os.killpg(process.pid, signal.SIGKILL)
                return landed
            os.killpg(process.pid, signal.SIGCONT)
            time.sleep(0.01)
            os.killpg(process.pid, signal.SIGSTOP)
        return f"finished without writing: exit {process.returncode}"

    def marker_in_last_step(self, text: str, plan: list[list[str]], kill: Kill) -> bool:
        """Whether the plan's last step (the killed model's interval) has logged the kill's
        marker: an earlier step of the same model in this process must not be taken for it
        (the orders' `dbt run` before the audited build logs the publish's ledger entry too)."""
        last = -1
        for _ in range(sum(invocations(step) for step in plan)):
            last = text.find("Running with dbt=", last + 1)
            if last < 0:
                return False
        return any(marker in text[last:] for marker in self.markers(kill))

    def run_until_killed(self, plan: list[list[str]], kill: Kill, output: Path) -> str:
        """Run the steps (their standard output into the file output), kill at the point;
        returns where the kill landed."""
        position = self.log.stat().st_size if self.log.exists() else 0
        with output.open("w") as out:
            process = subprocess.Popen(
                command(plan),
                cwd=PROJECT_DIR,
                env=self.env,
                stdout=out,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        text = ""
        deadline = time.monotonic() + 600
        try:
            while time.monotonic() < deadline and process.poll() is None:
                appended = ""
                if self.log.exists():
                    with self.log.open() as handle:
                        handle.seek(position)
                        appended = handle.read()
                        position = handle.tell()
                text += appended
                if appended and self.marker_in_last_step(text, plan, kill):
                    if kill.point != "writing":
                        os.killpg(process.pid, signal.SIGKILL)
                        return kill.point
                    return self.kill_while_writing(process, kill)
                time.sleep(0.01)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        return f"not killed: exit {process.returncode}"


@pytest.mark.slow
@pytest.mark.parametrize("storage", ["local", "s3"] if SOAK else ["s3"])
def test_runs_killed_at_every_point_then_rerun_leave_the_documents_tables(
    tmp_path, target, table_format, storage, request
):
    on_s3 = None
    if storage == "s3":
        # the warehouse in a bucket, the metastore on PostgreSQL (what object storage needs)
        folder, s3 = request.getfixturevalue("s3_store")
        metastore = request.getfixturevalue("fresh_metastore")[2]  # initialized
        prefix = f"killed-{table_format}"
        on_s3 = {
            **s3,
            **metastore,
            "LAKEHOUSE_WAREHOUSE": f"s3a://{BUCKET}/{prefix}",
            "objects": folder / "data" / BUCKET / prefix,
        }
    scenario = Scenario(tmp_path / "lakehouse", target, table_format, on_s3)
    first, rerun, caught_up = 0, PLAN[0], []
    for number, kill in enumerate(KILLS):
        step = PLAN.index(list(kill.step))
        output = tmp_path / f"process-{number}.out"
        landed = scenario.run_until_killed([rerun, *PLAN[first + 1 : step + 1]], kill, output)
        assert landed == kill.point, f"{kill}: {landed}"
        if rerun in CATCHUP.values():
            caught_up = [x for x in output.read_text().splitlines() if x.endswith("elapsed")]
        # the next process starts by running the killed step again (or catching its days up)
        first, rerun = step, CATCHUP.get(kill.step, PLAN[step])
    # the catch-up after the killed cart interval ran exactly its two days, each once
    assert [line.split(" loaded")[0] for line in caught_up] == [
        "lakehouse catchup: interval 1 of 2 [2026-01-02, 2026-01-03)",
        "lakehouse catchup: interval 2 of 2 [2026-01-03, 2026-01-04)",
    ]
    result, output = scenario.run([rerun, *PLAN[first + 1 :], *NOTHING_MISSING], list(EXPECTED))

    for table, (columns, rows, keys) in EXPECTED.items():
        assert columns_of(result[table], columns) == as_text(rows), table
        found = [tuple(row) for row in columns_of(result[table], keys)]
        assert len(set(found)) == len(found), f"{table}: duplicate keys"
    # Every interval in the ledger once: the catch-ups run nothing.
    assert [line for line in output.splitlines() if line.startswith("lakehouse catchup")] == [
        f"lakehouse catchup: nothing missing in [{since}, {until}): no run, nothing written"
        for _, _, since, until in NOTHING_MISSING
    ]
    # No staging relation is left: a killed Python model's rows were a view of its session.
    assert result["relations"] == RELATIONS
    if on_s3 is not None:  # every table in the bucket, none on local disk
        assert {p.name for p in scenario.warehouse.iterdir()} >= set(EXPECTED)
        assert not list((tmp_path / "lakehouse").glob("*/warehouse/**/*.parquet"))
