"""F1 drivers merged batch by batch: the DataFrame API version (reference document 001).

The same rows as f1_drivers_merge; the document merged its third batch with the DeltaTable
Python API, here every batch goes through the same idempotent_merge strategy, on Delta and
Iceberg alike.
"""

from pyspark.sql import functions as F


def model(dbt, session):
    # dbt-core makes a Python model a table unless it says otherwise (dbt_project.yml's
    # +materialized does not reach it); the strategy and merge configs: the folder default and
    # the yml beside this file
    dbt.config(materialized="incremental", submission_method="session")
    start, end = dbt.interval.start, dbt.interval.end
    batch = dbt.ref("f1_driver_batches").filter(
        (F.col("batch_date") >= F.lit(start.date())) & (F.col("batch_date") < F.lit(end.date()))
    )
    # the batch's interval, not the wall clock: a rerun writes the same values
    loaded_at = F.lit(start.replace(tzinfo=None)).cast("timestamp")
    return batch.select(
        "driver_id",
        "dob",
        "forename",
        "surname",
        "batch_date",
        loaded_at.alias("created_date"),
        loaded_at.alias("updated_date"),
    )
