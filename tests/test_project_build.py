"""The whole project in one `dbt build`: SQL and Python incremental models, the data tests, the
orders snapshot (snapshots/orders_snapshot.yml) and dbt's docs catalog.

The snapshot's second run is the one that used to fail on Iceberg: an Iceberg table of the
session catalog says `Provider: hive`, so dbt-spark took it for a Hive table and refused to
snapshot into it (the adapter now reads Iceberg's table property, relations.py).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from support.docs import documented_columns_missing
from support.expected import ORDER_COLUMNS
from support.tables import leftover_folders, rows

from retry_safe.project import interval_flags, run_dbt

DAY_1 = interval_flags("2026-10-03", "2026-10-04")
DAY_2 = interval_flags("2026-10-04", "2026-10-05")
# every model, test and the snapshot; the seeds come first, from `dbt seed`
BUILD = ["build", "--exclude", "resource_type:seed"]
# the orders pipeline and its snapshot, with their data tests
ORDERS_BUILD = ["build", "--select", "+orders_snapshot", "--exclude", "resource_type:seed"]
# the same without data tests
SNAPSHOT_BUILD = [*ORDERS_BUILD, "resource_type:test"]
# the snapshot's: the order's, then dbt's
COLUMNS = [*ORDER_COLUMNS, "dbt_scd_id", "dbt_updated_at", "dbt_valid_from", "dbt_valid_to"]
CHECKED = [column for column in COLUMNS if column != "dbt_scd_id"]  # a hash


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 10, day, hour, minute)


def version(
    order_id: int,
    customer_id: str,
    status: str,
    amount: str,
    ordered_at: datetime,
    updated_at: datetime,
    valid_to: datetime | None,
) -> tuple:
    """A row of the snapshot: in euros, valid from its updated_at (dbt_updated_at too)."""
    order = (order_id, customer_id, status, Decimal(amount), "EUR", ordered_at, updated_at)
    dbt_updated_at = valid_from = updated_at
    return (*order, dbt_updated_at, valid_from, valid_to)


# Worked out from the two files. After 2026-10-03 the four orders stand as of their newest
# change (1003's only line is rejected); 2026-10-04 ships 1004, cancels 1005 and brings 1006,
# placed and shipped the same day. Each closed version ends where the next one starts; 1006 has
# one version, its newest (a snapshot sees orders, not every line of a file).
HISTORY = [
    version(1001, "C01", "shipped", "25.50", at(1, 9, 15), at(2, 8), None),
    version(1002, "C02", "cancelled", "12.00", at(1, 10, 2), at(3, 9), None),
    version(1004, "C01", "placed", "40.00", at(2, 12, 45), at(2, 12, 45), at(4, 8, 30)),
    version(1004, "C01", "shipped", "40.00", at(2, 12, 45), at(4, 8, 30), None),
    version(1005, "C09", "placed", "8.75", at(3, 14, 10), at(3, 14, 10), at(4, 10)),
    version(1005, "C09", "cancelled", "8.75", at(3, 14, 10), at(4, 10), None),
    version(1006, "C02", "shipped", "19.90", at(4, 11, 20), at(4, 16, 45), None),
]


def test_one_build_runs_every_model_test_and_snapshot(
    spark, target, schema, table_format, tmp_path, json_artifacts
):
    run_dbt(["seed"], target)
    result = run_dbt([*BUILD, *DAY_1], target)
    statuses = {r.node.unique_id: str(r.status) for r in result.result.results}
    python_models = {
        "model.retry_safe.stg_order_change_lines",  # incremental
        "model.retry_safe.retail_daily_product_cart_abandonment_df",  # incremental
        "model.retry_safe.f1_drivers_merge_df",  # incremental
    }
    assert python_models <= set(statuses)
    assert "snapshot.retry_safe.orders_snapshot" in statuses  # a build runs snapshots too
    assert set(statuses.values()) == {"success", "pass"}, statuses
    # Orders after the first day's file, in the document's words: 1001 shipped, 1002 cancelled.
    assert rows(spark, f"{schema}.orders", ["order_id", "status"]) == [
        (1001, "shipped"),
        (1002, "cancelled"),
        (1004, "placed"),
        (1005, "placed"),
    ]
    provider = spark.sql(f"describe table extended {schema}.orders").filter("col_name = 'Provider'")
    assert provider.first()["data_type"].lower() == table_format
    # The snapshot records what analysts could read: orders staged its first load in this
    # build, published only once its tests passed, so the snapshot met the published, empty table.
    assert rows(spark, f"{schema}.orders_snapshot", ["order_id"]) == []
    # A second build of the orders and their snapshot, same interval: the orders unchanged, their
    # tests pass again. (The other pipelines' days are not in this interval: their reruns are
    # their own tests'.)
    run_dbt([*ORDERS_BUILD, *DAY_1], target)
    assert rows(spark, f"{schema}.orders", ["order_id", "status"])[0] == (1001, "shipped")
    # Snapshotting into the existing table (this failed on Iceberg) records the published orders.
    assert rows(spark, f"{schema}.orders_snapshot", ["order_id", "status", "dbt_valid_to"]) == [
        (1001, "shipped", None),
        (1002, "cancelled", None),
        (1004, "placed", None),
        (1005, "placed", None),
    ]

    # The next day: the snapshot closes the versions it replaces and keeps every one.
    run_dbt([*SNAPSHOT_BUILD, *DAY_2], target)
    snapshot = f"{schema}.orders_snapshot"
    assert spark.table(snapshot).columns == COLUMNS
    assert rows(spark, snapshot, CHECKED, ["order_id", "dbt_valid_from"]) == HISTORY
    versions = spark.sql(f"select count(distinct dbt_scd_id) as n from {snapshot}").first()
    assert versions["n"] == 7
    provider = spark.sql(f"describe table extended {snapshot}").filter("col_name = 'Provider'")
    assert provider.first()["data_type"].lower() == table_format
    # a build of every pipeline, then the orders again: a folder for each table of the schema,
    # no other (no staging table's files, no table in a folder named after its stage)
    assert leftover_folders(spark, schema) == []

    # The docs site's catalog: every model's table with exactly the columns its yml documents.
    run_dbt(["docs", "generate", "--target-path", str(tmp_path)], target)
    assert documented_columns_missing(tmp_path) == {}
