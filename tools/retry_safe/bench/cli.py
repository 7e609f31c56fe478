"""dbt's fixed cost: a one-interval `dbt run` from the command line against the hand-written job
as its own `python` process, both with JVM startup included, each on case (b).

Runs after the format's measuring process has ended (an embedded Derby metastore admits one
JVM). Before each repetition a separate, untimed process resets both tables.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from retry_safe.bench.contenders import DBT_MODELS, day_bounds
from retry_safe.bench.settings import SCHEMA
from retry_safe.project import EMBEDDED_TARGETS, PROJECT_DIR, interval_vars

CASE = "b"
RESET_TABLES = (DBT_MODELS["idempotent_merge"], "pyspark_job")


def environment(raw: dict[str, Any]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        LAKEHOUSE_HOME=str(PROJECT_DIR / raw["home"]),
        LAKEHOUSE_SCHEMA=SCHEMA,
        DBT_TARGET=_target(raw),
        DBT_PROFILES_DIR=env.get("DBT_PROFILES_DIR", str(PROJECT_DIR / "profiles")),
        LAKEHOUSE_JARS_DIR=env.get("LAKEHOUSE_JARS_DIR", str(PROJECT_DIR / ".jars")),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )
    return env


def _target(raw: dict[str, Any]) -> str:
    return EMBEDDED_TARGETS[raw["settings"]["table_format"]]


def commands(raw: dict[str, Any]) -> dict[str, list[str]]:
    source = raw["sources"][CASE]
    start, end = day_bounds(date.fromisoformat(raw["day"]))
    dbt = str(Path(sys.executable).with_name("dbt"))
    variables = json.dumps(interval_vars(start, end, bench_source=source))
    return {
        "dbt run (CLI)": [
            dbt,
            "run",
            "--select",
            DBT_MODELS["idempotent_merge"],
            "--project-dir",
            str(PROJECT_DIR / raw["project"]),
            "--target",
            _target(raw),
            "--vars",
            variables,
        ],
        "python job (process)": [
            sys.executable,
            "-m",
            "retry_safe.bench.job",
            "--target",
            _target(raw),
            "--table",
            "pyspark_job",
            "--source",
            source,
            "--day",
            start,
        ],
    }


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=PROJECT_DIR, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command[:3])} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return elapsed


def reset_tables(raw_path: Path, env: dict[str, str]) -> None:
    command = [sys.executable, "-m", "retry_safe.bench", "reset", "--raw", str(raw_path)]
    timed(command, env)


def compare(raw_path: Path, reps: int) -> dict[str, Any]:
    raw = json.loads(raw_path.read_text())
    env = environment(raw)
    times: dict[str, list[float]] = {name: [] for name in commands(raw)}
    for rep in range(reps):
        reset_tables(raw_path, env)
        for name, command in commands(raw).items():
            times[name].append(timed(command, env))
            print(
                f"[bench] {raw['settings']['table_format']} {name} rep {rep + 1}: "
                f"{times[name][-1]:.1f} s"
            )
    reset_tables(raw_path, env)
    result = {
        name: {"median_s": statistics.median(v), "min_s": min(v), "max_s": max(v), "samples": v}
        for name, v in times.items()
    }
    raw["cli"] = {"case": CASE, "runs": result}
    raw_path.write_text(json.dumps(raw, indent=1, default=str))
    return result


def reset_from_raw(raw_path: Path) -> None:
    """In its own process: put the CLI runs' tables back to their base versions."""
    from retry_safe.bench.job import session
    from retry_safe.bench.measure import reset

    raw = json.loads(raw_path.read_text())
    spark = session(_target(raw))
    for table in RESET_TABLES:
        reset(spark, table, raw["settings"]["table_format"], raw["base_versions"][table])
