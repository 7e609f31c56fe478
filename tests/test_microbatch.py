"""dbt's microbatch on the lakehouse adapter: every batch is an interval for idempotent_merge.

A batch that fails (its input malformed) leaves its interval untouched while the other batches
commit; `dbt retry` then runs that batch alone. The microbatch twin of a reference pipeline
gives the same table as its idempotent_merge twin over the same days, in any order, with reruns.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from dbt.cli.main import dbtRunner
from dbt_common.invocation import get_invocation_id
from support.passes import SOAK
from support.processes import step_env
from support.tables import rows

from retry_safe.project import configure_environment, describe_failure, interval_vars, run_dbt
from retry_safe.scratch import write_project
from retry_safe.tables import commits

EVENTS_CSV = """\
id,event_date,amount
1,2026-11-01,10
2,2026-11-01,20
3,2026-11-02,30
4,2026-11-02,40
5,2026-11-03,50
"""
EVENTS_YML = """\
version: 2
seeds:
  - name: events
    config:
      event_time: event_date
      column_types: {id: int, event_date: date, amount: int}
"""
DAILY_AMOUNTS = """\
{{ config(
    materialized='incremental',
    incremental_strategy='microbatch',
    event_time='event_date',
    batch_size='day',
    begin='2026-11-01',
    unique_key='id',
) }}
-- dbt filters ref('events') to the batch (the seed's event_time)
select id, event_date, amount from {{ ref('events') }}
"""
THREE_DAYS = ["--event-time-start", "2026-11-01", "--event-time-end", "2026-11-04"]


def events_project(root: Path, model: str = DAILY_AMOUNTS) -> Path:
    return write_project(
        root,
        {"daily_amounts.sql": model},
        seeds={"events.csv": EVENTS_CSV, "events.yml": EVENTS_YML},
    )


def day(n: int) -> datetime:
    """Midnight of 2026-11-n as Spark returns a timestamp column (session time zone UTC)."""
    return datetime(2026, 11, n)


def batch(n: int) -> tuple[datetime, datetime]:
    """dbt's batch for the day 2026-11-n: [midnight, next midnight) in UTC."""
    return (datetime(2026, 11, n, tzinfo=UTC), datetime(2026, 11, n + 1, tzinfo=UTC))


class Messages:
    """A dbtRunner callback keeping every logged message (a failed batch's error is only logged)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, event) -> None:
        self.texts.append(event.info.msg)

    def __str__(self) -> str:
        return "\n".join(self.texts)


def test_a_failed_batch_leaves_its_day_untouched_and_dbt_retry_runs_it_alone(
    spark, target, schema, table_format, tmp_path, json_artifacts
):
    root = events_project(tmp_path / "events")
    table = f"{schema}.daily_amounts"
    columns = ["id", "event_date", "amount"]
    run_dbt(["seed"], target, project_dir=root)
    run_dbt(["run", *THREE_DAYS], target, project_dir=root)
    assert rows(spark, table, columns) == [
        (1, date(2026, 11, 1), 10),
        (2, date(2026, 11, 1), 20),
        (3, date(2026, 11, 2), 30),
        (4, date(2026, 11, 2), 40),
        (5, date(2026, 11, 3), 50),
    ]

    # New input: day 1 changes a row; day 2 changes a row but also gets a line without an id
    # (malformed); on day 3 row 5 vanished and 6 arrived.
    source = f"{schema}.events"
    spark.sql(f"update {source} set amount = 11 where id = 1")
    spark.sql(f"update {source} set amount = 31 where id = 3")
    spark.sql(f"insert into {source} values (null, date'2026-11-02', 99)")
    spark.sql(f"delete from {source} where id = 5")
    spark.sql(f"insert into {source} values (6, date'2026-11-03', 60)")

    messages = Messages()
    failed = run_dbt(
        ["run", *THREE_DAYS], target, project_dir=root, expect_pass=False, callbacks=[messages]
    )
    partial_id = get_invocation_id()
    (model_result,) = failed.result.results
    assert str(model_result.status) == "partial success"
    assert model_result.batch_results.failed == [batch(2)]
    assert sorted(model_result.batch_results.successful) == [batch(1), batch(3)]
    assert "Model model.scratch.daily_amounts" in str(messages), str(messages)
    assert "1 source row(s) have a NULL in the key (id)" in str(messages), str(messages)
    # days 1 and 3 committed (5 deleted from day 3 only); day 2 kept its rows: 3 is still 30
    assert rows(spark, table, columns) == [
        (1, date(2026, 11, 1), 11),
        (2, date(2026, 11, 1), 20),
        (3, date(2026, 11, 2), 30),
        (4, date(2026, 11, 2), 40),
        (6, date(2026, 11, 3), 60),
    ]

    # the input is fixed; dbt retry runs the failed batch only
    spark.sql(f"delete from {source} where id is null")
    configure_environment()
    retry_messages = Messages()
    retried = dbtRunner(callbacks=[retry_messages]).invoke(
        ["retry", "--project-dir", str(root), "--target-path", str(root / "target")]
    )
    assert retried.success, describe_failure(retried)
    retry_id = get_invocation_id()
    (retry_result,) = retried.result.results
    assert retry_result.batch_results.failed == []
    assert sorted(retry_result.batch_results.successful) == [batch(1), batch(2), batch(3)]
    started = [t for t in retry_messages.texts if "START batch" in t]
    assert len(started) == 1 and "Batch 1 of 1 START batch 2026-11-02" in started[0], started
    assert rows(spark, table, columns) == [
        (1, date(2026, 11, 1), 11),
        (2, date(2026, 11, 1), 20),
        (3, date(2026, 11, 2), 31),
        (4, date(2026, 11, 2), 40),
        (6, date(2026, 11, 3), 60),
    ]

    # the ledger: day 2 from the retry, days 1 and 3 from the partial run. The first run made
    # commits 0-2 (create day 1, days 2 and 3), the partial run 3 (day 1) and 4 (day 3), the
    # retry 5 (day 2).
    ids = [commit["version"] for commit in commits(spark, table, table_format)]
    label = "snapshot" if table_format == "iceberg" else "version"
    ledger = Messages()
    operation = ["run-operation", "lakehouse_intervals", "--args", "{model: daily_amounts}"]
    run_dbt(operation, target, project_dir=root, callbacks=[ledger])
    assert [t for t in ledger.texts if t.startswith("  ")] == [
        f"  loaded  [2026-11-01T00:00:00Z, 2026-11-02T00:00:00Z)  {label} {ids[3]}"
        f"  invocation {partial_id}",
        f"  loaded  [2026-11-02T00:00:00Z, 2026-11-03T00:00:00Z)  {label} {ids[5]}"
        f"  invocation {retry_id}",
        f"  loaded  [2026-11-03T00:00:00Z, 2026-11-04T00:00:00Z)  {label} {ids[4]}"
        f"  invocation {partial_id}",
    ]


# The killed run's own process: dbt build (seed, then the model's three batches) on its own
# warehouse (the embedded metastore admits one process at a time). The rerun's process prints
# the table before and after running the same command again.
KILLED_RUN = [
    "build", "--event-time-start", "2026-11-01", "--event-time-end", "2026-11-04",
]  # fmt: skip
RERUN = """\
import json, os, sys
from pyspark.sql import SparkSession
from retry_safe.project import run_dbt
root, target, command = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
table = os.environ["LAKEHOUSE_SCHEMA"] + ".daily_amounts"
run_dbt(["debug"], target, project_dir=root)
spark = SparkSession.builder.getOrCreate()
dump = lambda: [[r[0], str(r[1]), r[2]] for r in spark.sql(
    f"select id, event_date, amount from {table} order by id").collect()]
print("BEFORE " + json.dumps(dump()))
run_dbt(command, target, project_dir=root)
print("AFTER " + json.dumps(dump()))
"""


# dbt's own bookkeeping of a killed multi-batch run (its rerun runs every batch again), `make
# soak` only: each batch's commit is one idempotent_merge, killed on both formats by
# test_killed_runs.py, and batches run again after their commit are the twin test's below
@pytest.mark.skipif(not SOAK, reason="make soak: dbt killed between two batches")
def test_a_killed_multi_batch_run_rerun_ends_in_the_same_table(target, schema, tmp_path):
    root = events_project(tmp_path / "killed")
    env = step_env(LAKEHOUSE_HOME=str(tmp_path / "home"), LAKEHOUSE_SCHEMA=schema)
    dbt = [str(Path(sys.executable).parent / "dbt"), *KILLED_RUN]
    process = subprocess.Popen(
        [*dbt, "--project-dir", str(root), "--target", target],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen = []
    try:
        for line in process.stdout:
            seen.append(line)
            if "Batch 2 of 3 OK" in line:  # days 1 and 2 committed, day 3 not started
                os.killpg(process.pid, signal.SIGKILL)
                break
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL, "".join(seen)

    rerun = subprocess.run(
        [sys.executable, "-c", RERUN, str(root), target, json.dumps(KILLED_RUN)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    printed = {
        line.split(" ", 1)[0]: json.loads(line.split(" ", 1)[1])
        for line in rerun.stdout.splitlines()
        if line.startswith(("BEFORE ", "AFTER "))
    }
    assert printed["BEFORE"] == [
        [1, "2026-11-01", 10],
        [2, "2026-11-01", 20],
        [3, "2026-11-02", 30],
        [4, "2026-11-02", 40],
    ]
    # the same table as one uninterrupted run (the first test's first run)
    assert printed["AFTER"] == [
        [1, "2026-11-01", 10],
        [2, "2026-11-01", 20],
        [3, "2026-11-02", 30],
        [4, "2026-11-02", 40],
        [5, "2026-11-03", 50],
    ]


@pytest.mark.format_independent
def test_concurrent_batches_are_refused_before_anything_is_written(spark, target, schema, tmp_path):
    model = DAILY_AMOUNTS.replace(
        "unique_key='id',", "unique_key='id',\n    concurrent_batches=true,"
    )
    root = events_project(tmp_path / "concurrent", model)
    run_dbt(["seed"], target, project_dir=root)
    messages = Messages()
    run_dbt(["run", *THREE_DAYS], target, project_dir=root, expect_pass=False, callbacks=[messages])
    message = str(messages)
    assert "concurrent_batches: true is not supported" in message, message
    assert "model.scratch.daily_amounts" in message, message
    tables = [r["tableName"] for r in spark.sql(f"show tables in {schema}").collect()]
    assert "daily_amounts" not in tables


@pytest.mark.format_independent
def test_interval_vars_without_event_time_flags_are_refused(spark, target, schema, tmp_path):
    root = events_project(tmp_path / "vars")
    run_dbt(["seed"], target, project_dir=root)
    messages = Messages()
    variables = interval_vars("2026-11-01", "2026-11-02")
    run_dbt(["run"], target, variables, project_dir=root, expect_pass=False, callbacks=[messages])
    message = str(messages)
    assert "is a microbatch model" in message, message
    assert '--event-time-start "2026-11-01" --event-time-end "2026-11-02"' in message, message
    tables = [r["tableName"] for r in spark.sql(f"show tables in {schema}").collect()]
    assert "daily_amounts" not in tables


# f1_drivers over the days 3, 1, 2, 1 (each twin gets the same day in the same invocation):
# day 3 inserts 1-5 and 16-20; day 1 inserts 6-10 (1-5 are older than day 3: skipped); day 2
# upper-cases 6-10 (updated_date day 2, created_date stays day 1) and inserts 11-15; day 1
# again is older than every row it holds.
F1_ORDER = ["2026-11-03", "2026-11-01", "2026-11-02", "2026-11-01"]
F1_COLUMNS = ["driver_id", "surname", "batch_date", "created_date", "updated_date"]
SURNAMES = {
    1: "HAMILTON", 2: "HEIDFELD", 3: "ROSBERG", 4: "ALONSO", 5: "KOVALAINEN",
    6: "NAKAJIMA", 7: "BOURDAIS", 8: "RÄIKKÖNEN", 9: "KUBICA", 10: "GLOCK",
    11: "SATO", 12: "PIQUET JR.", 13: "MASSA", 14: "COULTHARD", 15: "TRULLI",
    16: "SUTIL", 17: "WEBBER", 18: "BUTTON", 19: "DAVIDSON", 20: "VETTEL",
}  # fmt: skip


def f1_expected() -> list[tuple]:
    expected = []
    for driver, surname in SURNAMES.items():
        if driver <= 5 or driver >= 16:
            expected.append((driver, surname, date(2026, 11, 3), day(3), None))
        elif driver <= 10:
            expected.append((driver, surname, date(2026, 11, 2), day(1), day(2)))
        else:
            expected.append((driver, surname, date(2026, 11, 2), day(2), None))
    return expected


def test_microbatch_twin_equals_its_idempotent_merge_twin_in_any_order(spark, target, schema):
    run_dbt(["seed", "--select", "f1_driver_batches"], target)
    for start in F1_ORDER:
        end = f"2026-11-{int(start[-2:]) + 1:02d}"
        run_dbt(
            [
                "run", "--select", "f1_drivers_merge", "f1_drivers_merge_microbatch",
                "--event-time-start", start, "--event-time-end", end,
            ],
            target,
            {"f1_drivers_microbatch": True},
        )  # fmt: skip
    merged = rows(spark, f"{schema}.f1_drivers_merge", F1_COLUMNS)
    microbatched = rows(spark, f"{schema}.f1_drivers_merge_microbatch", F1_COLUMNS)
    assert microbatched == f1_expected()
    assert merged == f1_expected()
