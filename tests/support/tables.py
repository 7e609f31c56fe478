"""Read tables and their commit metrics in the tests' assertions (through the test process's
SparkSession)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def rows(
    spark: Any, relation: str, columns: list[str], order_by: list[str] | None = None
) -> list[tuple]:
    """The table's rows as plain tuples of the given columns, sorted."""
    order = ", ".join(order_by or columns)
    query = f"select {', '.join(columns)} from {relation} order by {order}"
    return [tuple(row) for row in spark.sql(query).collect()]


def duplicate_keys(spark: Any, relation: str, keys: list[str]) -> list[tuple]:
    key_list = ", ".join(keys)
    query = (
        f"select {key_list}, count(*) as n from {relation} group by {key_list} having count(*) > 1"
    )
    return [tuple(row) for row in spark.sql(query).collect()]


@dataclass(frozen=True)
class Commit:
    """The newest commit of a table: its id and the data files it added and removed."""

    version: str
    operation: str
    files_added: int
    files_removed: int


def last_commit(spark: Any, relation: str, table_format: str) -> Commit:
    if table_format == "iceberg":
        row = spark.sql(
            f"select snapshot_id, operation, summary from {relation}.snapshots "
            "order by committed_at desc limit 1"
        ).first()
        summary = row["summary"]
        return Commit(
            version=str(row["snapshot_id"]),
            operation=row["operation"],
            files_added=int(summary.get("added-data-files", 0)),
            files_removed=int(summary.get("deleted-data-files", 0)),
        )
    row = spark.sql(f"describe history {relation} limit 1").first()
    metrics = row["operationMetrics"] or {}
    return Commit(
        version=str(row["version"]),
        operation=row["operation"],
        files_added=int(metrics.get("numTargetFilesAdded", metrics.get("numFiles", 0))),
        files_removed=int(metrics.get("numTargetFilesRemoved", 0)),
    )


def commit_count(spark: Any, relation: str, table_format: str) -> int:
    if table_format == "iceberg":
        return spark.sql(f"select count(*) from {relation}.snapshots").first()[0]
    return spark.sql(f"describe history {relation}").count()
