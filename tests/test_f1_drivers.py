"""Reference document 001: three daily F1 driver batches, SQL and DataFrame models."""

from __future__ import annotations

from support.expected import F1_AFTER_DAY_1, F1_AFTER_DAY_2, F1_AFTER_DAY_3, F1_COLUMNS, F1_MODELS
from support.tables import leftover_folders, rows

from retry_safe.project import interval_flags, run_dbt

SAME_ROWS = "same_rows_as_f1_drivers_merge_ref_f1_drivers_merge_df_"


def load(target: str, day: int) -> None:
    run_dbt(
        [
            "run",
            "--select",
            "f1_drivers",
            *interval_flags(f"2026-11-0{day}", f"2026-11-0{day + 1}"),
        ],
        target,
    )


def test_three_batches_give_the_documents_tables_and_reruns_in_any_order_keep_them(
    spark, target, schema
):
    run_dbt(["seed", "--select", "f1_drivers"], target)
    for day, expected in ((1, F1_AFTER_DAY_1), (2, F1_AFTER_DAY_2), (3, F1_AFTER_DAY_3)):
        load(target, day)
        for model in F1_MODELS:
            assert rows(spark, f"{schema}.{model}", F1_COLUMNS) == expected, (model, day)
    sql = rows(spark, f"{schema}.f1_drivers_merge", ["*"], ["driver_id"])
    python = rows(spark, f"{schema}.f1_drivers_merge_df", ["*"], ["driver_id"])
    assert sql == python

    # the older days again, newest first: created and updated dates and the names stay as
    # they are (a retry of the newest day is the cart's and the balances' tests')
    for day in (2, 1):
        load(target, day)
    for model in F1_MODELS:
        assert rows(spark, f"{schema}.{model}", F1_COLUMNS) == F1_AFTER_DAY_3, model
    run_dbt(["test", "--select", "f1_drivers"], target)
    # five runs of each model: no folder but the tables' (the Python model stages its rows in a
    # temporary view; a staging table's Iceberg DROP without PURGE once kept every file)
    assert leftover_folders(spark, schema) == []

    # the twins' data test (same_rows_as, macros/tests) catches a row on which they disagree:
    # the changed row is in each table and not in the other
    spark.sql(f"update {schema}.f1_drivers_merge_df set surname = 'Hamilton' where driver_id = 2")
    result = run_dbt(["test", "--select", "f1_drivers"], target, expect_pass=False)
    tests = [r for r in result.result.results if r.node.resource_type == "test"]
    assert {r.node.name: r.failures for r in tests if str(r.status) != "pass"} == {SAME_ROWS: 2}
