"""dbt model contracts (`contract: {enforced: true}`) on idempotent_merge models, and the same
check for Python models (`enforce_column_types: true`).

dbt checks a table model's SQL against its contract before it runs, but not inside a custom
strategy, and it refuses a contract on a Python model when it parses the project (dbt-core
issue 6984). The strategy checks the staged rows of both kinds, with dbt's own contract error,
before anything is written, and enforces the yml's not_null constraints itself on both formats.
Every expected row and type below is written by hand.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from support.tables import commit_count, rows, table_names

from retry_safe.project import describe_failure, run_dbt
from retry_safe.scratch import write_project

CONFIG = (
    "{{ config(materialized='incremental', incremental_strategy='idempotent_merge', "
    "unique_key='id', version_column='updated_at', on_schema_change='fail') }}\n"
)
ORDERS_SQL = CONFIG + "select id, status, amount, updated_at from {{ target.schema }}.src\n"
# the same model with amount as a double: the contract says decimal(10,2)
ORDERS_RETYPED_SQL = ORDERS_SQL.replace("amount,", "cast(amount as double) as amount,")
NAMES_SQL = CONFIG + "select id, status, updated_at from {{ target.schema }}.src\n"
PANDAS_PY = """\
import pandas as pd


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="idempotent_merge", unique_key="day",
                enforce_column_types=True)
    # a NULL turns pandas' integer column into floats: Spark receives a double
    return pd.DataFrame({"day": ["2026-10-01", "2026-10-02"], "n": [3, None]})
"""
SPARK_PY = """\
def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="idempotent_merge", unique_key="day",
                enforce_column_types=True)
    return session.createDataFrame([("2026-10-01", 3), ("2026-10-02", None)], "day string, n bigint")
"""
CONTRACT = "    config:\n      contract: {enforced: true}\n"
MODELS_YML = (
    "version: 2\nmodels:\n"
    "  - name: contracted_orders\n" + CONTRACT + "    columns:\n"
    "      - {name: id, data_type: bigint, constraints: [{type: not_null}]}\n"
    "      - {name: status, data_type: string}\n"
    "      - {name: amount, data_type: 'decimal(10,2)'}\n"
    "      - {name: updated_at, data_type: timestamp}\n"
    "  - name: contracted_names\n" + CONTRACT + "    columns:\n"
    "      - {name: id, data_type: bigint}\n"
    "      - {name: status, data_type: string, constraints: [{type: not_null}]}\n"
    "      - {name: updated_at, data_type: timestamp}\n"
    + "".join(
        f"  - name: {name}\n    columns:\n"
        "      - {name: day, data_type: string}\n"
        "      - {name: n, data_type: bigint}\n"
        for name in ("daily_pandas", "daily_spark")
    )
)
T1, T2 = datetime(2026, 10, 1, 9), datetime(2026, 10, 2, 9)
SOURCE = [
    (1, "placed", Decimal("10.50"), T1),
    (2, None, Decimal("20.00"), T1),  # no status: contracted_names declares it not_null
    (1, "shipped", Decimal("10.50"), T2),
]


def test_a_contract_is_enforced_on_sql_and_python_models_before_anything_is_written(
    spark, target, schema, table_format, tmp_path
):
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(
        f"create table {schema}.src (id bigint, status string, amount decimal(10,2), "
        f"updated_at timestamp) using {table_format}"
    )
    spark.createDataFrame(
        SOURCE, "id bigint, status string, amount decimal(10,2), updated_at timestamp"
    ).writeTo(f"{schema}.src").append()
    models = {
        "contracted_orders.sql": ORDERS_SQL,
        "contracted_names.sql": NAMES_SQL,
        "daily_pandas.py": PANDAS_PY,
        "daily_spark.py": SPARK_PY,
        "models.yml": MODELS_YML,
    }
    root = write_project(tmp_path / "project", models)

    result = run_dbt(["run"], target, project_dir=root, expect_pass=False)
    outcomes = {r.node.name: r.status for r in result.result.results}
    assert outcomes == {
        "contracted_orders": "success",
        "contracted_names": "error",
        "daily_pandas": "error",
        "daily_spark": "success",
    }
    messages = {r.node.name: r.message for r in result.result.results}
    # the pandas model's n arrived as a double: dbt's contract error, its table of mismatches
    assert "This model has an enforced contract that failed" in messages["daily_pandas"]
    assert "| n | double | bigint | data type mismatch |" in " ".join(
        messages["daily_pandas"].split()
    ), messages["daily_pandas"]
    assert (
        "1 source row(s) have a NULL status, which the model's contract declares not_null. "
        "Fill status in the model (e.g. coalesce) or filter those rows out."
    ) in " ".join(messages["contracted_names"].split())
    # the refused models wrote nothing, not even a staging table
    assert table_names(spark, schema) == {"src", "contracted_orders", "daily_spark"}
    # the first loads created the contract's types
    assert [
        (f.name, f.dataType.simpleString())
        for f in spark.table(f"{schema}.contracted_orders").schema
    ] == [
        ("id", "bigint"),
        ("status", "string"),
        ("amount", "decimal(10,2)"),
        ("updated_at", "timestamp"),
    ]
    assert rows(spark, f"{schema}.contracted_orders", ["id", "status", "amount", "updated_at"]) == [
        (1, "shipped", Decimal("10.50"), T2),
        (2, None, Decimal("20.00"), T1),
    ]
    assert [
        (f.name, f.dataType.simpleString()) for f in spark.table(f"{schema}.daily_spark").schema
    ] == [
        ("day", "string"),
        ("n", "bigint"),
    ]
    assert rows(spark, f"{schema}.daily_spark", ["day", "n"]) == [
        ("2026-10-01", 3),
        ("2026-10-02", None),
    ]

    # the SQL model's amount becomes a double: refused against the existing table, no commit
    commits = commit_count(spark, f"{schema}.contracted_orders", table_format)
    retyped = write_project(
        tmp_path / "project", {**models, "contracted_orders.sql": ORDERS_RETYPED_SQL}
    )
    result = run_dbt(
        ["run", "--select", "contracted_orders"], target, project_dir=retyped, expect_pass=False
    )
    text = describe_failure(result)
    assert "This model has an enforced contract that failed" in text
    assert "| amount | double | decimal(10,2) | data type mismatch |" in " ".join(text.split()), (
        text
    )
    assert commit_count(spark, f"{schema}.contracted_orders", table_format) == commits
    assert rows(spark, f"{schema}.contracted_orders", ["id", "status", "amount", "updated_at"]) == [
        (1, "shipped", Decimal("10.50"), T2),
        (2, None, Decimal("20.00"), T1),
    ]
