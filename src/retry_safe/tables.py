"""Tables as plain JSON, for the scenario runner (`python -m retry_safe.scenario dump`): a
table written by one process compared with the same table written by another. The helpers the
tests assert with (rows, duplicate keys, commit metrics) are in tests/support/tables.py."""

from __future__ import annotations

from typing import Any


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
