"""One table format in one process (one JVM): build the tables, then time every contender.

For each contender x case, `reps` runs, each on the table reset to the same base version
(Delta RESTORE / Iceberg rollback_to_snapshot); the commit metrics are read after each run and
the final rows checked after the first.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from retry_safe.bench import environment
from retry_safe.bench.contenders import (
    DBT_MODELS,
    MOR_MODEL,
    PUBLISH_HOOK,
    day_bounds,
    dbt_models,
    reference_merge_sql,
)
from retry_safe.bench.data import COW, MOR, create_source, create_target
from retry_safe.bench.job import reconcile_day
from retry_safe.bench.measure import (
    check_rows,
    commits_since,
    current_version,
    day_stats,
    peak_heap,
    reset,
    reset_peak_heap,
    table_objects,
)
from retry_safe.bench.settings import CASES, SCHEMA, SPLIT, Settings
from retry_safe.project import PROJECT_DIR, interval_vars, run_dbt
from retry_safe.scratch import write_project


def portable(path: Path) -> str:
    """A path as the raw file records it: relative to the project, so no machine path is kept."""
    return os.path.relpath(path.resolve(), PROJECT_DIR)


def table_of(contender: str) -> str:
    return DBT_MODELS.get(contender, contender)


def variants(s: Settings) -> list[tuple[str, str, str]]:
    """(contender, storage, table): every contender copy-on-write, plus (1) merge-on-read."""
    found = [(c, "cow", table_of(c)) for c in s.contenders]
    if s.mor and "idempotent_merge" in s.contenders:
        found.append(("idempotent_merge", "mor", MOR_MODEL))
    return found


def start(s: Settings, home: Path) -> tuple[Any, Path]:
    """A fresh warehouse under home, the scratch dbt project, and dbt's SparkSession."""
    os.environ.update(
        {"LAKEHOUSE_HOME": str(home), "LAKEHOUSE_SCHEMA": SCHEMA, "DBT_TARGET": s.target}
    )
    shutil.rmtree(home / s.table_format, ignore_errors=True)
    project = write_project(home / f"project-{s.table_format}", dbt_models(), project=PUBLISH_HOOK)
    run_dbt(["debug"], s.target, project_dir=project)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    spark.sql(f"create schema if not exists {SCHEMA}")
    return spark, project


def table_size(spark: Any, table: str, table_format: str) -> dict[str, int]:
    relation = f"{SCHEMA}.{table}"
    if table_format == "iceberg":
        row = spark.sql(
            f"select count(*), sum(file_size_in_bytes) from {relation}.files where content = 0"
        ).first()
        return {"files": int(row[0]), "bytes": int(row[1])}
    row = spark.sql(f"describe detail {relation}").first()
    return {"files": int(row["numFiles"]), "bytes": int(row["sizeInBytes"])}


def affected_files(spark: Any, s: Settings, table: str, case_name: str) -> int:
    """Files of the base table that hold a key the case changes or deletes."""
    case = CASES[case_name]
    predicates = [p for p in (case.changed, case.missing) if p]
    if not predicates:
        return 0
    file_column = "_file" if s.table_format == "iceberg" else "_metadata.file_path"
    start_day, _ = day_bounds(s.day)
    return spark.sql(
        f"select count(distinct {file_column}) from {SCHEMA}.{table} "
        f"where event_date = date'{start_day}' and ({' or '.join(predicates)})"
    ).first()[0]


def run_contender(
    spark: Any, s: Settings, project: Path, contender: str, table: str, source: str
) -> tuple[float, float, dict[str, float]]:
    """Run once; returns (wall seconds, seconds of engine work, the audited build's parts).

    A dbt contender's engine work is its model node's execute time; the audited build's also
    counts its publish (the on-run-end hook), and its parts say how long the model (staging),
    its test (reading the stage) and the publish took."""
    started = time.perf_counter()
    if contender in DBT_MODELS:
        command = "build" if contender == "audited" else "run"
        result = run_dbt(
            [command, "--quiet", "--select", table],
            s.target,
            interval_vars(*day_bounds(s.day), bench_source=source),
            project_dir=project,
        )
        wall = time.perf_counter() - started
        parts = {node.node.resource_type: execute_seconds(node) for node in result.result.results}
        if contender != "audited":
            return wall, parts["model"], {}
        engine = parts["model"] + parts["operation"]
        return (
            wall,
            engine,
            {"stage_s": parts["model"], "test_s": parts["test"], "publish_s": parts["operation"]},
        )
    if contender == "reference_merge":
        spark.sql(reference_merge_sql(table, source, s.day))
    else:
        reconcile_day(spark, table, source, s.day)
    wall = time.perf_counter() - started
    return wall, wall, {}


def execute_seconds(node_result: Any) -> float:
    """A node's execute time from dbt's own timing; a hook's whole run (its statements run
    while dbt renders it, the compile step)."""
    if node_result.node.resource_type == "operation":
        return node_result.execution_time
    timing = {t.name: t for t in node_result.timing}
    execute = timing["execute"]
    return (execute.completed_at - execute.started_at).total_seconds()


def measure(
    spark: Any,
    s: Settings,
    project: Path,
    variant: tuple[str, str, str],
    case: str,
    ctx: dict,
    contend: Callable[..., tuple[float, float, dict[str, float]]] = run_contender,
) -> dict[str, Any]:
    """reps runs of one contender on one case (contend runs it once: run_contender, or the warm
    path's), each on the table reset to its base version."""
    contender, storage, table = variant
    source = ctx["sources"][case]
    base = ctx["base_versions"][table]
    samples = []
    for rep in range(s.reps):
        reset(spark, table, s.table_format, base)
        before = current_version(spark, table, s.table_format)
        objects = table_objects(spark, table)
        reset_peak_heap(spark)
        wall, engine, parts = contend(spark, s, project, contender, table, source)
        heap = peak_heap(spark)
        after = current_version(spark, table, s.table_format)
        sample: dict[str, Any] = {"wall_s": wall, "engine_s": engine, "committed": after != before}
        if heap is not None:
            sample["heap"] = heap
        sample.update(parts)
        sample["metrics"] = vars(commits_since(spark, table, s.table_format, before))
        # objects the run wrote: data files, and the log's or metadata's files of its commit
        # (none counted through Spark Connect, which has no file system client)
        if objects is not None:
            sample["objects_written"] = len(table_objects(spark, table) - objects)
        if rep == 0:
            sample["check"] = check_rows(spark, table, source, s.day, ctx["base_stats"])
        samples.append(sample)
    reset(spark, table, s.table_format, base)
    walls = [x["wall_s"] for x in samples]
    engines = [x["engine_s"] for x in samples]
    record = {"contender": contender, "storage": storage, "case": case, "table": table}
    record.update(
        median_s=statistics.median(walls),
        min_s=min(walls),
        max_s=max(walls),
        engine_median_s=statistics.median(engines),
        **{
            f"{part}_median": statistics.median(x[part] for x in samples)
            for part in ("stage_s", "test_s", "publish_s", *SPLIT)
            if part in samples[0]
        },
        committed=any(x["committed"] for x in samples),
        metrics=samples[0]["metrics"],
        objects_written=samples[0].get("objects_written"),
        heap=max(
            (x["heap"] for x in samples if "heap" in x), key=lambda h: h["peak_mb"], default=None
        ),
        check=samples[0]["check"],
        expected=CASES[case].counts(s.rows_per_day),
        affected_files=ctx["affected"][case],
        samples=samples,
    )
    return record


def prepare(spark: Any, s: Settings) -> dict[str, Any]:
    """Every contender's table (same data, same layout) and the case sources."""
    ctx: dict[str, Any] = {"base_versions": {}, "sizes": {}}
    for _, storage, table in variants(s):
        properties = (MOR if storage == "mor" else COW)[s.table_format]
        began = time.perf_counter()
        create_target(spark, s, table, properties)
        ctx["base_versions"][table] = current_version(spark, table, s.table_format)
        ctx["sizes"][table] = table_size(spark, table, s.table_format)
        print(
            f"[bench] {s.table_format} {table}: {s.total_rows:,} rows, "
            f"{ctx['sizes'][table]['files']} files ({time.perf_counter() - began:.1f} s)"
        )
    ctx["sources"] = {c: create_source(spark, s, CASES[c]) for c in s.cases}
    first = variants(s)[0][2]
    ctx["base_stats"] = day_stats(spark, first)
    ctx["affected"] = {c: affected_files(spark, s, first, c) for c in s.cases}
    return ctx


def warm_up(spark: Any, s: Settings, project: Path, ctx: dict) -> None:
    """One untimed run per contender (parse, JIT, caches), then back to the base version."""
    case = s.cases[0]
    for contender, _, table in variants(s):
        run_contender(spark, s, project, contender, table, ctx["sources"][case])
        reset(spark, table, s.table_format, ctx["base_versions"][table])


def run(s: Settings, home: Path, out: Path) -> dict[str, Any]:
    s.check()
    spark, project = start(s, home)
    ctx = prepare(spark, s)
    warm_up(spark, s, project, ctx)
    records = []
    for variant in variants(s):
        for case in s.cases:
            record = measure(spark, s, project, variant, case, ctx)
            records.append(record)
            print(
                f"[bench] {s.table_format} {variant[0]} {variant[1]} case {case}: "
                f"median {record['median_s']:.2f} s, engine {record['engine_median_s']:.2f} s, "
                f"files +{record['metrics']['files_added']} -{record['metrics']['files_removed']}, "
                f"{record['check']}"
            )
    raw = {
        "settings": s.as_dict(),
        "day": s.day.isoformat(),
        "home": portable(home),
        "project": portable(project),
        "machine": environment.machine(),
        "versions": environment.versions(spark),
        "table_sizes": ctx["sizes"],
        "base_versions": ctx["base_versions"],
        "sources": ctx["sources"],
        "records": records,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(raw, indent=1, default=str))
    return raw
