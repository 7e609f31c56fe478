"""Reference document 000: daily cart abandonment, SQL and DataFrame versions, reconciled per interval."""

from datetime import date
from decimal import Decimal

import pytest
from support.tables import commit_count, duplicate_keys, last_commit, rows

from retry_safe.project import describe_failure, interval_vars, run_dbt

MODELS = ["retail_daily_product_cart_abandonment", "retail_daily_product_cart_abandonment_df"]
COLUMNS = [
    "event_date",
    "product_id",
    "product_name",
    "category",
    "cart_session_count",
    "purchased_cart_session_count",
    "abandoned_cart_session_count",
    "cart_abandonment_rate",
]
KEY = ["event_date", "product_id", "product_name", "category"]

# Worked out by hand from seeds/cart_abandonment/retail_session_products.csv.
JAN_1 = [
    (date(2026, 1, 1), "P1", "Trail Shoe", "footwear", 3, 1, 2, Decimal("0.6667")),
    (date(2026, 1, 1), "P2", "Rain Jacket", "outerwear", 1, 0, 1, Decimal("1.0000")),
    (date(2026, 1, 1), "P3", "Wool Socks", "accessories", 1, 1, 0, Decimal("0.0000")),
]
JAN_2 = [
    (date(2026, 1, 2), "P1", "Trail Shoe", "footwear", 2, 1, 1, Decimal("0.5000")),
    (date(2026, 1, 2), "P2", "Rain Jacket", "outerwear", 3, 2, 1, Decimal("0.3333")),
]
JAN_3 = [
    (date(2026, 1, 3), "P1", "Trail Shoe", "footwear", 1, 1, 0, Decimal("0.0000")),
    (date(2026, 1, 3), "P3", "Wool Socks", "accessories", 3, 0, 3, Decimal("1.0000")),
]
SELECT = ["--select", "cart_abandonment"]


def load(target, start, end, expect_pass=True):
    return run_dbt(["run", *SELECT], target, interval_vars(start, end), expect_pass=expect_pass)


def test_rerun_changes_nothing_and_python_equals_sql(spark, target, schema, table_format):
    run_dbt(["seed", *SELECT], target)
    load(target, "2026-01-01", "2026-01-03")
    for model in MODELS:
        assert rows(spark, f"{schema}.{model}", COLUMNS) == JAN_1 + JAN_2
    commits = {m: commit_count(spark, f"{schema}.{m}", table_format) for m in MODELS}

    load(target, "2026-01-01", "2026-01-03")  # the retry
    for model in MODELS:
        relation = f"{schema}.{model}"
        assert rows(spark, relation, COLUMNS) == JAN_1 + JAN_2
        assert commit_count(spark, relation, table_format) == commits[model], "a retry committed"

    load(target, "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z")
    for model in MODELS:
        relation = f"{schema}.{model}"
        assert rows(spark, relation, COLUMNS) == JAN_1 + JAN_2 + JAN_3
        assert duplicate_keys(spark, relation, KEY) == []
    run_dbt(["test", *SELECT], target, interval_vars("2026-01-01", "2026-01-04"))


def test_corrected_source_deletes_inside_interval_only(spark, target, schema, table_format):
    run_dbt(["seed", *SELECT], target)
    load(target, "2026-01-01", "2026-01-04")
    # The upstream correction: session s01 never put the rain jacket in its cart on Jan 1,
    # and a Jan 3 row disappears too, but Jan 3 is outside the interval reloaded below.
    spark.sql(
        f"delete from {schema}.retail_session_products "
        "where (session_id = 's01' and product_id = 'P2') or session_id = 's15'"
    )
    load(target, "2026-01-01", "2026-01-02")
    for model in MODELS:
        relation = f"{schema}.{model}"
        commit = last_commit(spark, relation, table_format)
        assert commit.files_added >= 0
        assert rows(spark, relation, COLUMNS) == [JAN_1[0], JAN_1[2], *JAN_2, *JAN_3]


def test_empty_source_for_a_loaded_interval_is_refused(spark, target, schema):
    run_dbt(["seed", *SELECT], target)
    load(target, "2026-01-01", "2026-01-04")
    spark.sql(f"delete from {schema}.retail_session_products where event_date = date'2026-01-02'")
    result = load(target, "2026-01-02", "2026-01-03", expect_pass=False)
    messages = describe_failure(result)
    assert "the source is empty" in messages
    assert "2 row(s)" in messages
    assert "allow_empty_interval" in messages
    for model in MODELS:
        assert rows(spark, f"{schema}.{model}", COLUMNS) == JAN_1 + JAN_2 + JAN_3


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (None, "2026-01-02", "the var data_interval_start is missing"),
        ("2026-01-01' OR '1'='1", "2026-01-02", "is not an ISO-8601 date or timestamp"),
        ("2026-02-30", "2026-03-01", "is not an ISO-8601 date or timestamp"),
        ("2026-01-02", "2026-01-01", "must be after data_interval_start"),
        ("2026-01-01T12:00:00Z", "2026-01-02", "does not start and end at midnight UTC"),
    ],
)
def test_bad_interval_vars_are_refused_before_any_sql(spark, target, schema, start, end, expected):
    run_dbt(["seed", *SELECT], target)
    variables = {"data_interval_end": end}
    if start is not None:
        variables["data_interval_start"] = start
    result = run_dbt(["run", *SELECT], target, variables, expect_pass=False)
    messages = describe_failure(result)
    assert expected in messages
    tables = {
        row.tableName
        for row in spark.sql(f"show tables in {schema}").collect()
        if not row.isTemporary
    }
    assert tables == {"retail_session_products"}, "a refused run created a table"
