"""Reference document 003: a version-guarded merge, and an additive one applied exactly once."""

from __future__ import annotations

from support.expected import ADDITIVE_COLUMNS, ADDITIVE_RESULT, VERSIONED_AFTER_DAY_2
from support.expected import BALANCE_COLUMNS as COLUMNS
from support.expected import BALANCES_START as START
from support.tables import commit_count, rows

from retry_safe.project import interval_flags, run_dbt

DAY_1 = interval_flags("2026-11-01", "2026-11-02")
DAY_2 = interval_flags("2026-11-02", "2026-11-03")
DAY_3 = interval_flags("2026-11-03", "2026-11-04")
BOTH_DAYS = interval_flags("2026-11-01", "2026-11-03")
VERSIONED = ["run", "--select", "customer_balances_versioned"]
ADDITIVE = ["run", "--select", "customer_balances_additive"]


def test_versioned_batch_applied_twice_leaves_the_same_rows(spark, target, schema):
    run_dbt(["seed", "--select", "customer_versions"], target)
    run_dbt([*VERSIONED, *DAY_1], target)
    assert rows(spark, f"{schema}.customer_balances_versioned", COLUMNS) == START
    for _ in range(2):
        run_dbt([*VERSIONED, *DAY_2], target)
        assert (
            rows(spark, f"{schema}.customer_balances_versioned", COLUMNS) == VERSIONED_AFTER_DAY_2
        )


def test_the_documents_naive_additive_merge_applies_twice(spark, schema, table_format):
    spark.sql(f"create schema if not exists {schema}")
    table = f"{schema}.repeat_increment"
    spark.sql(
        f"create table {table} (id bigint, name string, balance bigint, version bigint, "
        f"is_deleted boolean) using {table_format}"
    )
    spark.sql(
        f"insert into {table} values (1, 'Ada', 100, 1, false), (2, 'Ben', 200, 2, false), (3, 'Cyd', 300, 1, false)"
    )
    naive = (
        f"merge into {table} as t using (select 2 as id, 'Ben' as name, 25 as balance, 3 as version, "
        "false as is_deleted) as s on t.id = s.id when matched then update set balance = t.balance + s.balance"
    )
    spark.sql(naive)
    assert rows(spark, table, COLUMNS) == [START[0], (2, "Ben", 225, 2, False), START[2]]
    spark.sql(naive)
    assert rows(spark, table, COLUMNS) == [START[0], (2, "Ben", 250, 2, False), START[2]]


def test_batch_guarded_additive_merge_applies_each_batch_once_whatever_is_rerun(
    spark, target, schema, table_format
):
    """Day 1, then day 2 (Ben 200 + 25), then every interval again: day 2, day 1 and both days
    at once (which holds both batches) find nothing to apply and commit nothing."""
    run_dbt(["seed", "--select", "customer_balance_batches"], target)
    relation = f"{schema}.customer_balances_additive"
    run_dbt([*ADDITIVE, *DAY_1], target)
    assert rows(spark, relation, ADDITIVE_COLUMNS) == [
        (1, "Ada", 100, 1, False, 1, [1]),
        (2, "Ben", 200, 2, False, 1, [1]),
        (3, "Cyd", 300, 1, False, 1, [1]),
    ]
    run_dbt([*ADDITIVE, *DAY_2], target)
    assert rows(spark, relation, ADDITIVE_COLUMNS) == ADDITIVE_RESULT
    commits = commit_count(spark, relation, table_format)
    for interval in (DAY_2, DAY_1, BOTH_DAYS):
        run_dbt([*ADDITIVE, *interval], target)
        assert rows(spark, relation, ADDITIVE_COLUMNS) == ADDITIVE_RESULT
    assert commit_count(spark, relation, table_format) == commits, "reruns commit nothing"


def test_one_interval_holding_two_batches_applies_each_once(spark, target, schema):
    """A catch-up over both days: batch 1 inserts Ben with 200, batch 2 adds 25, in one commit
    (the reruns of every interval over this table: the test above)."""
    run_dbt(["seed", "--select", "customer_balance_batches"], target)
    run_dbt([*ADDITIVE, *BOTH_DAYS], target)
    assert rows(spark, f"{schema}.customer_balances_additive", ADDITIVE_COLUMNS) == ADDITIVE_RESULT


def test_batches_run_out_of_order_apply_once_and_give_the_same_table(spark, target, schema):
    """Batch 2 first (Ben created from it: 25, version 3), then batch 1 arrives late: Ben gets
    the 200 once, and the columns that are not updated take batch 1's values, as in order."""
    run_dbt(["seed", "--select", "customer_balance_batches"], target)
    relation = f"{schema}.customer_balances_additive"
    run_dbt([*ADDITIVE, *DAY_2], target)
    assert rows(spark, relation, ADDITIVE_COLUMNS) == [(2, "Ben", 25, 3, False, 2, [2])]
    run_dbt([*ADDITIVE, *DAY_1], target)
    assert rows(spark, relation, ADDITIVE_COLUMNS) == ADDITIVE_RESULT


def test_amount_10_gives_210_then_220_only_with_a_new_batch(spark, target, schema):
    run_dbt(["seed", "--select", "customer_balance_batches"], target)
    spark.sql(f"update {schema}.customer_balance_batches set amount = 10 where batch_id = 2")
    relation = f"{schema}.customer_balances_additive"
    run_dbt([*ADDITIVE, *DAY_1], target)
    run_dbt([*ADDITIVE, *DAY_2], target)
    assert rows(spark, relation, ["id", "balance", "batch_id"]) == [
        (1, 100, 1),
        (2, 210, 2),
        (3, 300, 1),
    ]
    spark.sql(
        f"insert into {schema}.customer_balance_batches values "
        "(3, date'2026-11-03', 2, 'Ben', 10, 3, false)"
    )
    run_dbt([*ADDITIVE, *DAY_3], target)
    assert rows(spark, relation, ["id", "balance", "batch_id"]) == [
        (1, 100, 1),
        (2, 220, 3),
        (3, 300, 1),
    ]


def test_a_late_batch_and_a_new_one_in_one_interval(spark, target, schema):
    """Days 1 and 3 were loaded; a wider interval then brings the missing day 2 with them:
    only batch 2 is applied (+25); batch 3 (+10) is not applied again. (Reruns of applied
    batches: test_batch_guarded_additive_merge_applies_each_batch_once_whatever_is_rerun.)"""
    run_dbt(["seed", "--select", "customer_balance_batches"], target)
    spark.sql(
        f"insert into {schema}.customer_balance_batches values "
        "(3, date'2026-11-03', 2, 'Ben', 10, 4, false), (3, date'2026-11-03', 5, 'Eve', 7, 1, false)"
    )
    relation = f"{schema}.customer_balances_additive"
    run_dbt([*ADDITIVE, *DAY_1], target)
    run_dbt([*ADDITIVE, *DAY_3], target)
    assert rows(spark, relation, ADDITIVE_COLUMNS) == [
        (1, "Ada", 100, 1, False, 1, [1]),
        (2, "Ben", 210, 2, False, 3, [1, 3]),
        (3, "Cyd", 300, 1, False, 1, [1]),
        (5, "Eve", 7, 1, False, 3, [3]),
    ]
    expected = [
        (1, "Ada", 100, 1, False, 1, [1]),
        (2, "Ben", 235, 2, False, 3, [1, 2, 3]),
        (3, "Cyd", 300, 1, False, 1, [1]),
        (5, "Eve", 7, 1, False, 3, [3]),
    ]
    run_dbt([*ADDITIVE, *interval_flags("2026-11-01", "2026-11-04")], target)
    assert rows(spark, relation, ADDITIVE_COLUMNS) == expected
