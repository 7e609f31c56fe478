"""The orders snapshot (snapshots/orders_snapshot.yml): every version of an order, on both formats.

Its second run is the one that used to fail on Iceberg: an Iceberg table of the session catalog
says `Provider: hive`, so dbt-spark took it for a Hive table and refused to snapshot into it
(the adapter now reads Iceberg's table property, relations.py).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from support.tables import rows

from retry_safe.project import interval_vars, run_dbt

DAY_1 = interval_vars("2026-10-03", "2026-10-04")
DAY_2 = interval_vars("2026-10-04", "2026-10-05")
# orders and its snapshot, without seeds and data tests (test_project_build runs those)
BUILD = ["build", "--select", "+orders_snapshot", "--exclude", "resource_type:seed"]
BUILD += ["resource_type:test"]
COLUMNS = [
    "order_id",
    "customer_id",
    "status",
    "amount",
    "currency",
    "ordered_at",
    "updated_at",
    "dbt_scd_id",
    "dbt_updated_at",
    "dbt_valid_from",
    "dbt_valid_to",
]
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


def test_the_orders_snapshot_keeps_every_version_after_two_days(
    spark, target, schema, table_format
):
    for variables in (DAY_1, DAY_2):  # the second build snapshots into the existing table
        run_dbt(BUILD, target, variables)

    snapshot = f"{schema}.orders_snapshot"
    assert spark.table(snapshot).columns == COLUMNS
    assert rows(spark, snapshot, CHECKED, ["order_id", "dbt_valid_from"]) == HISTORY
    versions = spark.sql(f"select count(distinct dbt_scd_id) as n from {snapshot}").first()
    assert versions["n"] == 7
    provider = spark.sql(f"describe table extended {snapshot}").filter("col_name = 'Provider'")
    assert provider.first()["data_type"].lower() == table_format
