"""The Airflow deployment (orchestration/airflow/) schedules the pipelines for real: its DAG file
imports without errors in Airflow's own virtual environment (.airflow-venv, `make airflow`), and
one day of the orders pipeline runs end to end through `airflow dags test` (a SQLite metadata
database in a temporary AIRFLOW_HOME): Cosmos runs each model's `dbt build` with the project's
dbt, the run's data interval given as dbt's event-time flags, and the tables hold exactly the
reference document's rows of that day (support/expected.py).

Delta only: the DAG hands the interval to the same dbt commands on either format, which the
pipelines' own tests cover on both.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from support.expected import ORDER_COLUMNS, ORDERS_AFTER_OCT_3, REJECTED, REJECTED_COLUMNS
from support.processes import step_env

from retry_safe.project import PROJECT_DIR, run_dbt

pytestmark = pytest.mark.format_independent(run_in="local")

AIRFLOW_BIN = PROJECT_DIR / ".airflow-venv" / "bin"
DAGS = PROJECT_DIR / "orchestration" / "airflow" / "dags"
DAG = "lakehouse_order_changes"
# What the DAG file must define: one DAG per pipeline of dbt_project.yml, each model (and seed)
# one `dbt build` task.
EXPECTED_DAGS = {
    "lakehouse_cart_abandonment": [
        "retail_daily_product_cart_abandonment_df_model_build",
        "retail_daily_product_cart_abandonment_model_build",
        "retail_session_products_seed_build",
    ],
    "lakehouse_customer_balances": [
        "customer_balance_batches_seed_build",
        "customer_balances_additive_model_build",
        "customer_balances_versioned_model_build",
        "customer_versions_seed_build",
    ],
    "lakehouse_f1_drivers": [
        "f1_driver_batches_seed_build",
        "f1_drivers_merge_df_model_build",
        "f1_drivers_merge_model_build",
    ],
    DAG: [
        "orders_model_build",
        "rejected_orders_model_build",
        "stg_order_change_lines_model_build",
    ],
}
DAGBAG = """
import json
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder={folder!r})
print("DAGBAG " + json.dumps({{
    "errors": {{str(k): str(v) for k, v in bag.import_errors.items()}},
    "dags": {{d: sorted(t.task_id for t in dag.tasks) for d, dag in bag.dags.items()}},
    "retries": sorted({{t.retries for dag in bag.dags.values() for t in dag.tasks}}),
}}))
"""

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


def delta_rows(spark, folder: Path, columns: list[str]) -> list[tuple]:
    """A Delta table's rows, read from its folder (the suite's own session: the warehouse's
    Derby metastore belongs to the Airflow tasks' processes)."""
    table = spark.read.format("delta").load(str(folder))
    return sorted(tuple(row) for row in table.select(*columns).collect())


def test_a_day_of_the_orders_pipeline_runs_through_airflow(spark, target, tmp_path, json_artifacts):
    home = tmp_path / "lakehouse"
    dbt_target = tmp_path / "dbt-target"
    env = step_env(
        AIRFLOW_HOME=str(tmp_path / "airflow"),
        AIRFLOW__CORE__DAGS_FOLDER=str(DAGS),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__COSMOS__ENABLE_TELEMETRY="False",
        AIRFLOW__COSMOS__CACHE_DIR=str(tmp_path / "cosmos"),
        LAKEHOUSE_AIRFLOW_MANIFEST=str(dbt_target / "manifest.json"),
        LAKEHOUSE_AIRFLOW_TARGET=target,
        LAKEHOUSE_HOME=str(home),
    )
    # the suite's own target folder (tests/conftest.py) is not the tasks': Cosmos runs each in a
    # copy of the project and keeps its partial_parse.msgpack from target/ there
    suite_target = Path(env.pop("DBT_TARGET_PATH", PROJECT_DIR / "target"))
    # the tables in the profile's default schema, analytics
    env.pop("LAKEHOUSE_SCHEMA", None)
    took: dict[str, float] = {}
    started = time.monotonic()
    # the metadata database (SQLite), while the manifest is written and the DAG file imported
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

        # the DAG file imports without errors: one DAG per pipeline, retries set
        loaded = subprocess.run(
            [str(AIRFLOW_BIN / "python"), "-c", DAGBAG.format(folder=str(DAGS))],
            env=env,
            cwd=PROJECT_DIR,
            capture_output=True,
            text=True,
            timeout=300,
        )
        took["DagBag"] = time.monotonic() - started - took["dbt parse"]
        assert loaded.returncode == 0, loaded.stderr[-3000:]
        bag = json.loads(loaded.stdout.split("DAGBAG ", 1)[1].splitlines()[0])
        assert bag["errors"] == {}
        assert bag["dags"] == EXPECTED_DAGS
        assert bag["retries"] == [2]
        migrated = migrate.communicate(timeout=300)[0]
        assert migrate.returncode == 0, migrated[-3000:]
    finally:
        if migrate.poll() is None:
            migrate.kill()
            migrate.communicate()
    took["until migrated"] = time.monotonic() - started

    # a manual run's data interval is the last whole day before its logical date: October 3
    ran = airflow(env, "dags", "test", DAG, "2026-10-04T00:00:00+00:00")
    took["dags test"] = time.monotonic() - started - took["until migrated"]
    print("airflow test phases (s): " + json.dumps({k: round(v, 1) for k, v in took.items()}))
    log = ran.stdout + ran.stderr
    assert ran.returncode == 0, log[-6000:]
    assert "state=success" in log and "data_interval_start=2026-10-03 00:00:00+00:00" in log
    # each model's task ran `dbt build` with the interval as dbt's event-time flags, no vars
    for model in ("stg_order_change_lines", "rejected_orders", "orders"):
        assert (
            f"'build', '--select', 'fqn:retry_safe.order_changes.{model}', "
            "'--event-time-start', '2026-10-03T00:00:00', "
            "'--event-time-end', '2026-10-04T00:00:00'"
        ) in log
    assert "--vars" not in log
    # the first task parsed the project (Cosmos' cache is new), the next ones reused it
    assert log.count("Unable to do partial parsing") == 1

    warehouse = home / "delta" / "warehouse" / "analytics.db"
    assert delta_rows(spark, warehouse / "orders", ORDER_COLUMNS) == sorted(ORDERS_AFTER_OCT_3)
    assert delta_rows(spark, warehouse / "rejected_orders", REJECTED_COLUMNS) == REJECTED
