"""`lakehouse maintain`: the selected tables kept healthy for years, beside running loads.

A table loaded every day grows a file or more per MERGE and a commit per run, and keeps the
files of every version it ever had. Per table, maintain:

- compacts small files (Delta `OPTIMIZE`, Iceberg `rewrite_data_files`): one commit that
  rewrites data, not rows;
- expires history older than the retention window, and deletes the files only that history
  held (Delta `VACUUM ... RETAIN`, which also deletes files no commit ever named, such as a
  killed MERGE's; Iceberg `expire_snapshots` and `remove_orphan_files`);
- drops the staging tables a killed run left beside it (`<model>__dbt_tmp`, older than the
  window).

The interval ledger is a table of its own (ledger.py), so expiring history loses no loaded
interval; the ledger table is maintained with the selection.

Safe beside a running load: a compaction commit that a MERGE meets is a concurrent commit, and
the MERGE plans again (conflicts.py); a compaction that meets a MERGE is tried again here the
same way. Readers: no file a version inside the window needs is deleted, so a query reading a
version up to the window's age never fails on a vacuumed file. The window is `--retain`
(default 7 days), refused below the formats' own safe minimums: Delta's VACUUM retention check
(7 days, its default `delta.deletedFileRetentionDuration`: a shorter one can delete files a
running writer is about to commit), Iceberg's 24 hours for orphan files (a shorter one can
delete the files of a commit in flight).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from dbt.adapters.lakehouse.strategy import conflicts

DEFAULT_RETAIN = "7d"
# hours; what each format itself refuses or warns against (module docstring)
MINIMUM_HOURS = {"delta": 168, "iceberg": 24}
MINIMUM_WHY = {
    "delta": "Delta's VACUUM refuses a retention under its deleted-file retention (7 days): "
    "files younger than that may belong to a commit a running writer is about to make",
    "iceberg": "Iceberg refuses to remove orphan files younger than 24 hours: they may "
    "belong to a commit in flight",
}
STAGING_SUFFIX = "__dbt_tmp"

# a statement's rows as dicts (column name: value)
Run = Callable[[str], list[dict[str, Any]]]


class MaintenanceError(Exception):
    """A refusal: nothing was changed."""


def parse_retain(text: str) -> float:
    """The retention window in hours: `7d`, `36h`, `2w`."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([hdw])\s*", text or "")
    if not found:
        raise MaintenanceError(
            f"--retain {text!r} is not a duration: write it as hours, days or weeks (36h, 7d, 2w)."
        )
    return float(found[1]) * {"h": 1, "d": 24, "w": 168}[found[2]]


def retention_problem(hours: float, table_format: str, text: str) -> str | None:
    """Why a window is too short for a format, with the fix; None when it is long enough."""
    minimum = MINIMUM_HOURS[table_format]
    if hours >= minimum:
        return None
    return (
        f"--retain {text} is shorter than the {table_format} minimum of {shown(minimum)}: "
        f"{MINIMUM_WHY[table_format]}. Give --retain {shown(minimum)} or more."
    )


def shown(hours: float) -> str:
    return f"{hours / 24:g}d" if hours % 24 == 0 else f"{hours:g}h"


@dataclass(frozen=True)
class Table:
    schema: str
    identifier: str
    table_format: str
    model: str = ""

    @property
    def name(self) -> str:
        return f"{self.schema}.{self.identifier}"


def ownership_problem(run: Run, table: Table, warehouse: str) -> str | None:
    """Why the table is not one maintain may change, with the fix; None when it may: a table
    of another format than the model says, or one whose files live outside the warehouse
    (another tool's table, registered here)."""
    provider, location = described(run, table)
    found_format = "delta" if provider == "delta" else "iceberg" if provider else None
    if found_format != table.table_format:
        return (
            f"{table.name} ({table.model}) is a {provider or 'non-lakehouse'} table, not "
            f"{table.table_format}: maintain changes only the tables its models write. Leave "
            "it to the tool that owns it, or select without it."
        )
    if not under(location, warehouse):
        return (
            f"{table.name} ({table.model}) keeps its files at {location}, outside the "
            f"warehouse ({warehouse}): another tool owns that folder, and its own maintenance "
            "decides what may be deleted there. Select without it."
        )
    return None


def described(run: Run, table: Table) -> tuple[str | None, str]:
    """(provider: 'delta', 'iceberg' or another, location) of a table."""
    rows = run(f"describe table extended {table.name}")
    info = {str(r["col_name"]).strip(): str(r["data_type"] or "").strip() for r in rows}
    provider = info.get("Provider", "").lower()
    if "ICEBERG" in info.get("Table Properties", "").upper() and provider == "hive":
        provider = "iceberg"
    return provider or None, info.get("Location", "")


def under(location: str, warehouse: str) -> bool:
    def plain(path: str) -> str:
        return re.sub(r"^file:(//)?", "", path).rstrip("/")

    return plain(location).startswith(plain(warehouse) + "/")


def maintain(run: Run, table: Table, hours: float, dry_run: bool) -> dict[str, Any]:
    """Maintain one table (or, dry, say what would be done): its record for the report."""
    cutoff = datetime.now(UTC) - timedelta(hours=hours)
    if table.table_format == "delta":
        record = maintain_delta(run, table, hours, dry_run)
    else:
        record = maintain_iceberg(run, table, cutoff, dry_run)
    record["dropped"] = leftovers(run, table, cutoff, dry_run)
    return record


def leftovers(run: Run, table: Table, cutoff: datetime, dry_run: bool) -> list[str]:
    """The model's staging table a killed run left (`<model>__dbt_tmp`: a Python model's rows,
    dropped by its next run), dropped with its files when nothing has written it within the
    window (a run may be writing it now); dry: named only."""
    name = f"{table.identifier}{STAGING_SUFFIX}"
    listed = run(f"show tables in {table.schema} like '{name}'")
    if not [row for row in listed if not row.get("isTemporary")]:
        return []
    staging = f"{table.schema}.{name}"
    written = last_write(run, staging, table.table_format)
    if written is None or written >= cutoff:
        return []
    if not dry_run:
        purge = " purge" if table.table_format == "iceberg" else ""
        run(f"drop table if exists {staging}{purge}")
    return [staging]


def last_write(run: Run, name: str, table_format: str) -> datetime | None:
    """When the table's newest commit was made (UTC), or None when it has none."""
    if table_format == "delta":
        rows = run(f"describe history {name} limit 1")
        moment = rows[0]["timestamp"] if rows else None
    else:
        moment = run(f"select max(committed_at) as at from {name}.snapshots")[0]["at"]
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def format_problem(table: Table) -> str | None:
    if table.table_format in MINIMUM_HOURS:
        return None
    return (
        f"{table.model} is not a Delta or Iceberg table (file_format "
        f"{table.table_format or 'not set'}): maintain compacts and expires only those formats. "
        "Select without it."
    )


def maintain_delta(run: Run, table: Table, hours: float, dry_run: bool) -> dict[str, Any]:
    """OPTIMIZE, then VACUUM. Delta 4 takes VACUUM's window from the table's
    delta.deletedFileRetentionDuration (a RETAIN clause other than 0 hours is ignored), so the
    window is set there first when it differs (with delta.logRetentionDuration, which Delta
    requires to be at least as long): a metadata commit, once."""
    before = delta_state(run, table)
    record: dict[str, Any] = {"table": table.name, "model": table.model, "format": "delta"}
    record["before"] = before
    retention = set_delta_retention(run, table, hours, dry_run)
    if retention:
        record["retention_set"] = retention
    doomed = len(run(f"vacuum {table.name} dry run"))
    if dry_run:
        record["would"] = {"compact_files": before["small_files"], "delete_files": doomed}
        return record
    optimized = retried(run, f"optimize {table.name}")
    metrics = optimized[0].get("metrics") if optimized else None
    record["compacted"] = {
        "files_removed": int(field(metrics, "numFilesRemoved") or 0),
        "files_added": int(field(metrics, "numFilesAdded") or 0),
    }
    versions = len(run(f"describe history {table.name}"))
    run(f"vacuum {table.name}")
    deleted = vacuum_metrics(run, table)
    record["expired"] = {
        "files_deleted": deleted.get("numDeletedFiles", doomed),
        "bytes_freed": deleted.get("sizeOfDataToDelete"),
        "history_before": versions,
    }
    record["after"] = delta_state(run, table)
    return record


def set_delta_retention(run: Run, table: Table, hours: float, dry_run: bool) -> str | None:
    """Set the table's deleted-file retention to the window when it differs (and its log
    retention to at least as long); what was set, or None."""
    properties = {r["key"]: r["value"] for r in run(f"show tblproperties {table.name}")}
    wanted = f"interval {hours:g} hours"
    current = properties.get("delta.deletedFileRetentionDuration", "interval 1 weeks")
    if interval_hours(current) == hours:
        return None
    changes = {"delta.deletedFileRetentionDuration": wanted}
    log = properties.get("delta.logRetentionDuration", "interval 30 days")
    if interval_hours(log) < hours:
        changes["delta.logRetentionDuration"] = wanted
    if not dry_run:
        pairs = ", ".join(f"'{k}' = '{v}'" for k, v in changes.items())
        retried(run, f"alter table {table.name} set tblproperties ({pairs})")
    return wanted


def interval_hours(text: str) -> float | None:
    """A Delta interval property (`interval 1 weeks`, `interval 30 days`) in hours."""
    units = {"hour": 1, "day": 24, "week": 168}
    found = re.fullmatch(r"\s*interval\s+(\d+(?:\.\d+)?)\s+(hour|day|week)s?\s*", text or "")
    return float(found[1]) * units[found[2]] if found else None


def delta_state(run: Run, table: Table) -> dict[str, Any]:
    """The files the table's current version holds (describe detail: no data read); OPTIMIZE
    compacts those under 1 GiB, so every file of a table of small files counts as small."""
    detail = run(f"describe detail {table.name}")[0]
    files = int(detail["numFiles"])
    return {"files": files, "bytes": int(detail["sizeInBytes"]), "small_files": files * (files > 1)}


def vacuum_metrics(run: Run, table: Table) -> dict[str, int]:
    """What Delta recorded of the VACUUM it just ran: its VACUUM START commit's
    sizeOfDataToDelete and its VACUUM END commit's numDeletedFiles (Delta 4 logs both)."""
    found: dict[str, int] = {}
    for row in run(f"describe history {table.name} limit 2"):
        if str(row.get("operation", "")).startswith("VACUUM"):
            metrics = dict(row.get("operationMetrics") or {})
            found.update({k: int(v) for k, v in metrics.items() if str(v).isdigit()})
    return found


def maintain_iceberg(run: Run, table: Table, cutoff: datetime, dry_run: bool) -> dict[str, Any]:
    before = iceberg_state(run, table)
    record: dict[str, Any] = {"table": table.name, "model": table.model, "format": "iceberg"}
    record["before"] = before
    at = f"timestamp '{cutoff.strftime('%Y-%m-%d %H:%M:%S')}'"
    call = "call spark_catalog.system"
    orphans = f"{call}.remove_orphan_files(table => '{table.name}', older_than => {at}"
    if dry_run:
        expirable = run(
            f"select count(*) as n from {table.name}.snapshots where committed_at < {at}"
            f" and snapshot_id <> (select snapshot_id from {table.name}.refs where name = 'main')"
        )[0]["n"]
        record["would"] = {
            "compact_files": before["small_files"],
            "expire_snapshots": int(expirable),
            "delete_orphans": len(run(f"{orphans}, dry_run => true)")),
        }
        return record
    rewritten = retried(
        run,
        f"{call}.rewrite_data_files(table => '{table.name}', "
        "options => map('min-input-files', '2'))",
    )
    stats = rewritten[0] if rewritten else {}
    record["compacted"] = {
        "files_removed": int(stats.get("rewritten_data_files_count") or 0),
        "files_added": int(stats.get("added_data_files_count") or 0),
    }
    held = all_files_bytes(run, table)
    keep = current_within(run, table, at)
    expired = retried(
        run,
        f"{call}.expire_snapshots(table => '{table.name}', older_than => {at}, "
        f"retain_last => {keep})",
    )
    found_orphans = run(f"{orphans})")
    stats = expired[0] if expired else {}
    record["expired"] = {
        "snapshots": before["snapshots"] - iceberg_state(run, table)["snapshots"],
        "files_deleted": int(stats.get("deleted_data_files_count") or 0)
        + int(stats.get("deleted_manifest_files_count") or 0)
        + int(stats.get("deleted_manifest_lists_count") or 0)
        + len(found_orphans),
        "bytes_freed": held - all_files_bytes(run, table),
        "history_before": before["snapshots"],
    }
    record["after"] = iceberg_state(run, table)
    return record


def current_within(run: Run, table: Table, at: str) -> int:
    """How many of main's newest snapshots to keep: those made current within the window and
    the one current at its start. Iceberg ages a snapshot from its creation, so a snapshot
    created before the window but current until a minute ago would go, and its files with it,
    under a reader still scanning it."""
    row = run(
        f"select count(*) as n from {table.name}.history "
        f"where is_current_ancestor and made_current_at >= {at}"
    )[0]
    return int(row["n"]) + 1


def iceberg_state(run: Run, table: Table) -> dict[str, Any]:
    files = run(
        f"select count(*) as n, coalesce(sum(file_size_in_bytes), 0) as b, "
        f"count_if(file_size_in_bytes < 64 * 1024 * 1024) as small from {table.name}.files"
    )[0]
    snapshots = run(f"select count(*) as n from {table.name}.snapshots")[0]
    small = int(files["small"])
    return {
        "files": int(files["n"]),
        "bytes": int(files["b"]),
        "small_files": small if small > 1 else 0,
        "snapshots": int(snapshots["n"]),
    }


def all_files_bytes(run: Run, table: Table) -> int:
    """The bytes of the data files any kept snapshot of the table holds."""
    row = run(
        f"select coalesce(sum(file_size_in_bytes), 0) as b from "
        f"(select distinct file_path, file_size_in_bytes from {table.name}.all_files)"
    )[0]
    return int(row["b"])


def field(value: Any, name: str) -> Any:
    """A field of a struct as PySpark or dbt hands it over (a Row, a dict, a JSON string)."""
    if value is None:
        return None
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def retried(run: Run, sql: str) -> list[dict[str, Any]]:
    """A maintenance commit, tried again when a writer's commit beat it: it is planned again
    from the table as it now is (conflicts.retrying)."""
    return conflicts.retrying(lambda: run(sql))


# -- the report -------------------------------------------------------------------------------


def report_lines(records: list[dict[str, Any]], dry_run: bool) -> list[str]:
    """The report for a person: one block per table."""
    lines = []
    for r in records:
        before = r["before"]
        head = f"{r['table']} ({r['format']}): {before['files']} files, {size(before['bytes'])}"
        if dry_run:
            would = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in r["would"].items())
            lines.append(f"{head}; would {would}")
            continue
        after, compacted, expired = r["after"], r["compacted"], r["expired"]
        freed = expired.get("bytes_freed")
        lines.append(
            f"{head} -> {after['files']} files, {size(after['bytes'])}; compacted "
            f"{compacted['files_removed']} files into {compacted['files_added']}; "
            + (f"{expired['snapshots']} snapshots expired, " if "snapshots" in expired else "")
            + f"{expired['files_deleted']} files deleted"
            + (f", {size(freed)} freed" if freed is not None else "")
        )
    for r in records:
        for dropped in r.get("dropped", []):
            lines.append(f"{dropped}: a staging table left by a killed run, dropped")
    return lines


def size(count: int | None) -> str:
    if count is None:
        return "unknown size"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(count) < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GiB"
