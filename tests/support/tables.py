"""Read tables and their commit metrics in the tests' assertions (through the test process's
SparkSession)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pyarrow
from pyarrow import parquet

from retry_safe.tables import commits


def rows(
    spark: Any, relation: str, columns: list[str], order_by: list[str] | None = None
) -> list[tuple]:
    """The table's rows as plain tuples of the given columns, sorted."""
    order = ", ".join(order_by or columns)
    query = f"select {', '.join(columns)} from {relation} order by {order}"
    return [tuple(row) for row in spark.sql(query).collect()]


def table_names(spark: Any, schema: str) -> set[str]:
    """The schema's tables and views (a session's temporary views left out)."""
    listed = spark.sql(f"show tables in {schema}").collect()
    return {row.tableName for row in listed if not row.isTemporary}


def leftover_folders(spark: Any, schema: str) -> list[str]:
    """The folders of the schema's warehouse folder that belong to no table of the schema (a
    dropped staging table's files, a table living in another table's folder): none expected."""
    warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
    folder = warehouse / f"{schema}.db"
    found = {path.name for path in folder.iterdir() if path.is_dir()} if folder.is_dir() else set()
    listed = spark.sql(f"show tables in {schema}").collect()
    return sorted(found - {row.tableName for row in listed if not row.isTemporary})


def duplicate_keys(spark: Any, relation: str, keys: list[str]) -> list[tuple]:
    key_list = ", ".join(keys)
    query = (
        f"select {key_list}, count(*) as n from {relation} group by {key_list} having count(*) > 1"
    )
    return [tuple(row) for row in spark.sql(query).collect()]


def commit_count(spark: Any, relation: str, table_format: str) -> int:
    return len(commits(spark, relation, table_format))


def expire_history(spark, relation: str, table_format: str) -> None:
    """What a platform team's routine maintenance does to a table's history: Iceberg's
    expire_snapshots down to the newest snapshot; Delta's log cleanup, which deletes the
    commits older than delta.logRetentionDuration at a checkpoint (by the files' modification
    time, cut at a day: the commits are made 40 days old here, as on a table loaded for long)."""
    if table_format == "iceberg":
        spark.sql(
            f"call spark_catalog.system.expire_snapshots(table => '{relation}', "
            "older_than => current_timestamp(), retain_last => 1)"
        ).collect()
        return
    location = spark.sql(f"describe detail {relation}").first()["location"]
    aged = time.time() - 40 * 86400
    for path in Path(location.removeprefix("file:"), "_delta_log").iterdir():
        os.utime(path, (aged, aged))
    # this commit is checkpointed at once (interval 1), and the checkpoint cleans the log
    spark.sql(
        f"alter table {relation} set tblproperties ('delta.logRetentionDuration' = "
        "'interval 7 days', 'delta.checkpointInterval' = '1')"
    )


def plant_orphan(table: Path, table_format: str, columns: dict[str, list]) -> Path:
    """A data file a writer killed ten days ago left in the table's folder (Iceberg's data/),
    in no version of the table: past the 7-day retention, so `lakehouse maintain` deletes it.
    On a bucket of the local S3 server, table is its file folder: a file's modification time
    is its object's."""
    orphan = (table / "data" if table_format == "iceberg" else table) / "part-killed.parquet"
    orphan.parent.mkdir(parents=True, exist_ok=True)
    parquet.write_table(pyarrow.table(columns), orphan)
    aged = time.time() - 10 * 86400
    os.utime(orphan, (aged, aged))
    return orphan
