"""Reference document 000: daily cart abandonment, SQL and DataFrame versions, reconciled per interval."""

import pytest
from support.expected import CART_COLUMNS as COLUMNS
from support.expected import CART_KEY as KEY
from support.expected import CART_MODELS as MODELS
from support.expected import JAN_1, JAN_2, JAN_3
from support.tables import commit_count, duplicate_keys, rows, table_names

from retry_safe.project import describe_failure, interval_flags, interval_vars, run_dbt

SELECT = ["--select", "cart_abandonment"]


def load(target, start, end, expect_pass=True):
    """One interval of both twins, as a scheduler passes it: dbt's event-time flags."""
    return run_dbt(["run", *SELECT, *interval_flags(start, end)], target, expect_pass=expect_pass)


def test_rerun_changes_nothing_python_equals_sql_and_a_corrected_source_deletes_in_its_interval(
    spark, target, schema, table_format
):
    """A retry commits nothing; the twins agree; an upstream correction reloaded deletes
    inside its interval only, and an emptied interval is refused."""
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

    # the interval as the vars, timestamps in UTC with an offset: the same rows as the flags
    variables = interval_vars("2026-01-03T00:00:00Z", "2026-01-04T00:00:00+00:00")
    run_dbt(["run", *SELECT], target, variables)
    for model in MODELS:
        relation = f"{schema}.{model}"
        assert rows(spark, relation, COLUMNS) == JAN_1 + JAN_2 + JAN_3
        assert duplicate_keys(spark, relation, KEY) == []
    run_dbt(["test", *SELECT], target)

    # The upstream correction: session s01 never put the rain jacket in its cart on Jan 1,
    # and a Jan 3 row disappears too, but Jan 3 is outside the interval reloaded below.
    spark.sql(
        f"delete from {schema}.retail_session_products "
        "where (session_id = 's01' and product_id = 'P2') or session_id = 's15'"
    )
    load(target, "2026-01-01", "2026-01-02")
    corrected = [JAN_1[0], JAN_1[2], *JAN_2, *JAN_3]
    for model in MODELS:
        assert rows(spark, f"{schema}.{model}", COLUMNS) == corrected
    commits = {m: commit_count(spark, f"{schema}.{m}", table_format) for m in MODELS}

    # Every source row of Jan 2 vanishes: an empty source for a loaded interval is refused
    # (allow_empty_interval), nothing is deleted and nothing committed.
    spark.sql(f"delete from {schema}.retail_session_products where event_date = date'2026-01-02'")
    messages = describe_failure(load(target, "2026-01-02", "2026-01-03", expect_pass=False))
    assert "the source is empty" in messages
    assert "2 row(s)" in messages
    assert "allow_empty_interval" in messages
    for model in MODELS:
        assert rows(spark, f"{schema}.{model}", COLUMNS) == corrected
        assert commit_count(spark, f"{schema}.{model}", table_format) == commits[model]

    if table_format == "delta":  # the test's SQL is the same on both formats
        # a twin that differs outside the interval (another run's day, published to one twin
        # first): the interval's comparison passes, the whole tables' names the row
        spark.sql(
            f"delete from {schema}.{MODELS[1]} where event_date = date'2026-01-03' "
            "and product_id = 'P1'"
        )
        twins = ["--select", f"{MODELS[0]},test_name:same_rows_as"]
        run_dbt(["test", *twins], target, interval_vars("2026-01-01", "2026-01-03"))
        failed = run_dbt(["test", *twins], target, expect_pass=False)
        tests = [r for r in failed.result.results if r.node.resource_type == "test"]
        assert [(str(r.status), r.failures) for r in tests] == [("fail", 1)]


@pytest.mark.format_independent
@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        # the one parser refuses it (every message: tests/unit/test_interval.py)
        ("2026-02-30", "2026-03-01", "is not an ISO-8601 date or timestamp"),
        # the DATE interval column refuses it when the model renders its predicate
        ("2026-01-01T12:00:00Z", "2026-01-02", "does not start and end at midnight UTC"),
    ],
)
def test_bad_interval_vars_are_refused_before_any_sql(spark, target, schema, start, end, expected):
    run_dbt(["seed", "--select", "retail_session_products"], target)
    result = run_dbt(["run", *SELECT], target, interval_vars(start, end), expect_pass=False)
    messages = describe_failure(result)
    assert expected in messages
    assert "model.retry_safe.retail_daily_product_cart_abandonment" in messages
    tables = table_names(spark, schema)
    assert tables == {"retail_session_products"}, "a refused run created a table"
