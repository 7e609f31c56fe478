"""Contender (4): the smallest hand-written PySpark job giving the same final rows.

The day's changed or new source rows, plus the keys the day lost, in one MERGE that is skipped
when there is nothing to do. `python -m retry_safe.bench.job` runs it as a process of its own
(startup included) with the SparkSession settings of a dbt target.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import date
from typing import Any

from dbt.adapters.lakehouse.server.profile import load_target
from dbt.adapters.lakehouse.session.jars import require_jars
from dbt.adapters.lakehouse.session.jvm import start_session
from retry_safe.bench.contenders import day_bounds
from retry_safe.bench.data import COLUMNS, KEYS
from retry_safe.bench.settings import SCHEMA
from retry_safe.project import PROJECT_DIR


def reconcile_day(spark: Any, table: str, source: str, day: date) -> int:
    """Make the table's day equal the source's day; returns the number of changed keys."""
    from pyspark.sql import functions

    start, end = day_bounds(day)
    in_day = f"event_date >= date'{start}' and event_date < date'{end}'"
    src = spark.table(f"{SCHEMA}.{source}").where(in_day)
    tgt = spark.table(f"{SCHEMA}.{table}").where(in_day)
    upserts = src.subtract(tgt).withColumn("op", functions.lit("upsert"))
    deletes = tgt.join(src, KEYS, "left_anti").select(*KEYS)
    deletes = deletes.withColumn("op", functions.lit("delete"))
    changes = upserts.unionByName(deletes, allowMissingColumns=True).localCheckpoint()
    if changes.isEmpty():
        return 0
    changes.createOrReplaceTempView("bench_job_changes")
    on = " and ".join(f"target.{k} = source.{k}" for k in KEYS)
    update = ", ".join(f"target.{c} = source.{c}" for c in COLUMNS)
    spark.sql(f"""
        merge into {SCHEMA}.{table} as target using bench_job_changes as source
        on {on} and target.event_date >= date'{start}' and target.event_date < date'{end}'
        when matched and source.op = 'delete' then delete
        when matched then update set {update}
        when not matched then insert ({", ".join(COLUMNS)})
            values ({", ".join(f"source.{c}" for c in COLUMNS)})
    """)
    return changes.count()


def session(target: str) -> Any:
    """The SparkSession of a target, started like the dbt adapter starts it."""
    from pyspark.sql import SparkSession

    settings = load_target(str(PROJECT_DIR), None, target).settings
    require_jars(settings)
    start_session(settings)
    return SparkSession.builder.getOrCreate()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m retry_safe.bench.job")
    parser.add_argument("--target", default=os.environ.get("DBT_TARGET", "local"))
    parser.add_argument("--table", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--day", required=True, type=date.fromisoformat)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    spark = session(args.target)
    changed = reconcile_day(spark, args.table, args.source, args.day)
    print(f"{SCHEMA}.{args.table}: {changed} keys changed ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
