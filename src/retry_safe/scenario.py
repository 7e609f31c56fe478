"""Run dbt steps in a process of their own and print tables as JSON: for kill/retry scenarios.

    python -m retry_safe.scenario run <selector> <start> <end>
    python -m retry_safe.scenario dump <table> [<table> ...]

`run` is what a scheduler's task does (and what a test kills with SIGKILL); `dump` prints each
table's rows and its commit history as one JSON line starting with DUMP.
"""

from __future__ import annotations

import json
import os
import sys

from retry_safe.project import configure_environment, interval_vars, run_dbt
from retry_safe.tables import history


def run(selector: str, start: str, end: str) -> None:
    target = os.environ.get("DBT_TARGET", "local")
    run_dbt(["run", "--select", selector], target, interval_vars(start, end))


def dump(tables: list[str]) -> None:
    from pyspark.sql import SparkSession

    target = os.environ.get("DBT_TARGET", "local")
    run_dbt(["debug"], target)
    spark = SparkSession.builder.getOrCreate()
    table_format = "iceberg" if "iceberg" in target else "delta"
    schema = os.environ.get("LAKEHOUSE_SCHEMA", "analytics")
    result = {}
    for table in tables:
        relation = f"{schema}.{table}"
        frame = spark.sql(f"select * from {relation}")
        ordered = frame.orderBy(*frame.columns).collect()
        result[table] = {
            "rows": [[str(value) for value in row] for row in ordered],
            "history": history(spark, relation, table_format),
        }
    print("DUMP " + json.dumps(result))


def main(argv: list[str]) -> int:
    configure_environment()
    if argv[:1] == ["run"] and len(argv) == 4:
        run(*argv[1:])
    elif argv[:1] == ["dump"] and len(argv) > 1:
        dump(argv[1:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
