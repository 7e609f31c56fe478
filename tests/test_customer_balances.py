"""Reference document 003: a version-guarded merge, and an additive one applied exactly once."""

from __future__ import annotations

from support.tables import commit_count, rows

from retry_safe.project import interval_vars, run_dbt

DAY_1 = interval_vars("2026-11-01", "2026-11-02")
DAY_2 = interval_vars("2026-11-02", "2026-11-03")
DAY_3 = interval_vars("2026-11-03", "2026-11-04")
COLUMNS = ["id", "name", "balance", "version", "is_deleted"]
START = [(1, "Ada", 100, 1, False), (2, "Ben", 200, 2, False), (3, "Cyd", 300, 1, False)]
# Reference document 003's versioned table after day 2: Ben's version 3 with 250, Dan new.
VERSIONED_AFTER_DAY_2 = [
    (1, "Ada", 100, 1, False),
    (2, "Ben", 250, 3, False),
    (3, "Cyd", 300, 1, False),
    (4, "Dan", 400, 1, False),
]


def test_versioned_batch_applied_twice_leaves_the_same_rows(spark, target, schema):
    run_dbt(["seed", "--select", "customer_versions"], target)
    run_dbt(["run", "--select", "customer_balances_versioned"], target, DAY_1)
    assert rows(spark, f"{schema}.customer_balances_versioned", COLUMNS) == START
    for _ in range(2):
        run_dbt(["run", "--select", "customer_balances_versioned"], target, DAY_2)
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


def test_batch_guarded_additive_merge_applies_each_batch_once(spark, target, schema):
    run_dbt(["seed", "--select", "customer_balance_batches"], target)
    model = ["run", "--select", "customer_balances_additive"]
    run_dbt(model, target, DAY_1)
    assert rows(spark, f"{schema}.customer_balances_additive", COLUMNS) == START
    for variables in (DAY_2, DAY_2, DAY_1, DAY_2):
        run_dbt(model, target, variables)
        assert rows(spark, f"{schema}.customer_balances_additive", COLUMNS) == [
            START[0],
            (2, "Ben", 225, 2, False),
            START[2],
        ]


def test_amount_10_gives_210_then_220_only_with_a_new_batch(spark, target, schema):
    run_dbt(["seed", "--select", "customer_balance_batches"], target)
    spark.sql(f"update {schema}.customer_balance_batches set amount = 10 where batch_id = 2")
    model = ["run", "--select", "customer_balances_additive"]
    relation = f"{schema}.customer_balances_additive"
    run_dbt(model, target, DAY_1)
    run_dbt(model, target, DAY_2)
    assert rows(spark, relation, ["id", "balance", "batch_id"]) == [
        (1, 100, 1),
        (2, 210, 2),
        (3, 300, 1),
    ]
    run_dbt(model, target, DAY_2)
    assert rows(spark, relation, ["id", "balance", "batch_id"]) == [
        (1, 100, 1),
        (2, 210, 2),
        (3, 300, 1),
    ]
    spark.sql(
        f"insert into {schema}.customer_balance_batches values "
        "(3, date'2026-11-03', 2, 'Ben', 10, 3, false)"
    )
    run_dbt(model, target, DAY_3)
    run_dbt(model, target, DAY_3)
    assert rows(spark, relation, ["id", "balance", "batch_id"]) == [
        (1, 100, 1),
        (2, 220, 3),
        (3, 300, 1),
    ]


# Every column of the additive table: applied_batches lists the batches applied to the row.
ADDITIVE_COLUMNS = [*COLUMNS, "batch_id", "applied_batches"]
# Reference document 003's result (Ben 200 + 25), worked out by hand: each batch once.
ADDITIVE_RESULT = [
    (1, "Ada", 100, 1, False, 1, [1]),
    (2, "Ben", 225, 2, False, 2, [1, 2]),
    (3, "Cyd", 300, 1, False, 1, [1]),
]
BOTH_DAYS = interval_vars("2026-11-01", "2026-11-03")


def test_one_interval_holding_two_batches_applies_each_once(spark, target, schema, table_format):
    """A catch-up over both days: batch 1 inserts Ben with 200, batch 2 adds 25, in one commit."""
    run_dbt(["seed", "--select", "customer_balance_batches"], target)
    model = ["run", "--select", "customer_balances_additive"]
    relation = f"{schema}.customer_balances_additive"
    run_dbt(model, target, BOTH_DAYS)
    assert rows(spark, relation, ADDITIVE_COLUMNS) == ADDITIVE_RESULT
    commits = commit_count(spark, relation, table_format)
    for variables in (BOTH_DAYS, DAY_2, DAY_1, BOTH_DAYS):
        run_dbt(model, target, variables)
        assert rows(spark, relation, ADDITIVE_COLUMNS) == ADDITIVE_RESULT
    assert commit_count(spark, relation, table_format) == commits, "reruns commit nothing"


def test_batches_run_out_of_order_apply_once_and_give_the_same_table(spark, target, schema):
    """Batch 2 first (Ben created from it: 25, version 3), then batch 1 arrives late: Ben gets
    the 200 once, and the columns that are not updated take batch 1's values, as in order."""
    run_dbt(["seed", "--select", "customer_balance_batches"], target)
    model = ["run", "--select", "customer_balances_additive"]
    relation = f"{schema}.customer_balances_additive"
    run_dbt(model, target, DAY_2)
    assert rows(spark, relation, ADDITIVE_COLUMNS) == [(2, "Ben", 25, 3, False, 2, [2])]
    run_dbt(model, target, DAY_1)
    assert rows(spark, relation, ADDITIVE_COLUMNS) == ADDITIVE_RESULT
    for variables in (DAY_1, DAY_2, BOTH_DAYS):
        run_dbt(model, target, variables)
        assert rows(spark, relation, ADDITIVE_COLUMNS) == ADDITIVE_RESULT


def test_a_late_batch_and_a_new_one_in_one_interval(spark, target, schema):
    """Days 1 and 3 were loaded; a wider interval then brings the missing day 2 with them:
    only batch 2 is applied (+25), then batch 3 (+10) once, whatever is rerun."""
    run_dbt(["seed", "--select", "customer_balance_batches"], target)
    spark.sql(
        f"insert into {schema}.customer_balance_batches values "
        "(3, date'2026-11-03', 2, 'Ben', 10, 4, false), (3, date'2026-11-03', 5, 'Eve', 7, 1, false)"
    )
    model = ["run", "--select", "customer_balances_additive"]
    relation = f"{schema}.customer_balances_additive"
    run_dbt(model, target, DAY_1)
    run_dbt(model, target, DAY_3)
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
    for _ in range(2):
        run_dbt(model, target, interval_vars("2026-11-01", "2026-11-04"))
        assert rows(spark, relation, ADDITIVE_COLUMNS) == expected
