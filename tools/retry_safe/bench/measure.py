"""Table versions, commit metrics, resetting a table, and checking its final rows."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import date
from typing import Any

from retry_safe.bench.contenders import day_bounds
from retry_safe.bench.data import COLUMNS
from retry_safe.bench.settings import SCHEMA


def current_version(spark: Any, table: str, table_format: str) -> str:
    """Delta table version, or the Iceberg snapshot the main branch points at."""
    relation = f"{SCHEMA}.{table}"
    if table_format == "iceberg":
        row = spark.sql(f"select snapshot_id from {relation}.refs where name = 'main'").first()
        return str(row[0])
    return str(spark.sql(f"describe history {relation} limit 1").first()["version"])


def reset(spark: Any, table: str, table_format: str, version: str) -> None:
    """Put the table back to a version: Delta RESTORE, Iceberg rollback to the snapshot."""
    if current_version(spark, table, table_format) == version:
        return
    if table_format == "iceberg":
        spark.sql(f"call spark_catalog.system.rollback_to_snapshot('{SCHEMA}.{table}', {version})")
    else:
        spark.sql(f"restore table {SCHEMA}.{table} to version as of {version}")


@dataclass
class Metrics:
    """What the commits after a given version did to the table's data files."""

    commits: int = 0
    files_added: int = 0
    files_removed: int = 0
    delete_files_added: int = 0
    bytes_added: int = 0
    bytes_removed: int = 0
    rows_written: int = 0
    rows_removed: int = 0
    delta_rows_copied: int = 0

    def add(self, other: Metrics) -> None:
        for key, value in asdict(other).items():
            setattr(self, key, getattr(self, key) + value)


def _delta_metrics(m: dict[str, str]) -> Metrics:
    def get(name: str) -> int:
        return int(m.get(name) or 0)

    written = sum(
        get(n)
        for n in (
            "numTargetRowsCopied",
            "numTargetRowsUpdated",
            "numTargetRowsInserted",
            "numTargetRowsNotMatchedBySourceUpdated",
        )
    )
    return Metrics(
        commits=1,
        files_added=get("numTargetFilesAdded"),
        files_removed=get("numTargetFilesRemoved"),
        delete_files_added=get("numTargetDeletionVectorsAdded"),
        bytes_added=get("numTargetBytesAdded"),
        bytes_removed=get("numTargetBytesRemoved"),
        rows_written=written,
        delta_rows_copied=get("numTargetRowsCopied"),
    )


def _iceberg_metrics(s: dict[str, str]) -> Metrics:
    def get(name: str) -> int:
        return int(s.get(name) or 0)

    return Metrics(
        commits=1,
        files_added=get("added-data-files"),
        files_removed=get("deleted-data-files"),
        delete_files_added=get("added-delete-files"),
        bytes_added=get("added-files-size"),
        bytes_removed=get("removed-files-size"),
        rows_written=get("added-records"),
        rows_removed=get("deleted-records"),
    )


def commits_since(spark: Any, table: str, table_format: str, version: str) -> Metrics:
    """Sum of the metrics of every commit made after `version` (the run's own commits)."""
    relation = f"{SCHEMA}.{table}"
    total = Metrics()
    if table_format == "iceberg":
        snapshots = {
            str(r["snapshot_id"]): r
            for r in spark.sql(
                f"select snapshot_id, parent_id, summary from {relation}.snapshots"
            ).collect()
        }
        current = current_version(spark, table, table_format)
        while current != version and current in snapshots:
            total.add(_iceberg_metrics(snapshots[current]["summary"] or {}))
            current = str(snapshots[current]["parent_id"])
        return total
    history = spark.sql(f"describe history {relation}").where(f"version > {version}").collect()
    for row in history:
        total.add(_delta_metrics(row["operationMetrics"] or {}))
    return total


def through_connect(spark: Any) -> bool:
    """Whether spark is a Spark Connect client (no JVM of its own in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def table_objects(spark: Any, table: str) -> set[str] | None:
    """Every file (object, on a bucket) under the table's location: its data files, log and
    metadata, as the table's file system lists them; None through Spark Connect (no file
    system client in the session)."""
    if through_connect(spark):
        return None
    rows = spark.sql(f"describe table extended {SCHEMA}.{table}").collect()
    location = next(r["data_type"] for r in rows if r["col_name"] == "Location")
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    files = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).listFiles(path, True)
    found = set()
    while files.hasNext():
        found.add(files.next().getPath().toString())
    return found


def heap_pools(spark: Any) -> list[Any]:
    """The JVM's heap memory pools (driver and executors share the one JVM of an embedded
    session); none through Spark Connect, whose server is another process."""
    if through_connect(spark):
        return []
    jvm = spark.sparkContext._jvm
    heap = jvm.java.lang.management.MemoryType.HEAP
    pools = jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
    return [pool for pool in pools if pool.getType() == heap]


def reset_peak_heap(spark: Any) -> None:
    for pool in heap_pools(spark):
        pool.resetPeakUsage()


def peak_heap(spark: Any) -> dict[str, int] | None:
    """Since reset_peak_heap, in MB: the heap's peak (the sum of its pools' peaks: an upper
    bound), the peak of its old generation (what stayed live through collections), and the
    heap's maximum (the JVM's -Xmx, from spark.driver.memory)."""
    pools = heap_pools(spark)
    if not pools:
        return None
    old = [p for p in pools if "Old" in p.getName() or "Tenured" in p.getName()]
    runtime = spark.sparkContext._jvm.java.lang.Runtime.getRuntime()
    return {
        "peak_mb": sum(p.getPeakUsage().getUsed() for p in pools) // 1_000_000,
        "old_peak_mb": sum(p.getPeakUsage().getUsed() for p in old) // 1_000_000,
        "max_mb": runtime.maxMemory() // 1_000_000,
    }


def day_stats(spark: Any, table: str) -> dict[str, tuple[int, int]]:
    """Per day: row count and a checksum over all columns."""
    query = (
        f"select cast(event_date as string) as d, count(*) as n, "
        f"sum(cast(hash({', '.join(COLUMNS)}) as bigint)) as h "
        f"from {SCHEMA}.{table} group by event_date"
    )
    return {r["d"]: (r["n"], r["h"]) for r in spark.sql(query).collect()}


def fingerprint(rows: Any) -> tuple:
    """The multiset of rows in one aggregation pass, no shuffle of the rows: their count and two
    sums of independent row hashes (64-bit xxhash64 and 32-bit murmur3, summed as decimals, so
    no overflow). Equal for equal multisets; two different ones that agree on all three are not
    a concern here. check_rows compares the day's rows with it first: the rows themselves,
    compared both ways by exceptAll, do not fit a 1 GiB heap at 20M rows a day."""
    from pyspark.sql import functions

    columns = [functions.col(c) for c in rows.columns]
    row = rows.agg(
        functions.count(functions.lit(1)),
        functions.sum(functions.xxhash64(*columns).cast("decimal(38,0)")),
        functions.sum(functions.hash(*columns).cast("decimal(38,0)")),
    ).first()
    return tuple(row)


def check_rows(
    spark: Any, table: str, source: str, day: date, base: dict[str, tuple[int, int]]
) -> str:
    """'correct', or what differs from the expected rows (the day = the source, the rest = base)."""
    start, end = day_bounds(day)
    other_days = {d: v for d, v in day_stats(spark, table).items() if d != start}
    expected_other = {d: v for d, v in base.items() if d != start}
    problems = []
    if other_days != expected_other:
        bad = sorted(set(other_days.items()) ^ set(expected_other.items()))
        problems.append(f"other days differ ({len({d for d, _ in bad})} days)")
    in_day = f"event_date >= date'{start}' and event_date < date'{end}'"
    got = spark.table(f"{SCHEMA}.{table}").where(in_day).select(*COLUMNS)
    want = spark.table(f"{SCHEMA}.{source}").where(in_day).select(*COLUMNS)
    if fingerprint(got) != fingerprint(want):
        problems += row_differences(got, want)
    return "; ".join(problems) or "correct"


def row_differences(got: Any, want: Any) -> list[str]:
    """How the day's rows differ from the source's: rows extra (deleted keys kept), rows lacking
    (exceptAll both ways: run only once the fingerprints differ)."""
    problems = []
    extra, lacking = got.exceptAll(want).count(), want.exceptAll(got).count()
    if extra:
        kept = got.join(want, ["event_date", "id"], "left_anti").count()
        problems.append(
            f"keeps {kept:,} deleted keys" if kept == extra else f"{extra:,} extra rows"
        )
    if lacking:
        problems.append(f"lacks {lacking:,} source rows")
    return problems
