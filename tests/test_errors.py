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
        "serve`, or share a PostgreSQL metastore (LAKEHOUSE_METASTORE_URL, _USER and _PASSWORD, "
        "then `lakehouse metastore init` once)."
    )
    lines = [line.strip() for line in done.stdout.splitlines()]
    problem = [line for line in lines if line.startswith("The embedded metastore")]
    assert len(problem) == 1, done.stdout
    assert problem[0].startswith(start) and problem[0].endswith(end), problem[0]
    assert "XSDB6" not in done.stdout
    assert len(lines) < 15, done.stdout


# A value the table's column type cannot take: the first run creates code as bigint; the next
# interval's model returns the raw text (on_schema_change ignore keeps the table's types), and
# the MERGE's write must cast 'A-3' to bigint. The same model in SQL and in Python.
CODES_SQL = """\
{{ config(materialized='incremental', incremental_strategy='idempotent_merge', unique_key='id',
          on_schema_change='ignore') }}
select id, {{ 'code' if is_incremental() else 'cast(code as bigint) as code' }}
from {{ target.schema }}.codes
"""
CODES_PY = """\
def model(dbt, spark):
    dbt.config(
        materialized="incremental", incremental_strategy="idempotent_merge", unique_key="id",
        on_schema_change="ignore",
    )
    code = "code" if dbt.is_incremental else "cast(code as bigint) as code"
    return spark.table(f"{dbt.this.schema}.codes").selectExpr("id", code)
"""
# What each format makes of it: Delta casts while writing the MERGE's files and fails the task
# (TASK_WRITE_FAILED, the value in its cause); Iceberg refuses the MERGE before it runs.
CANNOT_WRITE = {
    "delta": (
        "[CAST_INVALID_INPUT] The value 'A-3' of the type \"STRING\" cannot be cast to "
        '"BIGINT" because it is malformed. Correct the value as per the syntax, or change its '
        "target type. Use `try_cast` to tolerate malformed input and return NULL instead. "
        "SQLSTATE: 22018 (raised as TASK_WRITE_FAILED; the stack trace is in dbt's log)"
    ),
    "iceberg": (
        "[INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST] Cannot write incompatible data for the "
        'table ``: Cannot safely cast `code` "STRING" to "BIGINT". SQLSTATE: KD000'
    ),
}


def test_a_value_the_table_cannot_take_is_one_line_naming_it_and_the_table_is_unchanged(
    spark, target, schema, table_format, tmp_path, lakehouse_home
):
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(
        f"create table {schema}.codes using {table_format} "
        "as select * from values (1, '7') as t(id, code)"
    )
    project = write_project(
        tmp_path / "codes", {"codes_sql.sql": CODES_SQL, "codes_py.py": CODES_PY}
    )
    run_dbt(["run"], target, project_dir=project)
    spark.sql(f"insert into {schema}.codes values (2, 'A-3')")
    log = lakehouse_home / "logs" / "dbt.log"
    logged = log.stat().st_size
    failed = run_dbt(["run"], target, project_dir=project, expect_pass=False)

    messages = {result.node.name: result.message for result in failed.result.results}
    # dbt's line naming the model, then Spark's one
    assert messages == {
        model: f"Runtime Error in model {model} (models/{file})\n  " + CANNOT_WRITE[table_format]
        for model, file in (("codes_sql", "codes_sql.sql"), ("codes_py", "codes_py.py"))
    }
    for model in ("codes_sql", "codes_py"):
        assert rows(spark, f"{schema}.{model}", ["id", "code"]) == [(1, 7)]
    with log.open() as text:
        text.seek(logged)
        added = text.read()
    assert "\tat org.apache.spark" in added  # the stack trace
