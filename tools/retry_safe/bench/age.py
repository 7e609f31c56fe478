"""Does an interval cost the same on day 1,000 as on day 30? One interval's `dbt run` and the
`lakehouse intervals` listing, timed on tables that already hold 30, 365 and 1,000 daily
intervals, never maintained and maintained (`lakehouse maintain`) every 30 intervals.

    python -m retry_safe.bench.age [--formats delta,iceberg] [--ages 30,365,1000]   (make bench-age)
    python -m retry_safe.bench.age --listing-only [--formats ...] [--ages ...]

Per format and schedule (never maintained; `lakehouse maintain` after every 30th interval),
in a process of its own on a warehouse of its own: a source of small rows (100 a day), then the
model's table (`events`, idempotent_merge by day): the first day loaded by `dbt run`, every
later day grown the way a daily run leaves a table, without dbt's per-run cost: one INSERT of
the day's rows (a commit and its files) and the day's row of the interval ledger (a commit of
the ledger table). Maintenance compacts the table and the ledger (history younger than the
window is kept, as in production in its first week). At each age: RUNS real `dbt run`s of the
next RUNS days (each its interval's change set and MERGE, in a warm session), and
`lakehouse intervals` (the ledger read and listed), RUNS times; the table gives the fastest
and the median of each (the fastest is the one a busy machine disturbs least). `--listing-only`
grows the interval ledger alone, never maintained (a ledger row a day and the adapter's
compaction check, no data commit: the listing reads the ledger table only) and times only the
listing, in a fraction of the time (raw/age-listing.json, shown beside the table). Writes
docs/benchmarks/raw/age-<format>.json; `python -m retry_safe.bench report` puts the table into
results.md.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from retry_safe.project import EMBEDDED_TARGETS, PROJECT_DIR, configure_environment, run_dbt
from retry_safe.scratch import write_project
from retry_safe.tables import current_files

OUT = PROJECT_DIR / "docs" / "benchmarks" / "raw"
HOME = PROJECT_DIR / ".lakehouse" / "bench-age"
SCHEMA = "age"
FIRST = date(2024, 1, 1)
ROWS_PER_DAY = 100
MAINTAIN_EVERY = 30
RUNS = 5
TABLE = "events"
MODEL = """\
{{ config(materialized='incremental', incremental_strategy='idempotent_merge',
          unique_key='id', version_column='updated_at', interval_column='day') }}
select id, day, value, updated_at from {{ target.schema }}.src
where {{ in_interval('day', 'date') }}
"""


def day(n: int) -> date:
    return FIRST + timedelta(days=n)


def flags(n: int) -> list[str]:
    return ["--event-time-start", str(day(n)), "--event-time-end", str(day(n + 1))]


def measure(
    table_format: str, ages: list[int], home: Path, every: int, listing_only: bool = False
) -> list[dict[str, Any]]:
    """The measurements of one format and schedule (every: maintain after every so many
    intervals; 0 never). listing_only: grow the interval ledger alone (a row and the adapter's
    compaction check a day, no data commit) and time only `lakehouse intervals`, which reads
    the ledger table alone."""
    target = EMBEDDED_TARGETS[table_format]
    shutil.rmtree(home, ignore_errors=True)
    os.environ.update(LAKEHOUSE_HOME=str(home), LAKEHOUSE_SCHEMA=SCHEMA, DBT_TARGET=target)
    configure_environment(home)
    project = write_project(home / "project", {f"{TABLE}.sql": MODEL})
    run_dbt(["debug"], target, project_dir=project)
    from pyspark.sql import SparkSession

    from dbt.adapters.lakehouse.commands import cli
    from dbt.adapters.lakehouse.tables import ledger

    spark = SparkSession.builder.getOrCreate()
    last = max(ages) + RUNS * len(ages) + RUNS
    relation = f"{SCHEMA}.{TABLE}"
    spark.sql(f"create schema if not exists {SCHEMA}")
    spark.sql(
        f"create table {SCHEMA}.src using {table_format} as select id, "
        f"date_add(date'{FIRST}', cast(id div {ROWS_PER_DAY} as int)) as day, id * 7 as value, "
        f"timestamp'{FIRST} 06:00:00' as updated_at from range({last * ROWS_PER_DAY})"
    )
    run_dbt(["run", *flags(0)], target, project_dir=project)  # the first load

    def rows(sql: str) -> list[dict[str, Any]]:
        return [r.asDict() for r in spark.sql(sql).collect()]

    def grow(n: int) -> None:
        if not listing_only:
            spark.sql(f"insert into {relation} select * from {SCHEMA}.src where day = '{day(n)}'")
        moments = [datetime.combine(day(n + k), datetime.min.time(), UTC) for k in (0, 1)]
        row = ledger.Row(relation, f"model.scratch.{TABLE}", "merge", *moments, "grown", None)
        spark.sql(ledger.insert_sql("lakehouse", [row]))
        ledger.compact_if_due(rows, "lakehouse", table_format)  # as the adapter's write does

    def quiet(args: list[str]) -> tuple[int, str]:
        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            status = cli.main([*args, "--project-dir", str(project), "--target", target])
        return status, out.getvalue()

    results: list[dict[str, Any]] = []
    grown = 1  # days 0 .. grown - 1 are in the table
    for age in ages:
        started = time.perf_counter()
        while grown < age:
            grow(grown)
            grown += 1
            if every and grown % every == 0:
                assert quiet(["maintain", "--select", TABLE])[0] == 0
        build_seconds = time.perf_counter() - started
        runs = []
        for k in range(0 if listing_only else RUNS):
            began = time.perf_counter()
            run_dbt(["run", *flags(grown + k)], target, project_dir=project)
            runs.append(time.perf_counter() - began)
        grown += len(runs)
        window = ["--since", str(FIRST), "--until", str(day(grown))]
        listings = []
        for _ in range(RUNS):
            began = time.perf_counter()
            status, out = quiet(["intervals", "--select", TABLE, *window, "--json"])
            listings.append(time.perf_counter() - began)
            assert status == 0, out
        listed = json.loads(out.strip().splitlines()[-1])["models"][0]
        assert listed["missing"] == [], listed["missing"][:3]
        results.append(
            {
                "format": table_format,
                "age": age,
                "maintained_every": every,
                "run_seconds": runs,
                "intervals_seconds": listings,
                "files": current_files(spark, relation, table_format),
                "ledger_files": current_files(spark, "lakehouse.interval_ledger", table_format),
                "build_seconds": round(build_seconds, 1),
            }
        )
        print(json.dumps(results[-1]), flush=True)
    return results


def summary(results: list[dict[str, Any]]) -> list[str]:
    """A markdown table of the measurements (fastest / median), the fastest run's ratio to the
    same schedule's at its first age."""
    lines = [
        "| format | intervals held | maintained | `dbt run` of one interval (fastest / median s) "
        "| fastest's ratio to the first age | `lakehouse intervals` (fastest / median s) "
        "| data files | ledger files |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    base: dict[tuple[str, int], float] = {}
    for r in results:
        run, listing = r["run_seconds"], r["intervals_seconds"]
        key = (r["format"], r["maintained_every"])
        base.setdefault(key, min(run))
        every = f"every {r['maintained_every']}" if r["maintained_every"] else "never"
        lines.append(
            f"| {r['format']} | {r['age']} | {every} "
            f"| {min(run):.2f} / {statistics.median(run):.2f} | {min(run) / base[key]:.2f}x "
            f"| {min(listing):.2f} / {statistics.median(listing):.2f} | {r['files']} "
            f"| {r['ledger_files']} |"
        )
    return lines


def measured_apart(
    table_format: str, kind: str, options: list[str], args: argparse.Namespace
) -> list | None:
    """One format and schedule (kind: the maintenance interval, or "listing") measured in a
    process of its own, on a warehouse of its own; its results, or None when it failed."""
    command = [sys.executable, "-m", "retry_safe.bench.age", "--format", table_format, *options]
    command += ["--ages", args.ages, "--home", str(args.home)]
    if subprocess.run(command, cwd=PROJECT_DIR, check=False).returncode:
        return None
    part = OUT / f"age-{table_format}-{kind}.json"
    results = json.loads(part.read_text())
    part.unlink()
    return results


def listing_summary(results: list[dict[str, Any]]) -> list[str]:
    """A markdown table of the listing-only measurements (fastest / median)."""
    lines = [
        "| format | intervals in the ledger | `lakehouse intervals` (fastest / median s) "
        "| ledger files |",
        "| --- | --- | --- | --- |",
    ]
    for r in results:
        listing = r["intervals_seconds"]
        lines.append(
            f"| {r['format']} | {r['age']} | {min(listing):.2f} / {statistics.median(listing):.2f} "
            f"| {r['ledger_files']} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m retry_safe.bench.age")
    parser.add_argument("--formats", default="delta,iceberg")
    parser.add_argument("--ages", default="30,365,1000")
    parser.add_argument("--format", help=argparse.SUPPRESS)  # one format and schedule, here
    parser.add_argument("--every", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument(
        "--listing-only",
        action="store_true",
        help="grow only the interval ledger, never maintained, and time `lakehouse intervals`",
    )
    args = parser.parse_args(argv)
    ages = [int(a) for a in args.ages.split(",")]
    OUT.mkdir(parents=True, exist_ok=True)
    if args.format:
        kind = "listing" if args.listing_only else str(args.every)
        home = args.home / f"{args.format}-{kind}"
        results = measure(args.format, ages, home, args.every, args.listing_only)
        part = OUT / f"age-{args.format}-{kind}.json"
        part.write_text(json.dumps(results, indent=1) + "\n")
        return 0
    if args.listing_only:  # raw/age-listing.json, shown beside age.json by the report
        schedules, name, table = [("listing", ["--listing-only"])], "age-listing", listing_summary
    else:
        schedules = [(str(every), ["--every", str(every)]) for every in (0, MAINTAIN_EVERY)]
        name, table = "age", summary
    results: list[dict[str, Any]] = []
    for table_format in args.formats.split(","):
        for kind, options in schedules:
            part = measured_apart(table_format, kind, options, args)
            if part is None:
                return 1
            results += part
        raw = {"measured_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "results": results}
        (OUT / f"{name}.json").write_text(json.dumps(raw, indent=1) + "\n")
    print("\n".join(table(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
