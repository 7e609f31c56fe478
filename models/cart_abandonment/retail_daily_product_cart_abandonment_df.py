"""Daily cart abandonment per product: the DataFrame API version (reference document 000).

The same rows as retail_daily_product_cart_abandonment, built with .filter/.join/.groupBy and
merged by the same idempotent_merge strategy (configured in the yml beside this file).
"""

from pyspark.sql import functions as F


def model(dbt, session):
    # dbt-core makes a Python model a table unless it says otherwise (dbt_project.yml's
    # +materialized does not reach it); the strategy and merge configs: the folder default and
    # the yml beside this file
    dbt.config(materialized="incremental", submission_method="session")
    start_date = F.lit(dbt.interval.start.date())
    end_date = F.lit(dbt.interval.end.date())

    session_products = dbt.ref("retail_session_products").filter(
        (F.col("event_date") >= start_date) & (F.col("event_date") < end_date)
    )
    cart_sessions = session_products.filter(F.col("added_to_cart")).select(
        "session_id", "event_date", "product_id", "product_name", "category"
    )
    purchase_sessions = session_products.filter(F.col("purchased")).select(
        "session_id", "product_id", F.lit(True).alias("purchased_cart")
    )
    cart_outcomes = cart_sessions.join(
        purchase_sessions, ["session_id", "product_id"], "left"
    ).withColumn("purchased_cart", F.coalesce(F.col("purchased_cart"), F.lit(False)))
    cart_summary = cart_outcomes.groupBy(
        "event_date", "product_id", "product_name", "category"
    ).agg(
        F.count(F.lit(1)).alias("cart_session_count"),
        F.sum(F.when(F.col("purchased_cart"), 1).otherwise(0)).alias(
            "purchased_cart_session_count"
        ),
        F.sum(F.when(~F.col("purchased_cart"), 1).otherwise(0)).alias(
            "abandoned_cart_session_count"
        ),
    )
    return cart_summary.select(
        "event_date",
        "product_id",
        "product_name",
        "category",
        "cart_session_count",
        "purchased_cart_session_count",
        "abandoned_cart_session_count",
        F.when(
            F.col("cart_session_count") > 0,
            F.col("abandoned_cart_session_count") / F.col("cart_session_count"),
        )
        .otherwise(F.lit(0))
        .cast("decimal(9,4)")
        .alias("cart_abandonment_rate"),
    )
