"""Reference document 002: order change files loaded per interval, safe to rerun."""

from __future__ import annotations

import shutil
from datetime import date, datetime
from decimal import Decimal

import pytest

from retry_safe.project import PROJECT_DIR, describe_failure, interval_vars, run_dbt
from retry_safe.tables import duplicate_keys, rows
from retry_safe.testing import write_project

ORDER_COLUMNS = [
    "order_id",
    "customer_id",
    "status",
    "amount",
    "currency",
    "ordered_at",
    "updated_at",
]
REJECTED_COLUMNS = ["source_file", "file_date", "line_number", "raw_line", "rejection_reason"]

# The document's final tables.
ORDERS = [
    (
        1001,
        "C01",
        "shipped",
        Decimal("25.50"),
        "EUR",
        datetime(2026, 10, 1, 9, 15),
        datetime(2026, 10, 2, 8, 0),
    ),
    (
        1002,
        "C02",
        "cancelled",
        Decimal("12.00"),
        "EUR",
        datetime(2026, 10, 1, 10, 2),
        datetime(2026, 10, 3, 9, 0),
    ),
    (
        1004,
        "C01",
        "shipped",
        Decimal("40.00"),
        "EUR",
        datetime(2026, 10, 2, 12, 45),
        datetime(2026, 10, 4, 8, 30),
    ),
    (
        1005,
        "C09",
        "cancelled",
        Decimal("8.75"),
        "EUR",
        datetime(2026, 10, 3, 14, 10),
        datetime(2026, 10, 4, 10, 0),
    ),
    (
        1006,
        "C02",
        "shipped",
        Decimal("19.90"),
        "EUR",
        datetime(2026, 10, 4, 11, 20),
        datetime(2026, 10, 4, 16, 45),
    ),
]
REJECTED = [
    (
        "order_changes_20261003.csv",
        date(2026, 10, 3),
        5,
        "1003,C03,placed,abc,EUR,2026-10-02T11:30:00,2026-10-02T11:30:00",
        "amount 'abc' is not a decimal(10,2)",
    )
]
DAY_1 = interval_vars("2026-10-03", "2026-10-04")
DAY_2 = interval_vars("2026-10-04", "2026-10-05")
SELECT = ["--select", "orders"]  # the folder: staging, orders, rejected_orders


def test_days_loaded_twice_and_out_of_order_leave_the_documents_tables(spark, target, schema):
    for variables in (DAY_1, DAY_2, DAY_2, DAY_1):
        run_dbt(["build", *SELECT, "--exclude", "resource_type:seed"], target, variables)
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == ORDERS
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == REJECTED
    assert duplicate_keys(spark, f"{schema}.orders", ["order_id"]) == []


def test_the_updated_at_guard_is_what_keeps_1004_and_1005(spark, target, schema, tmp_path):
    """The document's experiment: the same newest-per-order merge without the guard reverts."""
    unguarded = write_project(
        tmp_path / "unguarded",
        {
            "orders_unguarded.sql": (
                "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='order_id') }}\n"
                "select order_id, customer_id, status, amount, currency, ordered_at, updated_at\n"
                "from (\n"
                "    select *, row_number() over (partition by order_id order by updated_at desc) as n\n"
                "    from {{ target.schema }}.stg_order_change_lines where rejection_reason is null\n"
                ") as newest where n = 1\n"
            )
        },
    )
    for variables in (DAY_1, DAY_2, DAY_1):
        run_dbt(["run", *SELECT], target, variables)
        run_dbt(["run"], target, variables, project_dir=unguarded)
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == ORDERS
    reverted = rows(spark, f"{schema}.orders_unguarded", ["order_id", "status"])
    assert reverted == [
        (1001, "shipped"),
        (1002, "cancelled"),
        (1004, "placed"),
        (1005, "placed"),
        (1006, "shipped"),
    ]


def add_coupon(fields: list[str], header: bool) -> list[str]:
    return [*fields, "coupon" if header else "SAVE5"]


def drop_currency(fields: list[str], header: bool) -> list[str]:
    return fields[:4] + fields[5:]


def swap_amount_and_currency(fields: list[str], header: bool) -> list[str]:
    return [*fields[:3], fields[4], fields[3], *fields[5:]]


@pytest.mark.parametrize(
    ("change", "found"),
    [
        (add_coupon, [*ORDER_COLUMNS, "coupon"]),
        (drop_currency, [c for c in ORDER_COLUMNS if c != "currency"]),
        (
            swap_amount_and_currency,
            ["order_id", "customer_id", "status", "currency", "amount", "ordered_at", "updated_at"],
        ),
    ],
    ids=["new column", "missing column", "reordered columns"],
)
def test_a_changed_header_stops_the_run_and_names_both_column_lists(
    spark, target, schema, tmp_path, change, found
):
    landing = tmp_path / "landing"
    landing.mkdir()
    shutil.copy(PROJECT_DIR / "seeds/orders/order_changes_20261003.csv", landing)
    day_2 = (PROJECT_DIR / "seeds/orders/order_changes_20261004.csv").read_text().splitlines()
    changed = [",".join(change(line.split(","), n == 0)) for n, line in enumerate(day_2)]
    (landing / "order_changes_20261004.csv").write_text("\n".join(changed) + "\n")

    run_dbt(["run", *SELECT], target, {**DAY_1, "orders_landing_path": str(landing)})
    before = rows(spark, f"{schema}.orders", ORDER_COLUMNS)
    result = run_dbt(
        ["run", *SELECT], target, {**DAY_2, "orders_landing_path": str(landing)}, expect_pass=False
    )
    text = describe_failure(result)
    assert "order_changes_20261004.csv" in text
    assert f"has the columns {found}, expected {ORDER_COLUMNS}" in text
    assert "Fix the file" in text
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == before
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == REJECTED


def test_short_long_and_unparseable_lines_are_rejected_with_their_file(
    spark, target, schema, tmp_path
):
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "order_changes_20261003.csv").write_text(
        "order_id,customer_id,status,amount,currency,ordered_at,updated_at\n"
        "2001,C01,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
        "2002,C02,placed,11.00,EUR,2026-10-03T08:00:00\n"
        "2003,C03,placed,12.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00,extra\n"
        "2004,C04,placed,13.00,EUR,2026-10-03T08:00:00,not-a-time\n"
    )
    variables = {**DAY_1, "orders_landing_path": str(landing)}
    run_dbt(["run", *SELECT], target, variables)
    run_dbt(["run", *SELECT], target, variables)
    assert rows(spark, f"{schema}.orders", ["order_id", "status"]) == [(2001, "placed")]
    assert rows(spark, f"{schema}.rejected_orders", ["line_number", "rejection_reason"]) == [
        (3, "expected 7 fields, found 6"),
        (4, "expected 7 fields, found 8"),
        (5, "updated_at 'not-a-time' is not a timestamp"),
    ]


def test_a_missing_file_is_refused(spark, target, schema):
    result = run_dbt(
        ["run", *SELECT], target, interval_vars("2026-10-04", "2026-10-06"), expect_pass=False
    )
    text = describe_failure(result)
    assert "no change file for" in text
    assert "order_changes_20261005.csv" in text
    assert not spark.catalog.tableExists(f"{schema}.orders")


def test_a_missing_landing_folder_is_refused(spark, target, schema, tmp_path):
    run_dbt(["run", *SELECT], target, DAY_1)
    before = rows(spark, f"{schema}.orders", ORDER_COLUMNS)
    missing = tmp_path / "no-such-folder"
    result = run_dbt(
        ["run", *SELECT], target, {**DAY_2, "orders_landing_path": str(missing)}, expect_pass=False
    )
    text = describe_failure(result)
    assert "stg_order_change_lines" in text
    assert f"the landing folder {missing} does not exist" in text
    assert "Set the var orders_landing_path" in text
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == before
