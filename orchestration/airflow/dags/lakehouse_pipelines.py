"""One Airflow DAG per pipeline of the retry_safe dbt project, rendered by Astronomer Cosmos.

Each DAG runs daily from its pipeline's `begin` (dbt_project.yml). Every model is one task that
runs `dbt build --select <model>` (TestBehavior.BUILD): the model stages its interval, its data
tests run, and the project's on-run-end hook publishes it (write-audit-publish). The interval is
the run's data interval, handed to dbt as its event-time flags (Airflow renders the templates
into the task's command), never as --vars, which would make dbt parse the project again. A
pipeline whose models are tested against each other (same_rows_as of a SQL model and its
DataFrame twin) is one task, `dbt build --select path:models/<pipeline>`: built apart, each
model's test compared it with its twin at another day.

The seeds are one DAG of their own, lakehouse_seeds, unscheduled: trigger it once before the
pipelines' first runs and again when a seed file changes: they are the pipelines' fixed
inputs, not a day's load.

Airflow lives in its own virtual environment (orchestration/airflow/requirements.lock); dbt is
the project's, in .venv (ExecutionConfig's dbt_executable_path): neither side's pins constrain
the other. Cosmos reads the task graph from a manifest `dbt parse` wrote (LoadMode.DBT_MANIFEST:
no dbt parse while the scheduler loads this file) and gives each task the newest
partial_parse.msgpack, so a task's dbt reuses the parsed project.

Settings (environment of the scheduler, read when this file is parsed):
  LAKEHOUSE_PROJECT_DIR     the dbt project (default: the repository this file is in)
  LAKEHOUSE_DBT             the dbt command (default: <project>/.venv/bin/dbt); a command
                            line is split, so "<venv>/bin/lakehouse dbt" runs each task's dbt
                            from the package's warm runner (`lakehouse runner`, with a
                            lakehouse server and LAKEHOUSE_AIRFLOW_TARGET=server: no JVM per
                            task)
  LAKEHOUSE_AIRFLOW_MANIFEST the manifest (default: <project>/target/airflow/manifest.json,
                            `make airflow-manifest`)
  LAKEHOUSE_AIRFLOW_TARGET  the dbt target (default: local, Delta; local_iceberg for Iceberg).
                            Tasks that run at the same time need a shared metastore:
                            LAKEHOUSE_METASTORE_URL / _USER / _PASSWORD (`make pg`), which
                            the tasks inherit with the rest of the scheduler's environment
  LAKEHOUSE_AIRFLOW_RETRIES retries of a failed task (default 2): a retried interval load is
                            safe (idempotent_merge)
  LAKEHOUSE_AIRFLOW_RETRY_DELAY seconds before a retry (default 60)
  LAKEHOUSE_AIRFLOW_END_DATE the DAGs' end_date (default none): a past day stops the
                            scheduler's own daily runs, backfills of days up to it still run
  LAKEHOUSE_AIRFLOW_MAX_ACTIVE_RUNS runs of a DAG at once (catchup, backfills): 3 with a shared
                            metastore, else 1 (and then one task at a time); always 1 for a
                            pipeline with a model each run rebuilds whole (a table or view)
                            or with a test comparing two of its models whole (f1_drivers'
                            same_rows_as), and their backfills need --max-active-runs 1
  LAKEHOUSE_AIRFLOW_POOL    the tasks' Airflow pool (default_pool); with the embedded metastore
                            a pool of one slot keeps a backfill and scheduled runs apart
"""

from __future__ import annotations

import json
import os
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

# Cosmos hashes the dbt project's folder for Airflow 3's DAG versioning on every parse of this
# file (each of its DAGs). The project is the repository: without these, the hash reads both
# virtual environments (pyspark's jars alone are hundreds of MB), the warehouses and the jars,
# seconds per DAG, and fails on a socket file in a warehouse folder. None of them is dbt project
# content. Set before cosmos is imported, for a process that has not imported it yet (the DAG
# processor), and on cosmos' settings below, for one that has (a task process: Airflow's
# provider manager imports cosmos before the DAG file).
HASH_EXCLUDED = (
    ".venv,.airflow-venv,.lakehouse,.jars,.pg,.ruff_cache,.pytest_cache,__pycache__,"
    "src,tools,docs,orchestration,build,dist"
)
os.environ.setdefault("AIRFLOW__COSMOS__PROJECT_HASH_EXCLUDED_DIRS", HASH_EXCLUDED)

from airflow.sdk import DAG  # noqa: E402
from airflow.timetables.interval import CronDataIntervalTimetable  # noqa: E402
from cosmos import (  # noqa: E402
    DbtDag,
    ExecutionConfig,
    ExecutionMode,
    InvocationMode,
    LoadMode,
    ProfileConfig,
    ProjectConfig,
    RenderConfig,
    TestBehavior,
)
from cosmos import cache as cosmos_cache  # noqa: E402
from cosmos import settings as cosmos_settings  # noqa: E402
from cosmos.operators.local import DbtBuildLocalOperator  # noqa: E402

cosmos_settings.project_hash_excluded_dirs |= frozenset(HASH_EXCLUDED.split(","))

PROJECT = Path(
    os.environ.get("LAKEHOUSE_PROJECT_DIR", Path(__file__).resolve().parents[3])
).resolve()
# the executable, then what comes before dbt's own arguments (`lakehouse dbt`: "dbt")
DBT, *DBT_PREFIX = shlex.split(
    os.environ.get("LAKEHOUSE_DBT", shlex.quote(str(PROJECT / ".venv" / "bin" / "dbt")))
)
MANIFEST = Path(
    os.environ.get("LAKEHOUSE_AIRFLOW_MANIFEST", PROJECT / "target" / "airflow" / "manifest.json")
)
TARGET = os.environ.get("LAKEHOUSE_AIRFLOW_TARGET", "local")
RETRIES = int(os.environ.get("LAKEHOUSE_AIRFLOW_RETRIES", "2"))
RETRY_DELAY = timedelta(seconds=int(os.environ.get("LAKEHOUSE_AIRFLOW_RETRY_DELAY", "60")))
END_DATE = os.environ.get("LAKEHOUSE_AIRFLOW_END_DATE")
# An embedded Derby metastore admits one process at a time (the adapter refuses a second one in
# one line): without a shared metastore a DAG runs one task at a time, one run at a time.
SHARED_METASTORE = bool(os.environ.get("LAKEHOUSE_METASTORE_URL"))
MAX_ACTIVE_RUNS = int(
    os.environ.get("LAKEHOUSE_AIRFLOW_MAX_ACTIVE_RUNS", "3" if SHARED_METASTORE else "1")
)
MAX_ACTIVE_TASKS = 16 if SHARED_METASTORE else 1
# The limits above are per DAG run for a backfill's runs and a scheduled run side by side: an
# Airflow pool of one slot (`airflow pools set lakehouse_embedded 1 "..."`) serializes every
# task on the embedded metastore. Without it, a task that finds the metastore in use fails in
# one line and is retried.
POOL = os.environ.get("LAKEHOUSE_AIRFLOW_POOL", "default_pool")

# dbt's --event-time-start/-end take a naive datetime (click.DateTime); Airflow's data interval
# is in UTC, as the project's sessions are.
EVENT_TIME = "%Y-%m-%dT%H:%M:%S"
INTERVAL_FLAGS = [
    "--event-time-start",
    "{{ data_interval_start.in_timezone('UTC').strftime('" + EVENT_TIME + "') }}",
    "--event-time-end",
    "{{ data_interval_end.in_timezone('UTC').strftime('" + EVENT_TIME + "') }}",
]


def day(text: str) -> datetime:
    """Midnight UTC of an ISO date."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def pipelines() -> dict[str, str]:
    """Each pipeline (a folder of models/) and its first day, the model config `begin` of
    dbt_project.yml."""
    project = yaml.safe_load((PROJECT / "dbt_project.yml").read_text())
    folders = project["models"][project["name"]]
    return {
        name: str(config["+begin"])
        for name, config in folders.items()
        if isinstance(config, dict) and "+begin" in config
    }


def rebuilt_models() -> dict[str, list[str]]:
    """Per pipeline, its models that every run rebuilds whole (materialized table or view, such
    as stg_order_change_lines): they hold one run's interval only, so a run of the pipeline
    must not overlap another one (the next model of one run would read the other's)."""
    nodes = json.loads(MANIFEST.read_text())["nodes"].values()
    rebuilt: dict[str, list[str]] = {}
    for node in nodes:
        path = Path(node["original_file_path"]).parts
        whole = node["resource_type"] == "model" and node["config"]["materialized"] in (
            "table",
            "view",
        )
        if whole and len(path) > 2 and path[0] == "models":
            rebuilt.setdefault(path[1], []).append(node["name"])
    return rebuilt


def profile_config() -> ProfileConfig:
    return ProfileConfig(
        profile_name="retry_safe",
        target_name=TARGET,
        profiles_yml_filepath=PROJECT / "profiles" / "profiles.yml",
    )


def operator_args(flags: list[str]) -> dict:
    """Each task's dbt: its command, flags, pool and environment."""
    return {
        "dbt_cmd_global_flags": DBT_PREFIX,
        "dbt_cmd_flags": flags,
        "install_deps": False,
        "pool": POOL,
        # the scheduler's environment (JAVA_HOME, the metastore's settings), plus the project's
        # folders as make sets them
        "append_env": True,
        "env": {
            "DBT_PROFILES_DIR": str(PROJECT / "profiles"),
            "LAKEHOUSE_HOME": os.environ.get("LAKEHOUSE_HOME", str(PROJECT / ".lakehouse")),
            "LAKEHOUSE_JARS_DIR": os.environ.get("LAKEHOUSE_JARS_DIR", str(PROJECT / ".jars")),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        },
    }


def dbt_dag(dag_id: str, select: str, flags: list[str], **dag) -> DbtDag:
    """The selected nodes, one `dbt build` task each, with the project's dbt and profile."""
    return DbtDag(
        dag_id=dag_id,
        default_args={"retries": RETRIES, "retry_delay": RETRY_DELAY},
        project_config=ProjectConfig(
            dbt_project_path=PROJECT,
            manifest_path=MANIFEST,
            partial_parse=True,
        ),
        profile_config=profile_config(),
        execution_config=ExecutionConfig(
            execution_mode=ExecutionMode.LOCAL,
            invocation_mode=InvocationMode.SUBPROCESS,
            dbt_executable_path=DBT,
        ),
        render_config=RenderConfig(
            load_method=LoadMode.DBT_MANIFEST,
            test_behavior=TestBehavior.BUILD,
            select=[select],
        ),
        operator_args=operator_args(flags),
        **dag,
    )


def joined_pipelines() -> dict[str, bool]:
    """The pipelines with a data test of two of their models (same_rows_as of a SQL model and
    its DataFrame twin): a build of one of them runs it against the other, which must be at
    the same day, and an audited model is refused a build without all its tests. Each with
    whether all such tests compare the run's interval only (same_rows_as' interval_column): if
    one compares whole tables, runs of the pipeline at once make it fail (one twin already has
    another run's day, the other not yet), so the pipeline runs one run at a time."""
    nodes = json.loads(MANIFEST.read_text())["nodes"].values()
    folder = {
        node["unique_id"]: Path(node["original_file_path"]).parts[1]
        for node in nodes
        if node["resource_type"] == "model"
    }
    joined: dict[str, bool] = {}
    for node in nodes:
        models = [folder[n] for n in node.get("depends_on", {}).get("nodes", []) if n in folder]
        if node["resource_type"] == "test" and len(models) > 1 and len(set(models)) == 1:
            scoped = "interval_column" in (node.get("test_metadata") or {}).get("kwargs", {})
            joined[models[0]] = joined.get(models[0], True) and scoped
    return joined


def pipeline_schedule(pipeline: str, begin: str, serial: bool) -> dict:
    """What every pipeline's DAG has: the daily interval from `begin`, retries, limits."""
    return {
        "description": f"dbt build of models/{pipeline}, one daily interval per run",
        # [midnight, next midnight) UTC: a run's data interval is the day it loads (Airflow
        # 3's "@daily" alone would be a trigger timetable with an empty interval)
        "schedule": CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
        "start_date": day(begin),
        "end_date": day(END_DATE) if END_DATE else None,
        "catchup": False,
        "max_active_runs": 1 if serial else MAX_ACTIVE_RUNS,
        "max_active_tasks": MAX_ACTIVE_TASKS,
        "tags": ["lakehouse", pipeline],
    }


def joined_pipeline_dag(pipeline: str, begin: str, serial: bool) -> DAG:
    """A joined pipeline's models in one `dbt build` task (dbt runs the test of both after
    both, and publishes them together), through Cosmos' operator."""
    dag_id = f"lakehouse_{pipeline}"
    with DAG(
        dag_id=dag_id,
        default_args={"retries": RETRIES, "retry_delay": RETRY_DELAY},
        **pipeline_schedule(pipeline, begin, serial),
    ) as dag:
        DbtBuildLocalOperator(
            task_id=f"{pipeline}_build",
            project_dir=str(PROJECT),
            profile_config=profile_config(),
            select=f"path:models/{pipeline}",
            dbt_executable_path=DBT,
            invocation_mode=InvocationMode.SUBPROCESS,
            partial_parse=True,
            # the partial parse of the DAG's runs, cached as DbtDag caches it
            cache_dir=cosmos_cache._obtain_cache_dir_path(cache_identifier=dag_id),
            **operator_args(INTERVAL_FLAGS),
        )
    return dag


def pipeline_dag(pipeline: str, begin: str, serial: bool) -> DbtDag:
    """The pipeline's models, one `dbt build` task each on the run's day; one run at a time when
    serial."""
    return dbt_dag(
        f"lakehouse_{pipeline}",
        select=f"path:models/{pipeline}",
        flags=INTERVAL_FLAGS,
        **pipeline_schedule(pipeline, begin, serial),
    )


def seeds_dag() -> DbtDag:
    """Every seed, one `dbt build` task each (the seed and its tests), triggered by hand: once
    before the pipelines' first runs, again when a seed file changes."""
    return dbt_dag(
        "lakehouse_seeds",
        select="path:seeds",
        flags=[],
        description="dbt build of the seeds the pipelines read: trigger before their first runs",
        schedule=None,
        max_active_runs=1,
        max_active_tasks=MAX_ACTIVE_TASKS,
        tags=["lakehouse", "seeds"],
    )


_rebuilt = rebuilt_models()
_joined = joined_pipelines()
for _pipeline, _begin in pipelines().items():
    _make = joined_pipeline_dag if _pipeline in _joined else pipeline_dag
    _serial = _pipeline in _rebuilt or not _joined.get(_pipeline, True)
    globals()[f"lakehouse_{_pipeline}"] = _make(_pipeline, _begin, serial=_serial)
lakehouse_seeds = seeds_dag()
