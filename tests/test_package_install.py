"""The adapter installs into any dbt project, as a dbt user installs it.

A wheel of this package is built from a copy of its sources and installed (not editable) into a
fresh virtual environment with the pinned versions of requirements.lock as constraints. That
environment's own `dbt init` creates a brand-new project and its `type: lakehouse` profile
outside this repository, answering the questions of the adapter's profile_template.yml; the
project gets one SQL and one Python idempotent_merge model over inline rows, and its `dbt run`
(a process of its own, its own JVM and metastore) runs twice: the first run writes exactly the
rows below, the second commits nothing to either table. One environment serves a Delta project
and an Iceberg project; the test runs once per suite (tests/conftest.py, format_independent).

The tables are read from their folders: the project's embedded metastore belongs to its own
process. A Delta commit is a `_delta_log/<version>.json` (its live data files: the log's `add`
actions less its `remove` actions); an Iceberg commit is a snapshot of the table's current
`metadata/<sequence>-<uuid>.metadata.json`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from support.processes import SHORT_RUN_JAVA_OPTIONS

# One environment builds a Delta and an Iceberg project: whichever pass runs it, once per suite,
# in the Iceberg pass (it balances the two passes).
pytestmark = [pytest.mark.slow, pytest.mark.format_independent(run_in="local_iceberg")]

REPOSITORY = Path(__file__).resolve().parents[1]
SCHEMA = "shop"
FORMAT_CHOICES = {"delta": 1, "iceberg": 2}  # the order of profile_template.yml's choices
T1 = datetime(2026, 10, 1, 9, 0)
T2 = datetime(2026, 10, 2, 9, 0)

ORDERS_SQL = """\
{{
    config(
        materialized='incremental',
        incremental_strategy='idempotent_merge',
        unique_key='order_id',
        version_column='updated_at',
    )
}}

-- order 1 twice: the newer version (shipped) is the one kept
select
    order_id,
    status,
    cast(amount as decimal(10, 2)) as amount,
    cast(updated_at as timestamp) as updated_at
from values
    (1, 'placed', 10.50, '2026-10-01 09:00:00'),
    (1, 'shipped', 10.50, '2026-10-02 09:00:00'),
    (2, 'placed', 20.00, '2026-10-01 09:00:00'),
    (3, 'placed', 5.25, '2026-10-01 09:00:00') as source (order_id, status, amount, updated_at)
"""

STATUS_TOTALS_PY = """\
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="idempotent_merge",
        unique_key="status",
    )
    orders = dbt.ref("orders")
    return orders.groupBy("status").agg(
        F.count("*").alias("orders"),
        F.sum("amount").alias("amount"),
    )
"""

EXPECTED_ORDERS = [
    (1, "shipped", Decimal("10.50"), T2),
    (2, "placed", Decimal("20.00"), T1),
    (3, "placed", Decimal("5.25"), T1),
]
EXPECTED_STATUS_TOTALS = [
    ("placed", 2, Decimal("25.25")),
    ("shipped", 1, Decimal("10.50")),
]


def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess:
    """Run a command; on failure the assertion shows its whole output."""
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, (
        f"{' '.join(map(str, command))} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    )
    return done


def build_wheel(workdir: Path) -> Path:
    """A wheel of this package, built from a copy of pyproject.toml and src/ (the repository
    gets no build/ or egg-info folder)."""
    source = workdir / "source"
    shutil.copytree(
        REPOSITORY / "src",
        source / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    shutil.copy(REPOSITORY / "pyproject.toml", source)
    dist = workdir / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dist, source])
    (wheel,) = dist.glob("*.whl")
    return wheel


def fresh_environment(workdir: Path, wheel: Path) -> Path:
    """A new virtual environment (no system site-packages) with the wheel and the
    dependencies it declares, at the versions of requirements.lock. Its bin/ folder."""
    venv = workdir / "venv"
    run([sys.executable, "-m", "venv", venv])
    pip = [venv / "bin" / "python", "-m", "pip", "--disable-pip-version-check", "--quiet"]
    run([*pip, "install", "--no-compile", wheel, "-c", REPOSITORY / "requirements.lock"])
    return venv / "bin"


def subprocess_env(bin_dir: Path, profiles: Path, home: Path) -> dict[str, str]:
    """This process's environment without its dbt, lakehouse and Python settings, plus the new
    project's: its profiles, its warehouse, the jars `make install` put in .jars, and a short
    run's JVM options (the template's LAKEHOUSE_JAVA_OPTIONS)."""
    jars = Path(os.environ.get("LAKEHOUSE_JARS_DIR") or REPOSITORY / ".jars").resolve()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DBT_", "LAKEHOUSE_", "PYTHON", "VIRTUAL_ENV"))
    }
    return {
        **env,
        "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        "DBT_PROFILES_DIR": str(profiles),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "LAKEHOUSE_HOME": str(home),
        "LAKEHOUSE_JARS_DIR": str(jars),
        "LAKEHOUSE_JAVA_OPTIONS": SHORT_RUN_JAVA_OPTIONS,
    }


def init_project(bin_dir: Path, workdir: Path, env: dict[str, str], table_format: str) -> Path:
    """`dbt init shop`, answering its questions on standard input as a user would type them:
    the adapter (its number in dbt's list), the table format, the schema, threads (default)."""
    plugins = run(
        [
            bin_dir / "python",
            "-c",
            "from dbt.task.init import _get_adapter_plugin_names as names; print(*names())",
        ],
        env=env,
    ).stdout.split()
    answers = [plugins.index("lakehouse") + 1, FORMAT_CHOICES[table_format], SCHEMA, ""]
    run(
        [bin_dir / "dbt", "init", "shop"],
        cwd=workdir,
        env=env,
        input="".join(f"{answer}\n" for answer in answers),
    )
    return workdir / "shop"


def write_models(project: Path, table_format: str) -> None:
    shutil.rmtree(project / "models" / "example")
    config_path = project / "dbt_project.yml"
    config = yaml.safe_load(config_path.read_text())
    config["models"] = {"shop": {"+file_format": table_format}}
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    (project / "models" / "orders.sql").write_text(ORDERS_SQL)
    (project / "models" / "status_totals.py").write_text(STATUS_TOTALS_PY)


def table_folder(home: Path, table_format: str, table: str) -> Path:
    return home / table_format / "warehouse" / f"{SCHEMA}.db" / table


def current_metadata(folder: Path) -> Path:
    """An Iceberg table's newest metadata file: <sequence>-<uuid>.metadata.json."""
    files = (folder / "metadata").glob("*.metadata.json")
    return max(files, key=lambda path: int(path.name.split("-")[0]))


def commits(home: Path, table_format: str, table: str) -> int:
    folder = table_folder(home, table_format, table)
    if table_format == "iceberg":
        return len(json.loads(current_metadata(folder).read_text())["snapshots"])
    return len(list((folder / "_delta_log").glob("*.json")))


def log_files(home: Path, table_format: str, table: str) -> list[str]:
    """Every file of the table's log (Delta) or metadata (Iceberg) folder."""
    folder = table_folder(home, table_format, table)
    log = folder / ("metadata" if table_format == "iceberg" else "_delta_log")
    return sorted(path.name for path in log.iterdir())


def delta_data_files(folder: Path) -> list[str]:
    """The parquet files of a Delta table's current version: its log replayed in order."""
    live: set[str] = set()
    for commit in sorted((folder / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                live.add(action["add"]["path"])
            elif "remove" in action:
                live.discard(action["remove"]["path"])
    return [str(folder / path) for path in sorted(live)]


def table_rows(spark, home: Path, table_format: str, table: str, columns: list[str]) -> list:
    """The table's rows, read from its folder by this process's Spark (any table format's
    pass: a Delta table's data files are read as plain parquet)."""
    folder = table_folder(home, table_format, table)
    if table_format == "iceberg":
        frame = spark.read.format("iceberg").load(str(current_metadata(folder)))
    else:
        frame = spark.read.parquet(*delta_data_files(folder))
    return [tuple(row) for row in frame.select(*columns).orderBy(columns[0]).collect()]


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, installed into a fresh virtual environment: its bin/ folder."""
    workdir = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(workdir)
    with zipfile.ZipFile(wheel) as archive:
        packaged = set(archive.namelist())
    shipped = {
        path.relative_to(REPOSITORY / "src").as_posix()
        for pattern in ("profile_template.yml", "dbt_project.yml", "macros/*.yml", "macros/*/*.sql")
        for path in (REPOSITORY / "src" / "dbt" / "include" / "lakehouse").glob(pattern)
    }
    assert "dbt/include/lakehouse/profile_template.yml" in shipped
    assert shipped - packaged == set()
    return fresh_environment(workdir, wheel)


@pytest.mark.parametrize("project_format", ["delta", "iceberg"])
def test_wheel_installs_into_a_new_dbt_project(
    bin_dir: Path, tmp_path: Path, project_format: str, spark
) -> None:
    table_format = project_format
    profiles, home = tmp_path / "profiles", tmp_path / "home"
    env = subprocess_env(bin_dir, profiles, home)
    installed = run(
        [bin_dir / "python", "-c", "import dbt.include.lakehouse as p; print(p.PACKAGE_PATH)"],
        env=env,
    ).stdout.strip()
    assert Path(installed).is_relative_to(bin_dir.parent), installed  # not the repository's

    project = init_project(bin_dir, tmp_path, env, table_format)
    profile = yaml.safe_load((profiles / "profiles.yml").read_text())["shop"]
    assert profile["target"] == "dev"
    target = profile["outputs"]["dev"]
    assert (target["type"], target["method"], target["schema"], target["threads"]) == (
        "lakehouse",
        "session",
        SCHEMA,
        1,
    )
    catalog = target["server_side_parameters"]["spark.sql.catalog.spark_catalog"]
    assert (
        catalog
        == {
            "delta": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "iceberg": "org.apache.iceberg.spark.SparkSessionCatalog",
        }[table_format]
    )

    write_models(project, table_format)
    run([bin_dir / "dbt", "run"], cwd=project, env=env)
    assert (
        table_rows(
            spark, home, table_format, "orders", ["order_id", "status", "amount", "updated_at"]
        )
        == EXPECTED_ORDERS
    )
    assert (
        table_rows(spark, home, table_format, "status_totals", ["status", "orders", "amount"])
        == EXPECTED_STATUS_TOTALS
    )
    tables = ("orders", "status_totals")
    before = {
        table: (commits(home, table_format, table), log_files(home, table_format, table))
        for table in tables
    }
    assert all(count >= 1 for count, _ in before.values()), before

    run([bin_dir / "dbt", "run"], cwd=project, env=env)  # the retry: nothing to commit
    after = {
        table: (commits(home, table_format, table), log_files(home, table_format, table))
        for table in tables
    }
    assert after == before
    assert (
        table_rows(
            spark, home, table_format, "orders", ["order_id", "status", "amount", "updated_at"]
        )
        == EXPECTED_ORDERS
    )
