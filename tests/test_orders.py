"""Reference document 002: order change files loaded per interval, safe to rerun.

The loads into orders and rejected_orders run on both formats. How a file is read (its header,
its lines, each value's parse and the reasons of a rejection) happens in Python before anything
is written, and cannot depend on the format: those tests run once (format_independent).
"""

from __future__ import annotations

import shutil
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

import pytest
from support.expected import ORDER_COLUMNS, ORDER_HEADER, ORDERS, REJECTED, REJECTED_COLUMNS
from support.tables import duplicate_keys, rows

from retry_safe.project import PROJECT_DIR, describe_failure, interval_flags, run_dbt
from retry_safe.scratch import write_project

# the pass that runs the format-independent tests: the Iceberg one, which balances the two (the
# Delta pass runs the console tests and dbt Labs' unique-key classes)
ONCE_IN = "local_iceberg"
DAY_1 = interval_flags("2026-10-03", "2026-10-04")
DAY_2 = interval_flags("2026-10-04", "2026-10-05")
SELECT = ["--select", "path:models/order_changes"]  # staging, orders, rejected_orders
STAGING = "stg_order_change_lines"


def test_days_loaded_twice_and_out_of_order_leave_the_documents_tables_thanks_to_the_guard(
    spark, target, schema, tmp_path
):
    """The document's days, loaded twice and out of order by `dbt build` (the data tests too);
    beside them, the document's experiment: the same newest-per-order merge without the
    updated_at guard (dbt-spark's merge) reverts 1004 and 1005 when day 1 comes after day 2."""
    unguarded = write_project(
        tmp_path / "unguarded",
        {
            "orders_unguarded.sql": (
                "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='order_id') }}\n"
                "select order_id, customer_id, status, amount, currency, ordered_at, updated_at\n"
                "from (\n"
                "    select *, row_number() over (partition by order_id order by updated_at desc) as n\n"
                "    from {{ target.schema }}.stg_order_change_lines\n"
                "    where rejection_reason is null and {{ in_interval('file_date', 'date') }}\n"
                ") as newest where n = 1\n"
            )
        },
    )
    for n, interval in enumerate((DAY_1, DAY_2, DAY_1)):
        run_dbt(["build", *SELECT, "--exclude", "resource_type:seed", *interval], target)
        if n:  # day 2, then day 1 after it: reads this interval's lines of the staging table
            run_dbt(["run", *interval], target, project_dir=unguarded)
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == ORDERS
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == REJECTED
    assert duplicate_keys(spark, f"{schema}.orders", ["order_id"]) == []
    reverted = rows(spark, f"{schema}.orders_unguarded", ["order_id", "status"])
    assert reverted == [
        (1001, "shipped"),
        (1002, "cancelled"),
        (1004, "placed"),
        (1005, "placed"),
        (1006, "shipped"),
    ]


def test_two_intervals_run_at_once_each_read_only_their_own_days_lines(spark, target, schema):
    """Two scheduler runs of the pipeline for different days, overlapping: day 1's run has
    loaded its file into the staging table when day 2's whole run goes through, then day 1's
    run merges orders and rejected_orders. A staging table rebuilt per run held day 2's lines
    by then, so day 1's run merged them under its own interval: 1001 never arrived, 1002
    stayed placed and day 1's rejected line was never recorded. Each run must read its own
    day's lines: the document's tables, as if the days had run one after the other."""
    run_dbt(["run", "--select", STAGING, *DAY_1], target)
    run_dbt(["run", *SELECT, *DAY_2], target)
    run_dbt(["run", "--select", "orders", "rejected_orders", *DAY_1], target)

    # By hand from the two files: day 1 brings 1001 (shipped, its newest) and cancels 1002,
    # newer than day 2's placed line of it; its placed lines of 1004 and 1005 are older than
    # day 2's shipped and cancelled ones, which stay; 1006 is day 2's. Day 1's only bad line
    # (1003's amount 'abc', line 5) is rejected_orders' only row: day 2's file has none.
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == ORDERS
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == REJECTED
    # every line of both files, once: day 1's data lines are lines 2 to 9, day 2's 2 to 6
    assert rows(spark, f"{schema}.{STAGING}", ["source_file", "line_number"]) == [
        *[("order_changes_20261003.csv", line) for line in range(2, 10)],
        *[("order_changes_20261004.csv", line) for line in range(2, 7)],
    ]


def add_coupon(fields: list[str], header: bool) -> list[str]:
    return [*fields, "coupon" if header else "SAVE5"]


def drop_currency(fields: list[str], header: bool) -> list[str]:
    return fields[:4] + fields[5:]


def swap_amount_and_currency(fields: list[str], header: bool) -> list[str]:
    return [*fields[:3], fields[4], fields[3], *fields[5:]]


@pytest.mark.format_independent(run_in=ONCE_IN)
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
    shutil.copy(PROJECT_DIR / "landing/orders/order_changes_20261003.csv", landing)
    day_2 = (PROJECT_DIR / "landing/orders/order_changes_20261004.csv").read_text().splitlines()
    changed = [",".join(change(line.split(","), n == 0)) for n, line in enumerate(day_2)]
    (landing / "order_changes_20261004.csv").write_text("\n".join(changed) + "\n")

    landing_path = {"orders_landing_path": str(landing)}
    run_dbt(["run", *SELECT, *DAY_1], target, landing_path)
    before = rows(spark, f"{schema}.orders", ORDER_COLUMNS)
    result = run_dbt(["run", *SELECT, *DAY_2], target, landing_path, expect_pass=False)
    text = describe_failure(result)
    assert "order_changes_20261004.csv" in text
    assert f"has the columns {found}, expected {ORDER_COLUMNS}" in text
    assert "Fix the file" in text
    # the staging table too: day 1's lines only
    assert {day for (day,) in rows(spark, f"{schema}.{STAGING}", ["file_date"])} == {
        date(2026, 10, 3)
    }
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == before
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == REJECTED


@pytest.mark.format_independent(run_in=ONCE_IN)
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
    variables = {"orders_landing_path": str(landing)}
    run_dbt(["run", *SELECT, *DAY_1], target, variables)
    run_dbt(["run", *SELECT, *DAY_1], target, variables)
    assert rows(spark, f"{schema}.orders", ["order_id", "status"]) == [(2001, "placed")]
    assert rows(spark, f"{schema}.rejected_orders", ["line_number", "rejection_reason"]) == [
        (3, "expected 7 fields, found 6"),
        (4, "expected 7 fields, found 8"),
        (5, "updated_at 'not-a-time' is not a timestamp"),
    ]


@pytest.mark.format_independent(run_in=ONCE_IN)
def test_a_missing_file_is_refused(spark, target, schema):
    result = run_dbt(
        ["run", *SELECT, *interval_flags("2026-10-04", "2026-10-06")], target, expect_pass=False
    )
    text = describe_failure(result)
    assert "no change file for" in text
    assert "order_changes_20261005.csv" in text
    assert not spark.catalog.tableExists(f"{schema}.{STAGING}")
    assert not spark.catalog.tableExists(f"{schema}.orders")


@pytest.mark.format_independent(run_in=ONCE_IN)
def test_a_missing_landing_folder_is_refused(spark, target, schema, tmp_path):
    run_dbt(["run", *SELECT, *DAY_1], target)
    before = rows(spark, f"{schema}.orders", ORDER_COLUMNS)
    missing = tmp_path / "no-such-folder"
    result = run_dbt(
        ["run", *SELECT, *DAY_2], target, {"orders_landing_path": str(missing)}, expect_pass=False
    )
    text = describe_failure(result)
    assert "stg_order_change_lines" in text
    assert f"the landing folder {missing} does not exist" in text
    assert "Set the var orders_landing_path" in text
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == before


# Bad values must be rejected with their reason, never loaded as a different value (issue 11.4).
# Each test loads one hand-written file for 2026-10-03; every line of it is one case.
HEADER = ORDER_HEADER + "\n"
AT_8 = datetime(2026, 10, 3, 8, 0)


def order(
    order_id: int,
    customer_id: str,
    status: str = "placed",
    amount: str = "10.00",
    updated_at: datetime = AT_8,
) -> tuple:
    """A row of orders; every test line is in EUR and was ordered at 2026-10-03 08:00."""
    return (order_id, customer_id, status, Decimal(amount), "EUR", AT_8, updated_at)


def rejected(line_number: int, raw_line: str, reason: str) -> tuple:
    """A row of rejected_orders from the 2026-10-03 file."""
    return ("order_changes_20261003.csv", date(2026, 10, 3), line_number, raw_line, reason)


def load_day_1(target: str, tmp_path, content: bytes, **extra_vars) -> dict:
    """Write content as the 2026-10-03 file of a new landing folder and run the day on it."""
    landing = tmp_path / "landing"
    landing.mkdir(exist_ok=True)
    (landing / "order_changes_20261003.csv").write_bytes(content)
    variables = {"orders_landing_path": str(landing), **extra_vars}
    run_dbt(["run", *SELECT, *DAY_1], target, variables)
    return variables


@pytest.mark.format_independent(run_in=ONCE_IN)
def test_quoted_fields_are_parsed_and_bad_quoting_is_rejected(spark, target, schema, tmp_path):
    load_day_1(
        target,
        tmp_path,
        # saved as spreadsheet tools save "CSV UTF-8": a byte-order mark first, which is not data
        b"\xef\xbb\xbf"
        + (
            HEADER
            + '2001,"C03",placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n'
            + '2002,"Smith, Jane",placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n'
            + '2003,"C ""VIP""",placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n'
            + '2004,"first\nsecond",placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n'
            + '"2005","C05","shipped","12.50","EUR","2026-10-03T08:00:00","2026-10-03T08:00:00"\n'
            + '2006,"C06"x,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n'
            + '2007,C"07,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n'
            + "2008,C08,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
            + '2009,"C09,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n'
        ).encode(),
    )
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == [
        order(2001, "C03"),  # the quotes are CSV quoting, not part of the value
        order(2002, "Smith, Jane"),  # a comma inside quotes
        order(2003, 'C "VIP"'),  # doubled quotes are one quote
        order(2004, "first\nsecond"),  # a line break inside quotes: lines 5 and 6
        order(2005, "C05", "shipped", "12.50"),  # every field quoted
        order(2008, "C08"),
    ]
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == [
        rejected(
            8,
            '2006,"C06"x,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00',
            "line 8 is not valid CSV (',' expected after '\"')",
        ),
        rejected(
            9,
            '2007,C"07,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00',
            "line 9 is not valid CSV (a quote inside an unquoted field)",
        ),
        rejected(  # the quote opened on line 11 runs to the end of the file
            11,
            '2009,"C09,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00',
            "line 11 is not valid CSV (a quoted field is never closed)",
        ),
    ]


@pytest.mark.format_independent(run_in=ONCE_IN)
def test_an_amount_that_does_not_fit_decimal_10_2_exactly_is_rejected_not_rounded(
    spark, target, schema, tmp_path
):
    load_day_1(
        target,
        tmp_path,
        (
            HEADER
            + "2101,C01,placed,10.005,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
            + "2102,C02,placed,123456789.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
            + "2103,C03,placed,1e-3,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
            + "2104,C04,placed,99999999.99,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
            + "2105,C05,placed,10.500,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
        ).encode(),
    )
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == [
        order(2104, "C04", amount="99999999.99"),  # the largest decimal(10,2)
        order(2105, "C05", amount="10.50"),  # trailing zeros: the value fits exactly
    ]
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == [
        rejected(
            2,
            "2101,C01,placed,10.005,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00",
            "amount '10.005' does not fit decimal(10,2) exactly",
        ),
        rejected(
            3,
            "2102,C02,placed,123456789.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00",
            "amount '123456789.00' does not fit decimal(10,2) exactly",
        ),
        rejected(
            4,
            "2103,C03,placed,1e-3,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00",
            "amount '1e-3' does not fit decimal(10,2) exactly",
        ),
    ]


@pytest.mark.format_independent(run_in=ONCE_IN)
def test_bytes_that_are_not_utf8_are_rejected_naming_the_line(spark, target, schema, tmp_path):
    load_day_1(
        target,
        tmp_path,
        HEADER.encode()
        + b"2201,C01,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
        + b"2202,M\xfcller,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"  # Latin-1
        + b"2203,M\xc3\xbcller,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n",  # UTF-8
    )
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == [
        order(2201, "C01"),
        order(2203, "Müller"),
    ]
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == [
        rejected(
            3,
            "2202,M\\xfcller,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00",
            "line 3 is not valid UTF-8 (byte 0xfc)",
        ),
    ]


@pytest.mark.format_independent(run_in=ONCE_IN)
def test_a_status_outside_the_accepted_set_is_rejected_at_load(spark, target, schema, tmp_path):
    variables = load_day_1(
        target,
        tmp_path,
        (
            HEADER
            + "2301,C01,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
            + "2301,C01,SHIPPED,10.00,EUR,2026-10-03T08:00:00,2026-10-03T09:00:00\n"
            + "2302,C02,shipped,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
            + "2303,C03,returned,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
        ).encode(),
    )
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == [
        order(2301, "C01"),  # SHIPPED (case matters) never reached orders
        order(2302, "C02", "shipped"),
    ]
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == [
        rejected(
            3,
            "2301,C01,SHIPPED,10.00,EUR,2026-10-03T08:00:00,2026-10-03T09:00:00",
            "status 'SHIPPED' is not one of placed, shipped, cancelled"
            " (var orders_accepted_statuses)",
        ),
        rejected(
            5,
            "2303,C03,returned,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00",
            "status 'returned' is not one of placed, shipped, cancelled"
            " (var orders_accepted_statuses)",
        ),
    ]

    # The var is the one list: with 'returned' accepted, a rerun loads 2303 and the file's
    # rejected lines are replaced.
    statuses = ["placed", "shipped", "cancelled", "returned"]
    run_dbt(["run", *SELECT, *DAY_1], target, {**variables, "orders_accepted_statuses": statuses})
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == [
        order(2301, "C01"),
        order(2302, "C02", "shipped"),
        order(2303, "C03", "returned"),
    ]
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == [
        rejected(
            3,
            "2301,C01,SHIPPED,10.00,EUR,2026-10-03T08:00:00,2026-10-03T09:00:00",
            "status 'SHIPPED' is not one of placed, shipped, cancelled, returned"
            " (var orders_accepted_statuses)",
        ),
    ]


@pytest.mark.format_independent(run_in=ONCE_IN)
def test_an_updated_at_after_the_files_day_is_rejected_so_later_changes_still_apply(
    spark, target, schema, tmp_path
):
    variables = load_day_1(
        target,
        tmp_path,
        (
            HEADER
            + "2401,C01,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00\n"
            + "2401,C01,cancelled,10.00,EUR,2026-10-03T08:00:00,2099-01-01\n"
            + "2402,C02,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-04T01:00:00\n"
            + "2403,C03,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-04T01:00:01\n"
        ).encode(),
    )
    limit = "2026-10-04T01:00:00, the end of the file's day plus 60 minutes"
    expected_rejected = [
        rejected(
            3,
            "2401,C01,cancelled,10.00,EUR,2026-10-03T08:00:00,2099-01-01",
            f"updated_at '2099-01-01' is later than {limit}"
            " (var orders_updated_at_tolerance_minutes)",
        ),
        rejected(
            5,
            "2403,C03,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-04T01:00:01",
            f"updated_at '2026-10-04T01:00:01' is later than {limit}"
            " (var orders_updated_at_tolerance_minutes)",
        ),
    ]
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == [
        order(2401, "C01"),
        order(2402, "C02", updated_at=datetime(2026, 10, 4, 1, 0)),  # exactly the limit
    ]
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == expected_rejected

    # The next day's real change of 2401 is newer than what orders holds, so it applies.
    landing = tmp_path / "landing"
    (landing / "order_changes_20261004.csv").write_text(
        HEADER + "2401,C01,shipped,10.00,EUR,2026-10-03T08:00:00,2026-10-04T09:00:00\n"
    )
    run_dbt(["run", *SELECT, *DAY_2], target, variables)
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == [
        order(2401, "C01", "shipped", updated_at=datetime(2026, 10, 4, 9, 0)),
        order(2402, "C02", updated_at=datetime(2026, 10, 4, 1, 0)),
    ]
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == expected_rejected


@pytest.mark.format_independent(run_in=ONCE_IN)
@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        ("orders_accepted_statuses", "shipped", "a non-empty list of statuses"),
        ("orders_updated_at_tolerance_minutes", "1 hour", "a whole number of minutes, 0 or more"),
    ],
    ids=["statuses not a list", "tolerance not minutes"],
)
def test_a_malformed_orders_var_is_refused(spark, target, schema, var, value, expected):
    result = run_dbt(["run", *SELECT, *DAY_1], target, {var: value}, expect_pass=False)
    text = describe_failure(result)
    assert "stg_order_change_lines" in text
    assert f"the var {var} is {value!r}" in text
    assert expected in text
    assert not spark.catalog.tableExists(f"{schema}.{STAGING}")
    assert not spark.catalog.tableExists(f"{schema}.orders")


# Everyday dbt commands on the pipeline (issue 13): show, the landing source and its freshness.
def oct_(day: int, hour: int, minute: int) -> datetime:
    return datetime(2026, 10, day, hour, minute)


# The 2026-10-03 file's accepted lines, as the orders model's SQL selects them (one per line).
DAY_1_ACCEPTED_LINES = [
    (1001, "C01", "placed", Decimal("25.50"), "EUR", oct_(1, 9, 15), oct_(1, 9, 15)),
    (1001, "C01", "shipped", Decimal("25.50"), "EUR", oct_(1, 9, 15), oct_(2, 8, 0)),
    (1002, "C02", "cancelled", Decimal("12.00"), "EUR", oct_(1, 10, 2), oct_(3, 9, 0)),
    (1002, "C02", "placed", Decimal("12.00"), "EUR", oct_(1, 10, 2), oct_(1, 10, 2)),
    (1004, "C01", "placed", Decimal("40.00"), "EUR", oct_(2, 12, 45), oct_(2, 12, 45)),
    (1004, "C01", "placed", Decimal("40.00"), "EUR", oct_(2, 12, 45), oct_(2, 12, 45)),
    (1005, "C09", "placed", Decimal("8.75"), "EUR", oct_(3, 14, 10), oct_(3, 14, 10)),
]
SOURCE = "source.retry_safe.landing.order_change_files"


@pytest.mark.format_independent(run_in=ONCE_IN)
def test_dbt_show_previews_orders_by_name_and_explains_the_python_model(target, schema):
    run_dbt(["run", *SELECT, *DAY_1], target)

    # `orders` names the model and no folder: the model alone is previewed, for the interval
    # it reads (dbt show takes no event-time flags: the vars). dbt's default (eager) indirect
    # selection also runs the model's own data tests, never another model.
    day_1 = {"data_interval_start": "2026-10-03", "data_interval_end": "2026-10-04"}
    shown = run_dbt(["show", "--select", "orders", "--limit", "-1"], target, day_1).result.results
    models = [r for r in shown if r.node.resource_type == "model"]
    tests = [r for r in shown if r.node.resource_type == "test"]
    assert [r.node.unique_id for r in models] == ["model.retry_safe.orders"]
    assert len(tests) == len(shown) - 1
    assert {r.node.attached_node for r in tests} == {"model.retry_safe.orders"}
    assert sorted(tuple(row) for row in models[0].agate_table.rows) == DAY_1_ACCEPTED_LINES

    # A Python model cannot be previewed: the message says so and what to run instead.
    result = run_dbt(["show", "--select", "stg_order_change_lines"], target, expect_pass=False)
    text = describe_failure(result)
    assert (
        "stg_order_change_lines is a Python model (models/order_changes/stg_order_change_lines.py):"
        " dbt show runs SQL and cannot preview a Python model's code." in text
    )
    suggested = "select * from {{ ref('stg_order_change_lines') }}"
    assert f'dbt show --inline "{suggested}"' in text
    assert "PARSE_SYNTAX_ERROR" not in text
    # ... and the suggested query works.
    inline = run_dbt(
        ["show", "--inline", f"{suggested} where rejection_reason is not null"], target
    )
    [table] = [r.agate_table for r in inline.result.results if r.node.name == "inline_query"]
    assert [(row["source_file"], row["line_number"], row["rejection_reason"]) for row in table] == [
        ("order_changes_20261003.csv", 5, "amount 'abc' is not a decimal(10,2)")
    ]


@pytest.mark.format_independent(run_in=ONCE_IN)
def test_the_landing_files_are_the_pipelines_source_and_not_seeds(target):
    def names(*args: str) -> list[str]:
        return sorted(run_dbt(["ls", *args, "--output", "name"], target).result)

    # the lineage starts at the source: the staging model reads it, everything else follows
    assert names("--select", "source:landing.order_change_files+1", "--resource-type", "model") == [
        "stg_order_change_lines"
    ]
    assert names("--select", "source:landing.order_change_files+", "--resource-type", "model") == [
        "orders",
        "rejected_orders",
        "stg_order_change_lines",
    ]
    # landing/orders is no seed folder: the seeds are the other pipelines' inputs only
    assert names("--resource-type", "seed") == [
        "customer_balance_batches",
        "customer_versions",
        "f1_driver_batches",
        "retail_session_products",
    ]


@pytest.mark.format_independent(run_in=ONCE_IN)
def test_source_freshness_reports_how_late_the_newest_landed_file_is(target, schema, tmp_path):
    # The shipped folder (landing/orders): the newest file is 2026-10-04's, complete at
    # 2026-10-05T00:00Z, weeks ago: an error (48 hours after).
    result = run_dbt(["source", "freshness"], target, expect_pass=False)
    # the project's on-run-end hook (lakehouse_publish_audited) is a result of its own
    [late] = [r for r in result.result.results if r.node.resource_type == "source"]
    assert (late.node.unique_id, str(late.status)) == (SOURCE, "error")
    assert late.max_loaded_at == datetime(2026, 10, 5, tzinfo=UTC)

    # A folder whose newest change file is yesterday's (UTC): complete at today's midnight,
    # less than 26 hours ago whatever the time of day, so it passes. Files of other names, a
    # file still being written (.tmp) included, do not count.
    today = datetime.now(UTC).date()
    landing = tmp_path / "landing"
    landing.mkdir()
    for name in [
        f"order_changes_{today - timedelta(days=1):%Y%m%d}.csv",
        "order_changes_20261003.csv",
        f"order_changes_{today + timedelta(days=1):%Y%m%d}.csv.tmp",
        "notes.csv",
    ]:
        (landing / name).write_text(HEADER)
    result = run_dbt(["source", "freshness"], target, {"orders_landing_path": str(landing)})
    [fresh] = [r for r in result.result.results if r.node.resource_type == "source"]
    assert (fresh.node.unique_id, str(fresh.status)) == (SOURCE, "pass")
    assert fresh.max_loaded_at == datetime.combine(today, time(), tzinfo=UTC)
