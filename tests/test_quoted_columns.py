"""Column names that need quoting: a space, a reserved word (`order`, `select`), mixed case, a
non-ASCII letter, as keys (composite), version, tie-break, interval, event-time and batch
columns and update / insert expression targets, in a seed, a SQL model (with a model contract
on those names), a Python model, a microbatch model and a batch_column model of
idempotent_merge.

The strategy writes every name it renders through one helper (identifiers.py): plain names as
they are, the others in backticks. On Delta such names need column mapping; a project turns it
on for every new table with the session setting docs/using.md gives, here set on the test's
session as a profile's server_side_parameters would. Every expected row is worked out by hand
below.
"""

from __future__ import annotations

from datetime import date, datetime

import pytest
from support.tables import commit_count, rows, table_names

from dbt.adapters.lakehouse.strategy.identifiers import RESERVED
from retry_safe.project import describe_failure, run_dbt
from retry_safe.scratch import write_project

COLUMN_MAPPING = "spark.databricks.delta.properties.defaults.columnMapping.mode"

VERSIONED = (
    "unique_key=['customer name', '`order`'], version_column='Updated At', "
    "tie_break_column='select', interval_column='order day', delete_missing_in_interval=true"
)
ORDERS_SQL = (
    "{{ config(materialized='incremental', incremental_strategy='idempotent_merge', "
    + VERSIONED
    + ") }}\n"
    "with\n\norders as (\n\n    select * from {{ ref('customer_orders') }}\n\n),\n\n"
    "in_interval as (\n\n    select * from orders\n"
    "    where {{ in_interval('`order day`', 'date') }}\n\n),\n\n"
    "final as (\n\n    select * from in_interval\n\n)\n\nselect * from final\n"
)
ORDERS_PY = """\
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="idempotent_merge",
        unique_key=["customer name", "order"],
        version_column="Updated At",
        tie_break_column="select",
        interval_column="order day",
        delete_missing_in_interval=True,
    )
    day = F.col("order day")
    orders = dbt.ref("customer_orders")
    return orders.filter(
        (day >= F.lit(dbt.interval.start.date())) & (day < F.lit(dbt.interval.end.date()))
    )
"""
# dbt filters ref('customer_orders') to each batch with the seed's event_time, verbatim: the
# backticks are what make that filter valid SQL
BATCHED_SQL = (
    "{{ config(materialized='incremental', incremental_strategy='microbatch', "
    "event_time='`order day`', batch_size='day', begin='2026-10-01', "
    "unique_key=['customer name', 'order'], version_column='Updated At', "
    "tie_break_column='select') }}\n"
    "select * from {{ ref('customer_orders') }}\n"
)
TOTALS_SQL = """\
{{ config(
    materialized='incremental',
    incremental_strategy='idempotent_merge',
    unique_key='customer name',
    batch_column='batch no',
    merge_update_expressions={'Total €': 'target.`Total €` + source.`Total €`'},
    merge_insert_expressions={'first batch': 'source.`batch no`'},
    merge_exclude_columns=['first batch'],
) }}
with

payments as (

    select * from {{ ref('customer_payments') }}

),

in_interval as (

    select
        `customer name`,
        `batch no`,
        `Total €`,
        `batch no` as `first batch`
    from payments
    where {{ in_interval('`pay day`', 'date') }}

),

final as (

    select * from in_interval

)

select * from final
"""
SEEDS_YML = """\
version: 2
seeds:
  - name: customer_orders
    config:
      event_time: "`order day`"
      quote_columns: true
      column_types: {"customer name": string, "order": bigint, "Größe": string,
                     "select": string, "Updated At": timestamp, "order day": date}
  - name: customer_payments
    config:
      quote_columns: true
      column_types: {"customer name": string, "batch no": bigint, "Total €": bigint,
                     "pay day": date}
"""
# a model contract on such names, without `quote: true`: dbt's own check wrote them bare
MODELS_YML = """\
version: 2
models:
  - name: quoted_orders
    config:
      contract: {enforced: true}
      on_schema_change: fail
    columns:
      - {name: customer name, data_type: string, constraints: [{type: not_null}]}
      - {name: order, data_type: bigint}
      - {name: Größe, data_type: string}
      - {name: select, data_type: string}
      - {name: Updated At, data_type: timestamp}
      - {name: order day, data_type: date}
"""
ORDERS_HEADER = "customer name,order,Größe,select,Updated At,order day\n"
# Bo Ek's order 1 has two rows of one version: tie_break_column `select` keeps the 'b' row
ORDERS_FIRST = ORDERS_HEADER + (
    "Ann Lee,1,M,x,2026-10-01 09:00:00,2026-10-01\n"
    "Ann Lee,2,L,x,2026-10-01 09:00:00,2026-10-01\n"
    "Bo Ek,1,S,a,2026-10-01 10:00:00,2026-10-01\n"
    "Bo Ek,1,XS,b,2026-10-01 10:00:00,2026-10-01\n"
    "Cy Ng,7,M,x,2026-10-02 09:00:00,2026-10-02\n"
)
# later: Ann Lee's order 1 has a newer version, her order 2 is gone from the source
ORDERS_LATER = ORDERS_FIRST.replace("Ann Lee,2,L,x,2026-10-01 09:00:00,2026-10-01\n", "") + (
    "Ann Lee,1,XL,y,2026-10-01 12:00:00,2026-10-01\n"
)
PAYMENTS = (
    "customer name,batch no,Total €,pay day\n"
    "Ann Lee,1,10,2026-10-01\n"
    "Bo Ek,1,5,2026-10-01\n"
    "Ann Lee,2,7,2026-10-02\n"
)
ORDER_COLUMNS = ["`customer name`", "`order`", "`Größe`", "`select`", "`Updated At`", "`order day`"]
TOTAL_COLUMNS = ["`customer name`", "`batch no`", "`Total €`", "`first batch`", "applied_batches"]
T9, T10, T12 = (datetime(2026, 10, 1, h) for h in (9, 10, 12))
D1, D2 = date(2026, 10, 1), date(2026, 10, 2)
# dbt's event-time flags: the interval of the interval models, the batches of the microbatch one
DAY_ONE = ["--event-time-start", "2026-10-01", "--event-time-end", "2026-10-02"]
BOTH_DAYS = ["--event-time-start", "2026-10-01", "--event-time-end", "2026-10-03"]


@pytest.fixture
def column_mapping(spark, table_format):
    """Delta's column mapping for every new table of the session, as the profile setting in
    docs/using.md turns it on; nothing on Iceberg, which needs none."""
    if table_format == "delta":
        spark.conf.set(COLUMN_MAPPING, "name")
    yield
    spark.conf.unset(COLUMN_MAPPING)


def project(tmp_path, orders_csv: str):
    models = {
        "quoted_orders.sql": ORDERS_SQL,
        "quoted_orders_df.py": ORDERS_PY,
        "quoted_totals.sql": TOTALS_SQL,
        "quoted_orders_batched.sql": BATCHED_SQL,
        "models.yml": MODELS_YML,
    }
    seeds = {
        "customer_orders.csv": orders_csv,
        "customer_payments.csv": PAYMENTS,
        "seeds.yml": SEEDS_YML,
    }
    return write_project(tmp_path / "project", models, seeds=seeds)


def test_without_column_mapping_delta_refuses_such_names_in_one_line_naming_the_setting(
    spark, target, schema, table_format, tmp_path
):
    if table_format != "delta":
        pytest.skip("Iceberg takes such names without any setting (the test below)")
    root = project(tmp_path, ORDERS_FIRST)
    result = run_dbt(
        ["seed", "--select", "customer_orders"], target, project_dir=root, expect_pass=False
    )
    text = " ".join(describe_failure(result).split())
    assert "[DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES]" in text, text
    assert (
        "A Delta table holds such column names only with column mapping: set "
        "spark.databricks.delta.properties.defaults.columnMapping.mode: name in the target's "
        "server_side_parameters"
    ) in text, text
    assert "Traceback" not in text and "\tat " not in text
    assert table_names(spark, schema) == set()


def test_columns_that_need_quoting_merge_exactly_on_sql_python_and_batch_models(
    spark, target, schema, table_format, tmp_path, column_mapping
):
    root = project(tmp_path, ORDERS_FIRST)
    run_dbt(["build", *DAY_ONE], target, project_dir=root)
    first_day = [
        ("Ann Lee", 1, "M", "x", T9, D1),
        ("Ann Lee", 2, "L", "x", T9, D1),
        ("Bo Ek", 1, "XS", "b", T10, D1),
    ]
    for model in ("quoted_orders", "quoted_orders_df", "quoted_orders_batched"):
        assert rows(spark, f"{schema}.{model}", ORDER_COLUMNS) == first_day, model
    # merge_insert_expressions on a new key (first batch, which no update sets); applied_batches
    # holds the batches applied
    assert rows(spark, f"{schema}.quoted_totals", TOTAL_COLUMNS) == [
        ("Ann Lee", 1, 10, 1, [1]),
        ("Bo Ek", 1, 5, 1, [1]),
    ]

    # both days: Ann Lee's order 1 updated, her order 2 deleted, Cy Ng's inserted; batch 1
    # is already applied to both customers, batch 2 adds to Ann Lee's total once
    commits = commit_count(spark, f"{schema}.quoted_orders", table_format)
    root = project(tmp_path, ORDERS_LATER)
    run_dbt(["build", *BOTH_DAYS], target, project_dir=root)
    both_days = [
        ("Ann Lee", 1, "XL", "y", T12, D1),
        ("Bo Ek", 1, "XS", "b", T10, D1),
        ("Cy Ng", 7, "M", "x", datetime(2026, 10, 2, 9), D2),
    ]
    for model in ("quoted_orders", "quoted_orders_df", "quoted_orders_batched"):
        assert rows(spark, f"{schema}.{model}", ORDER_COLUMNS) == both_days, model
    assert commit_count(spark, f"{schema}.quoted_orders", table_format) == commits + 1
    assert rows(spark, f"{schema}.quoted_totals", TOTAL_COLUMNS) == [
        ("Ann Lee", 2, 17, 1, [1, 2]),
        ("Bo Ek", 1, 5, 1, [1]),
    ]
    assert [f.name for f in spark.table(f"{schema}.quoted_orders").schema] == [
        "customer name",
        "order",
        "Größe",
        "select",
        "Updated At",
        "order day",
    ]


@pytest.mark.format_independent(run_in="local_iceberg")
def test_the_reserved_words_quoted_are_sparks_own(spark):
    # Spark lists its reserved words as reserved only while ANSI mode enforces them
    enforcing = {"spark.sql.ansi.enabled": "true", "spark.sql.ansi.enforceReservedKeywords": "true"}
    before = {key: spark.conf.get(key, None) for key in enforcing}
    for key, value in enforcing.items():
        spark.conf.set(key, value)
    try:
        listed = spark.sql("select keyword from sql_keywords() where reserved").collect()
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
    # Spark's list, plus the strict non-reserved words it never reads as a name
    assert {row.keyword for row in listed} | {"ANTI", "MINUS", "SEMI"} == RESERVED, before
