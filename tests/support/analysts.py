"""Analysts reading a lakehouse server in a loop: through JDBC (HiveServer2's Thrift protocol,
PyHive) and through the Spark Connect Python client.

Each read is one table's full content as text rows, sorted, or None when the table does not
exist yet; the test then checks every read against the states the documents allow. The Spark
Connect reader runs as a process of its own (`python tests/support/analysts.py connect ...`):
a Spark Connect client switches pyspark of its whole process to Connect mode, and the pytest
process runs an embedded SparkSession.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MISSING = ("TABLE_OR_VIEW_NOT_FOUND", "Table or view not found")
# Iceberg's SparkSessionCatalog looks a name up in Iceberg, then, not found there, in the session
# catalog: a read in the instant a first load creates the table misses it in Iceberg and finds it
# in the metastore, as a Hive table Spark cannot read (docs/guarantees.md, known limits). Such a
# read began before the table existed: it counts as a read of a missing table, but only until
# this reader has seen the table; after that the same error fails the test.
BEING_CREATED = "Failed to instantiate org.apache.hadoop.mapred.FileInputFormat"
# Seconds between rounds: an analyst, not a load test (2 cores share the server with dbt's runs;
# a round every 2 s still reads each table dozens of times while the writers commit). `make soak`
# reads eight times as often.
PAUSE = 0.25 if os.environ.get("SOAK_RUNS") else 2.0


def as_text(rows: list[Any]) -> list[list[str]]:
    return sorted([str(value) for value in row] for row in rows)


def missing(error: str, seen_before: bool) -> bool:
    """Whether a failed read is a read of a table that did not exist yet."""
    if any(text in error for text in MISSING):
        return True
    return BEING_CREATED in error and not seen_before


def read_loop(
    query: Callable[[str], list[Any]], tables: list[str], stop: Callable[[], bool]
) -> list[dict]:
    """Read every table in turn until stop(); one {table, rows} per read (rows None: missing)."""
    reads: list[dict] = []
    seen: set[str] = set()
    while not stop():
        for table in tables:
            try:
                rows: list[list[str]] | None = as_text(query(f"select * from {table}"))
                seen.add(table)
            except Exception as problem:  # noqa: BLE001 (only a missing table is expected)
                if not missing(str(problem), table in seen):
                    raise
                rows = None
            reads.append({"table": table, "rows": rows})
        time.sleep(PAUSE)
    return reads


def jdbc_query(host: str, port: int, password: str) -> Callable[[str], list[Any]]:
    from pyhive import hive

    connection = hive.connect(
        host=host, port=port, username="analyst", password=password, auth="CUSTOM"
    )
    cursor = connection.cursor()

    def query(sql: str) -> list[Any]:
        cursor.execute(sql)
        return cursor.fetchall()

    return query


class JdbcReader(threading.Thread):
    """An analyst on JDBC, in a thread of the test process (PyHive needs no Spark)."""

    def __init__(self, host: str, port: int, password: str, tables: list[str]) -> None:
        super().__init__(name="jdbc-analyst", daemon=True)
        self.args = (host, port, password)
        self.tables = tables
        self.done = threading.Event()
        self.reads: list[dict] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.reads = read_loop(jdbc_query(*self.args), self.tables, self.done.is_set)
        except BaseException as problem:  # noqa: BLE001 (reported by the test)
            self.error = problem


def connect_main(url: str, stop_file: str, tables: list[str]) -> None:
    """Read through Spark Connect until stop_file exists; print the reads as one JSON line."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(url).getOrCreate()
    reads = read_loop(lambda sql: spark.sql(sql).collect(), tables, Path(stop_file).exists)
    print("READS " + json.dumps(reads), flush=True)
    spark.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["connect"] and len(sys.argv) > 4:
        connect_main(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit("usage: analysts.py connect <sc:// url> <stop file> <table> [<table> ...]")
