"""Seeded, deterministic tables: the day-partitioned target and one source per case.

`spark.range` with one slice per (day, file) splits the ids into contiguous ranges without a
shuffle, so every write task holds exactly one quarter of one day: each day gets exactly
`files_per_day` files, on Delta and on Iceberg alike.
"""

from __future__ import annotations

from typing import Any

from retry_safe.bench.settings import FIRST_DAY, SCHEMA, Case, Settings

COLUMNS = ["event_date", "id", "product_id", "category", "quantity", "amount", "note"]
KEYS = ["event_date", "id"]
COW = {
    "delta": {"delta.enableDeletionVectors": "false"},
    "iceberg": {
        "write.delete.mode": "copy-on-write",
        "write.update.mode": "copy-on-write",
        "write.merge.mode": "copy-on-write",
    },
}
MOR = {
    "delta": {"delta.enableDeletionVectors": "true"},
    "iceberg": {
        "write.delete.mode": "merge-on-read",
        "write.update.mode": "merge-on-read",
        "write.merge.mode": "merge-on-read",
    },
}


def days_frame(spark: Any, s: Settings, first: int, count: int) -> Any:
    """Rows of days [first, first + count): id is consecutive, the day is id div rows_per_day."""
    rpd = s.rows_per_day
    ids = spark.range(first * rpd, (first + count) * rpd, 1, count * s.files_per_day)
    return ids.selectExpr(
        f"date_add(date'{FIRST_DAY.isoformat()}', cast(id div {rpd} as int)) as event_date",
        "id",
        "pmod(xxhash64(id, 1), 100000) as product_id",
        "concat('category-', pmod(xxhash64(id, 2), 20)) as category",
        "cast(pmod(xxhash64(id, 3), 50) + 1 as int) as quantity",
        "cast(pmod(xxhash64(id, 4), 1000000) / 100 as decimal(12, 2)) as amount",
        "substr(sha2(cast(id as string), 256), 1, 16) as note",
    )


def create_target(spark: Any, s: Settings, name: str, properties: dict[str, str]) -> None:
    """The whole table, partitioned by day, files_per_day files per day."""
    relation = f"{SCHEMA}.{name}"
    spark.sql(f"drop table if exists {relation}")
    writer = days_frame(spark, s, 0, s.days).writeTo(relation).using(s.table_format)
    writer = writer.partitionedBy(spark_col("event_date"))
    for key, value in properties.items():
        writer = writer.tableProperty(key, value)
    if s.table_format == "iceberg":
        # write as sliced above; later MERGEs use Iceberg's default distribution again
        writer = writer.tableProperty("write.distribution-mode", "none")
    writer.create()
    if s.table_format == "iceberg":
        spark.sql(f"alter table {relation} unset tblproperties ('write.distribution-mode')")


def spark_col(name: str) -> Any:
    from pyspark.sql import functions

    return functions.col(name)


def source_sql(s: Settings, case: Case) -> str:
    """The case's source: the chosen day, some amounts changed, some keys left out."""
    changed = case.changed or "false"
    columns = [
        f"cast(case when {changed} then amount + 1 else amount end as decimal(12, 2)) as amount"
        if c == "amount"
        else c
        for c in COLUMNS
    ]
    where = f"where not ({case.missing})" if case.missing else ""
    return f"select {', '.join(columns)} from day_rows {where}"


def create_source(spark: Any, s: Settings, case: Case) -> str:
    name = f"src_{case.name}"
    days_frame(spark, s, s.day_index, 1).createOrReplaceTempView("day_rows")
    spark.sql(f"drop table if exists {SCHEMA}.{name}")
    spark.sql(f"create table {SCHEMA}.{name} using {s.table_format} as {source_sql(s, case)}")
    spark.catalog.dropTempView("day_rows")
    return name
