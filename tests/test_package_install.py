"""The acceptance test of the product: dbt-lakehouse installed from its wheel alone, as a data team
adds it to their own dbt project on a machine where this repository was never cloned.

The wheel is built from a copy of pyproject.toml, setup.py and src/ (the tooling in tools/ must
not be in it), then installed (not editable) into a fresh virtual environment in a temporary
folder, with the pinned versions of requirements.lock as constraints. Every command then runs
from that environment with a fresh HOME and no variable pointing into the checkout: no
DBT_PROFILES_DIR, no LAKEHOUSE_HOME, no LAKEHOUSE_JARS_DIR (the per-user cache is the default);
only a short run's JVM options (LAKEHOUSE_JAVA_OPTIONS) are set, to save CPU. For each table
format (`make test`: Delta; `make soak`: Delta and Iceberg):

1. `lakehouse jars` finds the cache complete (it was filled from this repository's verified
   jars, so the test needs no network; the download itself is tested in tests/unit/test_jars.py)
   and says so;
2. `dbt init` creates a project and its profile in ~/.dbt, answering the adapter's questions as a
   user types them: a session target with only type, method, table_format, schema, threads;
3. `dbt build` of one SQL and one Python idempotent_merge model and their data tests over two
   days given as event-time flags;
4. (Delta, the default format) `lakehouse serve` of that project's target; `dbt run --target
   server` (the target the banner describes) loads the third day through it; beeline (JDBC) and
   the Spark Connect Python client read the tables (that analyst leaves mid-result); an
   analyst's DROP TABLE is refused in one line; Ctrl-C stops the server, exit 0, both ports
   free, and its console held nothing but the banner and the stop.

A retry that commits nothing is the strategy's, the same code installed or not: the pipelines'
tests check it on both formats (tests/test_cart_abandonment.py).

It runs once per suite (the environment serves both formats), in the Iceberg pass.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from support.passes import SOAK
from support.processes import SHORT_RUN_JAVA_OPTIONS

from dbt.adapters.lakehouse.session.jars import jars_root, pinned_drivers, pinned_storage

pytestmark = [pytest.mark.slow, pytest.mark.format_independent(run_in="local_iceberg")]

REPOSITORY = Path(__file__).resolve().parents[1]
FORMAT_CHOICES = {"delta": 1, "iceberg": 2}  # the order of profile_template.yml's choices
DAYS_1_2 = ["--event-time-start", "2026-10-01", "--event-time-end", "2026-10-03"]
DAY_3 = ["--event-time-start", "2026-10-03", "--event-time-end", "2026-10-04"]
READY = "Stop with Ctrl-C."
JVM_WARNING = "WARNING: Using incubator modules"  # every Spark JVM's, beeline's too

ORDERS_SQL = """\
{{
    config(
        materialized='incremental',
        incremental_strategy='idempotent_merge',
        unique_key='order_id',
        version_column='updated_at',
        interval_column='updated_at',
    )
}}

-- order 1 twice on day 2: the newer version (shipped) is the one kept
with changes as (
    select
        order_id,
        status,
        cast(amount as decimal(10, 2)) as amount,
        cast(updated_at as timestamp) as updated_at
    from values
        (1, 'placed', 10.50, '2026-10-01 09:00:00'),
        (1, 'shipped', 10.50, '2026-10-02 09:00:00'),
        (1, 'packed', 10.50, '2026-10-02 08:00:00'),
        (2, 'placed', 20.00, '2026-10-01 09:00:00'),
        (3, 'placed', 5.25, '2026-10-02 10:00:00'),
        (2, 'cancelled', 20.00, '2026-10-03 11:00:00'),
        (4, 'placed', 7.00, '2026-10-03 12:00:00')
        as source (order_id, status, amount, updated_at)
)

select * from changes
where {{ in_interval('updated_at') }}
"""
ORDERS_YML = """\
version: 2
models:
  - name: orders
    columns:
      - name: order_id
        data_tests: [unique, not_null]
"""
DAILY_TOTALS_PY = """\
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="idempotent_merge",
        unique_key="day",
        interval_column="day",
        delete_missing_in_interval=True,
    )
    start, end = dbt.interval.start, dbt.interval.end
    orders = dbt.ref("orders").withColumn("day", F.to_date("updated_at"))
    in_interval = (F.col("day") >= F.lit(start.date())) & (F.col("day") < F.lit(end.date()))
    return orders.filter(in_interval).groupBy("day").agg(
        F.count("*").alias("orders"), F.sum("amount").alias("amount")
    )
"""
# Worked out by hand from the values above: days 1 and 2 built embedded, then day 3 through
# the server.
ORDERS_DAYS_1_3 = [
    "1,shipped,10.50,2026-10-02 09:00:00",
    "2,cancelled,20.00,2026-10-03 11:00:00",
    "3,placed,5.25,2026-10-02 10:00:00",
    "4,placed,7.00,2026-10-03 12:00:00",
]
# order 2 moved to day 3: day 1 keeps the totals of its own load, a later run of day 1 would
# reconcile it (the daily totals are of the orders an interval's run sees)
DAILY_TOTALS_DAYS_1_3 = [
    "2026-10-01,1,20.00",
    "2026-10-02,2,15.75",
    "2026-10-03,2,27.00",
]


# a line dbt prints: its time first (after a color reset when colors are on)
DBT_LINE = re.compile(r"^(\x1b\[0m)?\d\d:\d\d:\d\d ")


def run(command: list, **kwargs: object) -> subprocess.CompletedProcess:
    """Run a command; on failure the assertion shows its whole output."""
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, (
        f"{' '.join(map(str, command))} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    )
    return done


def build_wheel(workdir: Path) -> Path:
    """The product's wheel, built as `make wheel` builds it, from a copy of the sources (the
    repository gets no build/ or egg-info folder)."""
    source = workdir / "source"
    shutil.copytree(
        REPOSITORY / "src",
        source / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "lakehouse-server.jar"),
    )
    for name in ("pyproject.toml", "setup.py"):
        shutil.copy(REPOSITORY / name, source)
    dist = workdir / "dist"
    pip = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--quiet"]
    run([*pip, "-w", dist, source])
    (wheel,) = dist.glob("dbt_lakehouse-*.whl")
    return wheel


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Environment:
    """The fresh virtual environment and the user's machine around it."""

    bin: Path
    home: Path  # the user's HOME: ~/.dbt, ~/.cache
    env: dict[str, str]

    def command(self, name: str, *args: object, cwd: Path | None = None, **kw: object):
        return run([self.bin / name, *args], cwd=cwd or self.home, env=self.env, **kw)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Environment:
    """The wheel, installed into a fresh virtual environment, and a user's HOME."""
    workdir = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(workdir)
    with zipfile.ZipFile(wheel) as archive:
        packaged = set(archive.namelist())
    product = {
        path.relative_to(REPOSITORY / "src").as_posix()
        for pattern in ("include/lakehouse/**/*.*", "adapters/lakehouse/**/*.py")
        for path in (REPOSITORY / "src" / "dbt").glob(pattern)
        if "__pycache__" not in path.parts
    }
    assert product - packaged == set()
    assert "dbt/adapters/lakehouse/server/lakehouse-server.jar" in packaged  # compiled: no JDK
    assert "dbt/include/lakehouse/jars.json" in packaged
    assert [name for name in packaged if name.startswith("retry_safe")] == []  # tooling stays

    venv = workdir / "venv"
    run([sys.executable, "-m", "venv", venv])
    lock = workdir / "requirements.lock"
    shutil.copy(REPOSITORY / "requirements.lock", lock)
    pip = [venv / "bin" / "python", "-m", "pip", "--disable-pip-version-check", "--quiet"]
    run([*pip, "install", "--no-compile", wheel, "-c", lock])

    home = workdir / "home"
    # the user's cache, filled from this repository's verified jars (no network in the test)
    cache = home / ".cache" / "dbt-lakehouse" / "jars"
    # the metastore's JDBC driver and the S3 connector too
    for folder in [*FORMAT_CHOICES, *pinned_drivers(), *pinned_storage()]:
        shutil.copytree(jars_root() / folder, cache / folder)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DBT_", "LAKEHOUSE_", "PYTHON", "VIRTUAL_ENV", "SPARK_"))
        and key not in ("HOME", "XDG_CACHE_HOME", "PWD", "OLDPWD")
    }
    env |= {
        "HOME": str(home),
        "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "LAKEHOUSE_JAVA_OPTIONS": SHORT_RUN_JAVA_OPTIONS,
    }
    assert not any(str(REPOSITORY) in value for value in env.values()), "a path of the checkout"
    return Environment(venv / "bin", home, env)


def init_project(user: Environment, name: str, table_format: str) -> Path:
    """`dbt init <name>`, answering its questions on standard input as a user would type them:
    the adapter (its number in dbt's list), the table format, the schema, threads (default)."""
    plugins = user.command(
        "python",
        "-c",
        "from dbt.task.init import _get_adapter_plugin_names as names; print(*names())",
    ).stdout.split()
    answers = [plugins.index("lakehouse") + 1, FORMAT_CHOICES[table_format], name, ""]
    user.command("dbt", "init", name, input="".join(f"{answer}\n" for answer in answers))
    project = user.home / name
    shutil.rmtree(project / "models" / "example")
    config_path = project / "dbt_project.yml"
    config = yaml.safe_load(config_path.read_text())
    config["models"] = {name: {"+file_format": table_format}}
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    (project / "models" / "orders.sql").write_text(ORDERS_SQL)
    (project / "models" / "orders.yml").write_text(ORDERS_YML)
    (project / "models" / "daily_totals.py").write_text(DAILY_TOTALS_PY)
    return project


def log_files(project: Path, table_format: str, schema: str) -> dict[str, list[str]]:
    """Every file of each table's log (Delta) or metadata (Iceberg) folder: a commit adds one."""
    warehouse = project / ".lakehouse" / table_format / "warehouse" / f"{schema}.db"
    log = "metadata" if table_format == "iceberg" else "_delta_log"
    return {
        table: sorted(path.name for path in (warehouse / table / log).iterdir())
        for table in ("orders", "daily_totals")
    }


@pytest.fixture
def server(installed: Environment) -> Iterator[dict]:
    """Starts `lakehouse serve` for a project when called; stops it (Ctrl-C) afterwards."""
    started: list[subprocess.Popen] = []

    def serve(project: Path, connect_port: int, thrift_port: int) -> str:
        out = project / "server.out"
        with out.open("w") as stdout:
            process = subprocess.Popen(
                [installed.bin / "lakehouse", "serve", "--project-dir", project, "--target", "dev"]
                + ["--connect-port", str(connect_port), "--thrift-port", str(thrift_port)],
                cwd=installed.home,
                env=installed.env,
                stdout=stdout,
                stderr=subprocess.STDOUT,
            )
        started.append(process)
        deadline = time.monotonic() + 300
        while READY not in out.read_text():
            assert process.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.2)
        return out.read_text()

    def stop() -> int:
        process = started.pop()
        process.send_signal(signal.SIGINT)
        return process.wait(timeout=120)

    yield {"serve": serve, "stop": stop}
    for process in started:
        process.kill()
        process.wait()


# The server from the package on Delta, the default format; on Iceberg (`make soak`) the build
# (its jars from the cache, its session catalog): the server itself serves both formats in
# tests/test_server.py. `make test` checks the Iceberg jars in the Delta project's `lakehouse
# jars`; the session catalog is the package's settings, which every Iceberg test runs.
PROJECTS = [("delta", True), ("iceberg", False)] if SOAK else [("delta", True)]


@pytest.mark.parametrize(("table_format", "serves"), PROJECTS)
def test_a_new_dbt_project_builds_serves_and_is_read_with_the_package_alone(
    installed: Environment, server: dict, table_format: str, serves: bool
) -> None:
    user, name = installed, f"shop_{table_format}"
    assert user.command("lakehouse", "jars").stdout.strip() == (
        f"delta, iceberg, postgresql, s3 jars complete in {user.home}/.cache/dbt-lakehouse/jars "
        "(nothing to download)"
    )
    package = user.command(
        "python", "-c", "import dbt.include.lakehouse as p; print(p.PACKAGE_PATH)"
    ).stdout.strip()
    assert Path(package).is_relative_to(user.bin.parent), package  # not the repository's

    project = init_project(user, name, table_format)
    profiles = yaml.safe_load((user.home / ".dbt" / "profiles.yml").read_text())
    assert profiles[name] == {
        "target": "dev",
        "outputs": {
            "dev": {
                "type": "lakehouse",
                "method": "session",
                "host": "NA",
                "table_format": table_format,
                "schema": name,
                "threads": 1,
            }
        },
    }

    built = user.command("dbt", "build", *DAYS_1_2, cwd=project)
    assert "Completed successfully" in built.stdout
    assert "PASS=4 WARN=0 ERROR=0 SKIP=0" in built.stdout  # two models, two data tests
    # dbt's lines only (the package's log configuration): no Spark WARN lines, no progress bars
    assert built.stderr == "", built.stderr[-3000:]
    other = [x for x in built.stdout.splitlines() if x.strip() and not DBT_LINE.match(x)]
    assert other == [], built.stdout[-3000:]
    # each table in the chosen format: Delta's log, or Iceberg's metadata
    logs = log_files(project, table_format, name)
    assert all(logs.values()), logs
    if not serves:
        return

    # The server for this project, and the target its banner describes.
    connect_port, thrift_port = free_port(), free_port()
    banner = server["serve"](project, connect_port, thrift_port)
    assert f"sc://localhost:{connect_port}" in banner
    assert f"jdbc:hive2://127.0.0.1:{thrift_port}/{name}" in banner
    profiles[name]["outputs"]["server"] = {
        "type": "lakehouse",
        "method": "connect",
        "table_format": table_format,
        "host": "localhost",
        "port": connect_port,
        "schema": name,
        "threads": 1,
    }
    jdbc = f"jdbc:hive2://127.0.0.1:{thrift_port}/{name}"

    def beeline(sql: str) -> subprocess.CompletedProcess:
        command = [user.bin / "beeline", "-u", jdbc, "-n", "analyst", "--silent=true"]
        return subprocess.run(
            [*command, "--outputformat=csv2", "-e", sql],
            capture_output=True,
            text=True,
            env={**user.env, "PYSPARK_PYTHON": str(user.bin / "python")},
            cwd=user.home,
            timeout=300,
        )

    def orders_through_jdbc() -> list[str]:
        read = beeline(
            "select order_id, status, cast(amount as string), "
            f"date_format(updated_at, 'yyyy-MM-dd HH:mm:ss') from {name}.orders order by order_id"
        )
        assert read.returncode == 0, read.stderr[-3000:]
        # the rows only: beeline may echo its prompt (`0: jdbc:hive2://...>`) and the header
        return [line for line in read.stdout.splitlines() if re.match(r"\d+,", line)]

    (user.home / ".dbt" / "profiles.yml").write_text(yaml.safe_dump(profiles))
    user.command("dbt", "run", "--target", "server", *DAY_3, cwd=project)

    assert orders_through_jdbc() == ORDERS_DAYS_1_3
    # the analyst then leaves in the middle of reading a longer result (stops the session)
    connect = user.command(
        "python",
        "-c",
        "import sys, json; from pyspark.sql import SparkSession; "
        "spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate(); "
        "rows = spark.sql(f'select * from {sys.argv[2]}.daily_totals order by day').collect(); "
        "print(json.dumps([','.join(str(v) for v in r) for r in rows]), flush=True); "
        "next(spark.range(5_000_000).toLocalIterator()); spark.stop()",
        f"sc://localhost:{connect_port}",
        name,
    )
    assert json.loads(connect.stdout.strip().splitlines()[-1]) == DAILY_TOTALS_DAYS_1_3
    dropped = beeline(f"drop table {name}.orders")
    assert dropped.returncode != 0
    # one line, no Java stack (the JVM's own warning aside)
    assert [x for x in dropped.stderr.splitlines() if not x.startswith(JVM_WARNING)] == [
        "Error: lakehouse server: DROP TABLE (DropTable) is a write; JDBC/Thrift sessions are "
        "read-only. Write through Spark Connect (dbt: a target with method: connect, e.g. "
        "--target server). (state=25006,code=0)"
    ]
    assert orders_through_jdbc() == ORDERS_DAYS_1_3

    assert server["stop"]() == 0
    assert not listening(connect_port) and not listening(thrift_port)
    # clients came and went (dbt, beeline, the analyst who left mid-result): the console holds
    # the banner and the stop, no error and no Java stack trace
    assert (project / "server.out").read_text() == f"{banner}Stopping the lakehouse server.\n"
