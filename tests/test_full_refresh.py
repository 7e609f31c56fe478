"""--full-refresh of interval models: a rebuild from the whole history, or a refusal.

A full refresh replaces the table with what the model returns for the interval passed. For an
interval model that is the whole history only when the interval starts at the model's begin
(dbt_project.yml sets it per pipeline); anything shorter would drop the other intervals' rows
and bring older versions back, so it is refused before anything is written.
"""

from __future__ import annotations

from datetime import date

import pytest
from support.expected import ORDER_COLUMNS, ORDERS, REJECTED, REJECTED_COLUMNS
from support.tables import commit_count, rows

from retry_safe.project import describe_failure, interval_flags, run_dbt
from retry_safe.scratch import write_project

ORDERS_DAY_2 = interval_flags("2026-10-04", "2026-10-05")
ORDERS_PIPELINE = ["run", "--select", "+orders", "+rejected_orders"]


def test_a_full_refresh_of_one_interval_is_refused_and_one_from_begin_rebuilds_the_history(
    spark, target, schema, table_format
):
    # both days in one run (loading them out of order is test_orders')
    run_dbt([*ORDERS_PIPELINE, *interval_flags("2026-10-03", "2026-10-05")], target)
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == ORDERS
    commits = {
        table: commit_count(spark, f"{schema}.{table}", table_format)
        for table in ("stg_order_change_lines", "orders", "rejected_orders")
    }

    # the staging model, an interval model too, is refused first; its children are skipped
    result = run_dbt([*ORDERS_PIPELINE, "--full-refresh", *ORDERS_DAY_2], target, expect_pass=False)
    models = [r for r in result.result.results if r.node.resource_type == "model"]
    assert {r.node.name: str(r.status) for r in models} == {
        "stg_order_change_lines": "error",
        "orders": "skipped",
        "rejected_orders": "skipped",
    }
    text = describe_failure(result)
    assert [part for part in refusal("stg_order_change_lines") if part not in text] == []
    # each child, run alone, is refused the same way
    result = run_dbt(
        ["run", "--select", "orders", "rejected_orders", "--full-refresh", *ORDERS_DAY_2],
        target,
        expect_pass=False,
    )
    text = describe_failure(result)
    for model in ("orders", "rejected_orders"):
        assert [part for part in refusal(model) if part not in text] == []
    # order 1001 still there, 1002 still cancelled, the 10-03 rejected line kept; no commit
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == ORDERS
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == REJECTED
    for table, count in commits.items():
        assert commit_count(spark, f"{schema}.{table}", table_format) == count

    # from begin: the whole history again, the same tables
    run_dbt(
        [*ORDERS_PIPELINE, "--full-refresh", *interval_flags("2026-10-03", "2026-10-05")], target
    )
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == ORDERS
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == REJECTED


def refusal(model: str) -> list[str]:
    """What refusing an orders pipeline model's --full-refresh of 2026-10-04 alone says: the
    model, the interval, its begin and the command that rebuilds its whole history."""
    return [
        f"Model model.retry_safe.{model} (incremental_strategy='idempotent_merge'): "
        "--full-refresh would rebuild",
        "from the interval [2026-10-04T00:00:00+00:00, 2026-10-05T00:00:00+00:00) only",
        "a full refresh must start at the model's begin (2026-10-03T00:00:00+00:00)",
        f"dbt run --select +{model} --full-refresh --event-time-start 2026-10-03 "
        "--event-time-end 2026-10-05",
    ]


@pytest.mark.format_independent
def test_a_model_without_begin_is_told_to_set_it(spark, target, schema, tmp_path):
    model = (
        "{{ config(materialized='incremental', incremental_strategy='idempotent_merge',"
        " unique_key='id', interval_column='day') }}\n"
        "select id, day from {{ target.schema }}.days where {{ in_interval('day', 'date') }}\n"
    )
    root = write_project(tmp_path / "no_begin", {"daily.sql": model})
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(
        f"create table {schema}.days using parquet as "
        "select * from values (1, date'2026-01-01'), (2, date'2026-01-02') as t(id, day)"
    )
    run_dbt(["run", *interval_flags("2026-01-01", "2026-01-03")], target, project_dir=root)
    result = run_dbt(
        ["run", "--full-refresh", *interval_flags("2026-01-02", "2026-01-03")],
        target,
        project_dir=root,
        expect_pass=False,
    )
    text = describe_failure(result)
    assert (
        "Model model.scratch.daily (incremental_strategy='idempotent_merge'): "
        "--full-refresh would rebuild"
    ) in text
    assert "the model has no begin config (the first day of its history)" in text
    assert rows(spark, f"{schema}.daily", ["id", "day"]) == [
        (1, date(2026, 1, 1)),
        (2, date(2026, 1, 2)),
    ]


def test_full_refresh_of_additive_batches_from_begin(spark, target, schema, table_format):
    run_dbt(["seed", "--select", "customer_balance_batches"], target)
    model = ["run", "--select", "customer_balances_additive"]
    relation = f"{schema}.customer_balances_additive"
    both = interval_flags("2026-11-01", "2026-11-03")
    run_dbt([*model, *both], target)
    expected = rows(spark, relation, ["id", "balance", "batch_id", "applied_batches"])
    assert expected == [(1, 100, 1, [1]), (2, 225, 2, [1, 2]), (3, 300, 1, [1])]
    commits = commit_count(spark, relation, table_format)
    text = describe_failure(
        run_dbt(
            [*model, "--full-refresh", *interval_flags("2026-11-02", "2026-11-03")],
            target,
            expect_pass=False,
        )
    )
    assert (
        "Model model.retry_safe.customer_balances_additive (incremental_strategy='idempotent_merge'): "
        "--full-refresh would rebuild"
    ) in text
    assert commit_count(spark, relation, table_format) == commits
    run_dbt([*model, "--full-refresh", *both], target)
    assert rows(spark, relation, ["id", "balance", "batch_id", "applied_batches"]) == expected
