"""Read tables and their commit metrics, for tests, the demo and benchmarks."""

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


def history(spark: Any, relation: str, table_format: str) -> list[str]:
    """The table's commits, oldest first, as operation names (Delta) or snapshot operations."""
    if table_format == "iceberg":
        frame = spark.sql(f"select operation from {relation}.snapshots order by committed_at")
    else:
        frame = spark.sql(f"describe history {relation}").orderBy("version")
    return [row["operation"] for row in frame.collect()]


def dump_tables(spark: Any, schema: str, tables: list[str], table_format: str) -> dict:
    """Each table's rows (as text, sorted) and commit history, plus the schema's relations.

    Plain JSON-able values, so that a table written by one process can be compared with the
    same table written by another.
    """
    result: dict = {
        "relations": sorted(
            row["tableName"]
            for row in spark.sql(f"show tables in {schema}").collect()
            if not row["isTemporary"]  # a session's temporary views show in every schema
        )
    }
    for table in tables:
        relation = f"{schema}.{table}"
        frame = spark.sql(f"select * from {relation}")
        ordered = frame.orderBy(*frame.columns).collect()
        result[table] = {
            "columns": frame.columns,
            "rows": [[str(value) for value in row] for row in ordered],
            "history": history(spark, relation, table_format),
        }
    return result
