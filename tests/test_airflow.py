"""The Airflow deployment (orchestration/airflow/) schedules the pipelines for real: its DAG file
imports without errors in Airflow's own virtual environment (.airflow-venv, `make airflow`), and
one day of the orders pipeline runs end to end through `airflow dags test` (a SQLite metadata
database in a temporary AIRFLOW_HOME): Cosmos runs each model's `dbt build` of the shipped DAG
file, the run's data interval given as dbt's event-time flags, and the tables hold exactly the
reference document's rows of that day (support/expected.py).

The tasks run the warm path the deployment documents for many small tasks: a lakehouse server
(`lakehouse serve`, one JVM, started while the manifest is written and the metadata database
migrated) and the package's warm runner (LAKEHOUSE_DBT="lakehouse dbt",
LAKEHOUSE_AIRFLOW_TARGET=server): no task starts a JVM of its own, which was 16 s a task.

One pass, the Iceberg one: the DAG hands the interval to the same dbt commands on either
format, which the pipelines' own tests cover on both. The tables are read as an analyst reads
them, through the server's JDBC endpoint (PyHive).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.analysts import as_text, jdbc_query
from support.expected import ORDER_COLUMNS, ORDERS_AFTER_OCT_3, REJECTED, REJECTED_COLUMNS
from support.processes import free_ports, step_env

from retry_safe.project import EMBEDDED_TARGETS, PROJECT_DIR, SERVER_TARGETS, run_dbt
from retry_safe.server_process import spawn, spawn_runner, stop

pytestmark = pytest.mark.format_independent(run_in="local_iceberg")

AIRFLOW_BIN = PROJECT_DIR / ".airflow-venv" / "bin"
DAGS = PROJECT_DIR / "orchestration" / "airflow" / "dags"
DAG = "lakehouse_order_changes"
# What the DAG file must define: one DAG per pipeline of dbt_project.yml, each model one
# `dbt build` task (a pipeline whose models are tested against each other: one task), and the
# seeds' DAG.
EXPECTED_DAGS = {
    # a SQL model and its DataFrame twin, tested against each other: one task
    "lakehouse_cart_abandonment": ["cart_abandonment_build"],
    "lakehouse_customer_balances": [
        "customer_balances_additive_model_build",
        "customer_balances_versioned_model_build",
    ],
    "lakehouse_f1_drivers": ["f1_drivers_build"],
    DAG: [
        "orders_model_build",
        "rejected_orders_model_build",
        "stg_order_change_lines_model_build",
    ],
    "lakehouse_seeds": [
        "customer_balance_batches_seed_build",
        "customer_versions_seed_build",
        "f1_driver_batches_seed_build",
        "retail_session_products_seed_build",
    ],
}
# Runs of a DAG at once, with 3 allowed: one at a time for a pipeline with a test comparing two
# of its models whole (f1_drivers)
MAX_ACTIVE_RUNS = {
    "lakehouse_cart_abandonment": 3,
    "lakehouse_customer_balances": 3,
    "lakehouse_f1_drivers": 1,
    DAG: 3,
    "lakehouse_seeds": 1,
}
DAGBAG = """
import json
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder={folder!r})
print("DAGBAG " + json.dumps({{
    "errors": {{str(k): str(v) for k, v in bag.import_errors.items()}},
    "dags": {{d: sorted(t.task_id for t in dag.tasks) for d, dag in bag.dags.items()}},
    "retries": sorted({{t.retries for dag in bag.dags.values() for t in dag.tasks}}),
    "max_active_runs": {{d: dag.max_active_runs for d, dag in bag.dags.items()}},
}}))
"""
TOKEN = "token-for-the-airflow-test"
FULL_PARSE = "Unable to do partial parsing"

if not (AIRFLOW_BIN / "airflow").is_file():
    pytest.skip(
        "Airflow's virtual environment .airflow-venv is not installed: run `make airflow` "
        "(`make test` installs it)",
        allow_module_level=True,
    )


def airflow(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(AIRFLOW_BIN / "airflow"), *args],
        env=env,
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_day_of_the_orders_pipeline_runs_through_airflow(
    target, table_format, tmp_path, json_artifacts
):
    home = tmp_path / "lakehouse"
    dbt_target = tmp_path / "dbt-target"
    # a Unix socket's path has to be short: not under pytest's tmp_path
    sockets = Path(tempfile.mkdtemp(prefix="airflow-test-"))
    connect_port, thrift_port = free_ports()
    env = step_env(
        AIRFLOW_HOME=str(tmp_path / "airflow"),
        AIRFLOW__CORE__DAGS_FOLDER=str(DAGS),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__COSMOS__ENABLE_TELEMETRY="False",
        AIRFLOW__COSMOS__CACHE_DIR=str(tmp_path / "cosmos"),
        LAKEHOUSE_AIRFLOW_MANIFEST=str(dbt_target / "manifest.json"),
        LAKEHOUSE_HOME=str(home),
        # the warm path: the tasks' dbt from the package's runner, on the lakehouse server
        LAKEHOUSE_AIRFLOW_TARGET=SERVER_TARGETS[table_format],
        LAKEHOUSE_DBT=f"{Path(sys.executable).with_name('lakehouse')} dbt",
        LAKEHOUSE_RUNNER_SOCKET=str(sockets / "runner.sock"),
        LAKEHOUSE_CONNECT_PORT=str(connect_port),
        LAKEHOUSE_THRIFT_PORT=str(thrift_port),
        LAKEHOUSE_SERVER_TOKEN=TOKEN,
        LAKEHOUSE_THRIFT_PASSWORD=TOKEN,
        LAKEHOUSE_AIRFLOW_MAX_ACTIVE_RUNS="3",
    )
    # the suite's own target folder (tests/conftest.py) is not the tasks': Cosmos runs each in a
    # copy of the project and keeps its partial_parse.msgpack from target/ there
    suite_target = Path(env.pop("DBT_TARGET_PATH", PROJECT_DIR / "target"))
    # the tables in the profile's default schema, analytics
    env.pop("LAKEHOUSE_SCHEMA", None)
    took: dict[str, float] = {}
    started = time.monotonic()
    # the lakehouse server and the warm runner start, and the metadata database (SQLite) is
    # migrated, while the manifest is written and the DAG file imported
    pool = ThreadPoolExecutor(max_workers=2)
    server = pool.submit(spawn, EMBEDDED_TARGETS[table_format], env, home / "logs")
    runner = pool.submit(spawn_runner, sockets / "runner.sock", env, home / "logs")
    migrate = subprocess.Popen(
        [str(AIRFLOW_BIN / "airflow"), "db", "migrate"],
        env=env,
        cwd=PROJECT_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # the manifest Cosmos renders the DAGs from, as `make airflow-manifest` writes it (a
        # partial parse in the suite's target folder)
        run_dbt(["parse"], target)
        dbt_target.mkdir()
        shutil.copy(suite_target / "manifest.json", dbt_target / "manifest.json")
        took["dbt parse"] = time.monotonic() - started

        # the DAG file imports without errors: one DAG per pipeline and the seeds', retries set
        loaded = subprocess.run(
            [str(AIRFLOW_BIN / "python"), "-c", DAGBAG.format(folder=str(DAGS))],
            env=env,
            cwd=PROJECT_DIR,
            capture_output=True,
            text=True,
            timeout=300,
        )
        took["DagBag"] = time.monotonic() - started
        assert loaded.returncode == 0, loaded.stderr[-3000:]
        bag = json.loads(loaded.stdout.split("DAGBAG ", 1)[1].splitlines()[0])
        assert bag["errors"] == {}
        assert bag["dags"] == EXPECTED_DAGS
        assert bag["retries"] == [2]
        assert bag["max_active_runs"] == MAX_ACTIVE_RUNS
        migrated = migrate.communicate(timeout=300)[0]
        assert migrate.returncode == 0, migrated[-3000:]
        took["migrated"] = time.monotonic() - started
        server.result(timeout=300)
        runner.result(timeout=300)
        took["server up"] = time.monotonic() - started

        # a manual run's data interval is the last whole day before its logical date: October 3
        ran = airflow(env, "dags", "test", DAG, "2026-10-04T00:00:00+00:00")
        took["dags test"] = time.monotonic() - started
        log = ran.stdout + ran.stderr
        assert ran.returncode == 0, log[-6000:]
        assert "state=success" in log and "data_interval_start=2026-10-03 00:00:00+00:00" in log
        # each model's task ran `dbt build` through the warm runner, with the interval as dbt's
        # event-time flags, no vars
        for model in ("stg_order_change_lines", "rejected_orders", "orders"):
            assert (
                f"'dbt', 'build', '--select', 'fqn:retry_safe.order_changes.{model}', "
                "'--event-time-start', '2026-10-03T00:00:00', "
                "'--event-time-end', '2026-10-04T00:00:00'"
            ) in log
        assert "--vars" not in log
        # the first task parsed the project (Cosmos' cache is new: dbt says why, a line a
        # reason), the next ones reused the partial parse it left
        tasks = log.split("Running command: ")[1:]
        assert len(tasks) == 3
        assert [FULL_PARSE in task for task in tasks] == [True, False, False]

        # the tables, as an analyst on the server's JDBC endpoint reads them
        query = jdbc_query("127.0.0.1", thrift_port, TOKEN)
        orders = query(f"select {', '.join(ORDER_COLUMNS)} from analytics.orders")
        assert as_text(orders) == as_text(ORDERS_AFTER_OCT_3)
        rejected = query(f"select {', '.join(REJECTED_COLUMNS)} from analytics.rejected_orders")
        assert as_text(rejected) == as_text(REJECTED)
    finally:
        print(
            "airflow test, seconds since start: "
            + json.dumps({k: round(v, 1) for k, v in took.items()})
        )
        if migrate.poll() is None:
            migrate.kill()
            migrate.communicate()
        for process in (runner, server):
            if process.exception() is None:
                stop(process.result())
        pool.shutdown()
        shutil.rmtree(sockets, ignore_errors=True)
