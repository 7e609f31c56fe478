"""`make demo`: seed, build and test every pipeline over its demo intervals, then show results.

Runs in one Python process (one SparkSession) on the target given by DBT_TARGET (default
local, the embedded Spark with Delta Lake).
"""

from __future__ import annotations

import os
import sys

from retry_safe.project import PROJECT_DIR, configure_environment, interval_flags, run_dbt

# (selector, [interval, ...]) in the order a scheduler would run them
PIPELINES: list[tuple[str, list[tuple[str, str]]]] = [
    ("path:models/cart_abandonment", [("2026-01-01", "2026-01-04")]),
    ("path:models/order_changes", [("2026-10-03", "2026-10-04"), ("2026-10-04", "2026-10-05")]),
    (
        "path:models/f1_drivers",
        [("2026-11-01", "2026-11-02"), ("2026-11-02", "2026-11-03"), ("2026-11-03", "2026-11-04")],
    ),
    ("path:models/customer_balances", [("2026-11-01", "2026-11-02"), ("2026-11-02", "2026-11-03")]),
]
SHOW = {
    "retail_daily_product_cart_abandonment": "event_date, product_id",
    "orders": "order_id",
    "rejected_orders": "source_file, line_number",
    "f1_drivers_merge": "driver_id",
    "customer_balances_versioned": "id",
    "customer_balances_additive": "id",
}


def build_all(target: str) -> None:
    run_dbt(["seed"], target)
    for selector, intervals in PIPELINES:
        for start, end in intervals:
            run_dbt(
                ["build", "--select", selector, "--exclude", "resource_type:seed"]
                + interval_flags(start, end),
                target,
            )


def show_results(schema: str) -> None:
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    print(f"\nWarehouse: {spark.conf.get('spark.sql.warehouse.dir')}  (schema {schema})")
    for table, order in SHOW.items():
        print(f"\n{schema}.{table}")
        spark.sql(f"select * from {schema}.{table} order by {order}").show(25, truncate=False)


def main() -> int:
    configure_environment()
    target = os.environ.get("DBT_TARGET", "local")
    os.chdir(PROJECT_DIR)
    build_all(target)
    show_results(os.environ.get("LAKEHOUSE_SCHEMA", "analytics"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
