"""Tables as plain JSON, for the scenario runner (`python -m retry_safe.scenario dump`): a
table written by one process compared with the same table written by another. The helpers the
tests assert with (rows, duplicate keys, commit metrics) are in tests/support/tables.py."""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.tables import ledger


def commits(spark: Any, relation: str, table_format: str) -> list[dict[str, Any]]:
    """The table's commits, oldest first, the same way on both formats (as the adapter's macro
    lakehouse_commit_history reads them; on Iceberg main's ancestry): each {version (Delta version or Iceberg snapshot id,
    as text), operation, ledger (the interval ledger entry, or None), files_added,
    files_removed}."""
    found = []
    if table_format == "iceberg":
        # main's ancestry: a write-audit-publish branch's commits count once fast-forwarded
        query = (
            f"select s.snapshot_id, s.operation, s.summary from {relation}.snapshots as s"
            f" join {relation}.history as h on h.snapshot_id = s.snapshot_id"
            " where h.is_current_ancestor order by h.made_current_at, s.snapshot_id"
        )
        for row in spark.sql(query).collect():
            summary = row["summary"] or {}
            found.append(
                {
                    "version": str(row["snapshot_id"]),
                    "operation": row["operation"],
                    "ledger": summary.get("lakehouse.ledger"),
                    "files_added": int(summary.get("added-data-files", 0)),
                    "files_removed": int(summary.get("deleted-data-files", 0)),
                }
            )
        return found
    for row in spark.sql(f"describe history {relation}").orderBy("version").collect():
        metrics = row["operationMetrics"] or {}
        found.append(
            {
                "version": str(row["version"]),
                "operation": row["operation"],
                "ledger": row["userMetadata"],
                "files_added": int(metrics.get("numTargetFilesAdded", metrics.get("numFiles", 0))),
                "files_removed": int(metrics.get("numTargetFilesRemoved", 0)),
            }
        )
    return found


def current_files(spark: Any, relation: str, table_format: str) -> int:
    """The data files of the table's current version (the adapter's own count, ledger.py)."""

    def rows(sql: str) -> list[dict[str, Any]]:
        return [row.asDict() for row in spark.sql(sql).collect()]

    return ledger.data_files(rows, relation, table_format)


def dump_tables(spark: Any, schema: str, tables: list[str], table_format: str) -> dict:
    """Each table's rows (as text, sorted), commit history, interval ledger entries (JSON
    text, oldest first) and the number of data files of its current version, plus the schema's
    relations; None for a table that does not exist.

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
        if table not in result["relations"]:
            result[table] = None  # not created (yet)
            continue
        relation = f"{schema}.{table}"
        frame = spark.sql(f"select * from {relation}")
        ordered = frame.orderBy(*frame.columns).collect()
        history = commits(spark, relation, table_format)
        result[table] = {
            "files": current_files(spark, relation, table_format),
            "columns": frame.columns,
            "rows": [[str(value) for value in row] for row in ordered],
            "history": [commit["operation"] for commit in history],
            "ledger": [commit["ledger"] for commit in history if commit["ledger"]],
        }
    return result
