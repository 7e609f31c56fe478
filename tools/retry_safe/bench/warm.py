"""`python -m retry_safe.bench warm` (`make bench-warm`): the warm path against its fair rival.

Per format, one running lakehouse server (`lakehouse serve` of the format's embedded target, on a
warehouse of its own) and one warm runner (`lakehouse runner`). Through the server's Spark
Connect endpoint the benchmark builds the same table and case sources as `make bench`, then,
per case, times with the table reset to its base version before each run:

- *idempotent_merge*: `lakehouse dbt run` of the benchmark's model through the warm runner, on
  the server target (`server` / `server_iceberg`), the interval as dbt's event-time flags. Wall
  time from the client's start to its exit. Its engine work is the model node's execute time
  (dbt's run_results.json); the split of that run comes from dbt's own log: the statements
  that check the rows (the staged rows, the source profile, the schema), the change set and
  its count, the MERGE, the report's read of the commit, and dbt's own work (the rest).
- *pyspark_job*: the hand-written job's code (`retry_safe.bench.job.reconcile_day`) sent
  through Spark Connect to the same server, from this warm process: its wall time is its
  engine work.

Both contenders run once per case untimed first (dbt's partial parse and the server's JIT), and
their rows are checked after the first timed run. The raw file is
`warm-<label>-<format>.json`; `report` adds the table "The warm path against a warm job".
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.session.jvm import CONNECT_CLIENT_VARIABLES
from retry_safe.bench.contenders import DBT_MODELS, PUBLISH_HOOK, day_bounds, dbt_models
from retry_safe.bench.job import reconcile_day
from retry_safe.bench.measure import reset
from retry_safe.bench.run import measure, portable, prepare, variants
from retry_safe.bench.settings import SCHEMA, Settings
from retry_safe.cluster import free_port
from retry_safe.project import EMBEDDED_TARGETS, SERVER_TARGETS, interval_flags
from retry_safe.scratch import write_project
from retry_safe.server_process import spawn, spawn_runner, stop, through_runner

CONTENDERS = ["idempotent_merge", "pyspark_job"]
MODEL = DBT_MODELS["idempotent_merge"]
# what a statement of the model's run is for, from the start of its SQL (dbt's log)
STEPS = {
    "merge_s": ("merge into",),
    "change_set_s": (f"-- computed once into the temporary view {MODEL}__dbt_changes",),
    "checks_s": (f"-- computed once into the temporary view {MODEL}__dbt_tmp", "select count("),
}


class WarmPath:
    """The server, the runner and the scratch project of one format; runs a contender once."""

    def __init__(self, s: Settings, home: Path) -> None:
        self.s = s
        self.logs = home / "logs"
        self.project = write_project(
            home / f"project-{s.table_format}", dbt_models(), project=PUBLISH_HOOK
        )
        self.port = free_port()
        # the Spark Connect client marks its process's environment (SPARK_CONNECT_MODE_ENABLED):
        # a server started from it would refuse to start (session/jvm.py)
        inherited = {k: v for k, v in os.environ.items() if k not in CONNECT_CLIENT_VARIABLES}
        self.env = {
            **inherited,
            "LAKEHOUSE_CONNECT_PORT": str(self.port),
            "LAKEHOUSE_THRIFT_PORT": str(free_port()),
            "LAKEHOUSE_HOME": str(home),
            "LAKEHOUSE_SCHEMA": SCHEMA,
            "DBT_LOG_PATH": str(self.logs),
            "DBT_WRITE_JSON": "true",
        }
        self.socket = home / "runner.sock"
        self.processes: list[Any] = []

    def __enter__(self) -> WarmPath:
        self.processes.append(spawn(EMBEDDED_TARGETS[self.s.table_format], self.env, self.logs))
        self.processes.append(spawn_runner(self.socket, self.env, self.logs))
        return self

    def __exit__(self, *_: object) -> None:
        for process in reversed(self.processes):
            stop(process)

    def session(self) -> Any:
        """A Spark Connect session of the server, as the hand-written job would open it."""
        from pyspark.sql import SparkSession

        url = f"sc://127.0.0.1:{self.port}/;user_id=bench"
        return SparkSession.builder.remote(url).create()

    def contend(
        self, spark: Any, s: Settings, project: Path, contender: str, table: str, source: str
    ) -> tuple[float, float, dict[str, float]]:
        """One run: (wall s, engine s, its parts)."""
        if contender == "pyspark_job":
            started = time.perf_counter()
            reconcile_day(spark, table, source, s.day)
            wall = time.perf_counter() - started
            return wall, wall, {}
        return self.dbt_run(table, source)

    def dbt_run(self, table: str, source: str) -> tuple[float, float, dict[str, float]]:
        """`lakehouse dbt run` of the model through the runner, on the server target."""
        log = self.logs / "dbt.log"
        position = log.stat().st_size if log.exists() else 0
        target_path = self.project / "target"
        command = [
            *through_runner(self.socket),
            *("run", "--quiet", "--select", table, "--project-dir", str(self.project)),
            *("--target", SERVER_TARGETS[self.s.table_format], "--target-path", str(target_path)),
            *("--log-format-file", "json", *interval_flags(*day_bounds(self.s.day))),
            *("--vars", json.dumps({"bench_source": source})),
        ]
        started = time.perf_counter()
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        if done.returncode:
            raise SystemExit(f"lakehouse dbt run failed:\n{done.stdout}{done.stderr}")
        parts = statement_seconds(log, position)
        parts["dbt_s"] = wall - sum(parts.values())
        return wall, node_execute_seconds(target_path / "run_results.json"), parts


def node_execute_seconds(run_results: Path) -> float:
    """The model node's execute time, as dbt recorded it."""
    result = json.loads(run_results.read_text())["results"][0]
    execute = next(t for t in result["timing"] if t["name"] == "execute")
    began, ended = (datetime.fromisoformat(execute[k]) for k in ("started_at", "completed_at"))
    return (ended - began).total_seconds()


def statement_seconds(log: Path, position: int) -> dict[str, float]:
    """Seconds of the run's statements (dbt's JSON log after position) per step of STEPS, the
    rest as other_sql_s."""
    seconds = dict.fromkeys([*STEPS, "other_sql_s"], 0.0)
    pending: str | None = None
    with log.open() as handle:
        handle.seek(position)
        for line in handle:
            event = json.loads(line)
            name, data = event["info"]["name"], event.get("data", {})
            if name == "SQLQuery":
                pending = data.get("sql", "")
            elif name == "SQLQueryStatus" and pending is not None:
                seconds[step_of(pending)] += float(data.get("elapsed", 0))
                pending = None
    return seconds


def step_of(sql: str) -> str:
    """The STEPS key of a statement (its leading /* dbt comment */ left out), or other_sql_s."""
    body = sql.strip()
    if body.startswith("/*"):
        body = body.split("*/", 1)[-1].strip()
    return next((step for step, starts in STEPS.items() if body.startswith(starts)), "other_sql_s")


def run(s: Settings, home: Path, out: Path) -> dict[str, Any]:
    """One format through its server: the raw file's content."""
    s.check()
    with WarmPath(s, home) as warm:
        spark = warm.session()
        spark.sql(f"create schema if not exists {SCHEMA}")
        ctx = prepare(spark, s)
        records = []
        for case in s.cases:
            for contender, _, table in variants(s):  # untimed: the case's parse, the JIT
                warm.contend(spark, s, warm.project, contender, table, ctx["sources"][case])
                reset(spark, table, s.table_format, ctx["base_versions"][table])
            for variant in variants(s):
                record = measure(spark, s, warm.project, variant, case, ctx, warm.contend)
                records.append(record)
                print(
                    f"[bench-warm] {s.table_format} {variant[0]} case {case}: median "
                    f"{record['median_s']:.2f} s, engine {record['engine_median_s']:.2f} s, "
                    f"{record['check']}",
                    flush=True,
                )
        spark.stop()
    raw = {
        "path": "warm",
        "settings": s.as_dict(),
        "day": s.day.isoformat(),
        "home": portable(home),
        "table_sizes": ctx["sizes"],
        "records": records,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(raw, indent=1, default=str))
    return raw
