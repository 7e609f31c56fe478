"""The whole project in one `dbt build`: SQL models, a Python table and Python incremental models."""

from __future__ import annotations

from support.docs import documented_columns_missing
from support.tables import rows

from retry_safe.project import interval_vars, run_dbt

DAY_1 = interval_vars("2026-10-03", "2026-10-04")


def test_one_build_runs_every_model_and_test(spark, target, schema, table_format, tmp_path):
    run_dbt(["seed"], target)
    result = run_dbt(["build", "--exclude", "resource_type:seed"], target, DAY_1)
    statuses = {r.node.unique_id: str(r.status) for r in result.result.results}
    python_models = {
        "model.retry_safe.stg_order_change_lines",  # table
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
    # A second build of the same interval changes nothing and still passes every test.
    run_dbt(["build", "--exclude", "resource_type:seed"], target, DAY_1)
    assert rows(spark, f"{schema}.orders", ["order_id", "status"])[0] == (1001, "shipped")
    # Snapshotting into the existing table (this failed on Iceberg) adds no version.
    assert rows(spark, f"{schema}.orders_snapshot", ["order_id", "status", "dbt_valid_to"]) == [
        (1001, "shipped", None),
        (1002, "cancelled", None),
        (1004, "placed", None),
        (1005, "placed", None),
    ]

    # The docs site's catalog: every model's table with exactly the columns its yml documents.
    run_dbt(["docs", "generate", "--target-path", str(tmp_path)], target)
    assert documented_columns_missing(tmp_path) == {}
