"""What a user reads when Spark refuses: the table format's own message, and one line when the
embedded metastore is taken (src/dbt/adapters/lakehouse/errors.py, metastore_lock.py)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.processes import step_env
from support.tables import rows

from retry_safe.project import PROJECT_DIR, describe_failure, interval_flags, run_dbt
from retry_safe.scratch import write_project

# A typo in merge_update_columns: dbt-spark's merge updates a column the table does not have.
TYPO_MODEL = """\
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='order_id',
          merge_update_columns=['state']) }}
select 1001 as order_id, 'shipped' as status
"""
# Each format's own words (Delta's come from its own error registry, not Spark's).
MESSAGES = {
    "delta": (
        "[DELTA_MERGE_UNRESOLVED_EXPRESSION] Cannot resolve state in UPDATE clause given "
        "columns DBT_INTERNAL_DEST.order_id, DBT_INTERNAL_DEST.status."
    ),
    "iceberg": (
        "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name "
        "`state` cannot be resolved. Did you mean one of the following? [`order_id`, `status`]. "
        "SQLSTATE: 42703"
    ),
}


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_merge_error_reaches_dbt_in_the_formats_own_words(
    spark, target, schema, table_format, tmp_path
):
    from pyspark.logger import PySparkLogger

    spark.sql(f"create schema if not exists {schema}")
    spark.sql(
        f"create table {schema}.order_status using {table_format} "
        "as select 1001 as order_id, 'placed' as status"
    )
    project = write_project(tmp_path / "typo", {"order_status.sql": TYPO_MODEL})
    # PySpark logs an SQL error with a position as a JSON record on stderr; dbt reports it itself.
    records = Records()
    context_logger = PySparkLogger.getLogger("SQLQueryContextLogger")
    context_logger.addHandler(records)
    try:
        failed = run_dbt(["run"], target, project_dir=project, expect_pass=False)
    finally:
        context_logger.removeHandler(records)

    message = describe_failure(failed)
    assert MESSAGES[table_format] in message
    assert "INTERNAL_ERROR" not in message
    assert "\tat " not in message  # no Java stack trace
    assert records.records == []
    assert rows(spark, f"{schema}.order_status", ["order_id", "status"]) == [(1001, "placed")]


@pytest.mark.format_independent
def test_a_second_process_on_the_embedded_metastore_stops_in_one_line(
    spark, target, table_format, lakehouse_home, tmp_path
):
    """This test process's JVM has the metastore open; a dbt command in another process stops
    before starting Spark, without Derby's XSDB6 retries (about 22,000 lines of stack traces)."""
    from pyspark import SparkContext

    spark.sql("show databases").collect()  # the metastore is booted, its lock held
    jvm = SparkContext._gateway.proc.pid
    command = [str(Path(sys.executable).with_name("dbt")), "run", "--select", "orders"]  # the CLI
    command += ["--target", target, *interval_flags("2026-10-03", "2026-10-04")]
    command += ["--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")]
    env = step_env(LAKEHOUSE_HOME=str(lakehouse_home), LAKEHOUSE_SCHEMA="second")
    done = subprocess.run(
        command, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=600
    )

    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stderr == ""
    database = lakehouse_home / table_format / "metastore_db"
    start = (
        f"The embedded metastore {database} (LAKEHOUSE_HOME={lakehouse_home}) is in use by "
        f"process {jvm} (java, started by process {os.getpid()}: "
    )
    end = (
        "). An embedded Derby metastore admits one process at a time: wait until that one "
        "ends, set LAKEHOUSE_HOME to another folder, serve it to everyone with `lakehouse "
        "serve`, or share a metastore server (LAKEHOUSE_METASTORE_URL, _DRIVER and _CLASSPATH)."
    )
    lines = [line.strip() for line in done.stdout.splitlines()]
    problem = [line for line in lines if line.startswith("The embedded metastore")]
    assert len(problem) == 1, done.stdout
    assert problem[0].startswith(start) and problem[0].endswith(end), problem[0]
    assert "XSDB6" not in done.stdout
    assert len(lines) < 15, done.stdout
