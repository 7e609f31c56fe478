"""Shared fixtures: one SparkSession per pytest process, one schema per test.

The process runs against one target (--target local | local_iceberg); `make test` runs the
suite once per target, each in its own process (a JVM can hold either Delta's or Iceberg's
session catalog, not both). dbt Labs' adapter suite (tests/adapter, its fixtures from the
plugin below) runs in the same process and JVM, after the project's own tests.

A test whose outcome cannot depend on the table format is marked `format_independent` and runs
in one pass only (support/passes.py); the tests that build both formats themselves run in the
Iceberg pass, which balances the two.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbt_common.tests import enable_test_caching
from support import passes, processes
from support.processes import SUITE_JAVA_OPTIONS

from dbt.adapters.lakehouse.session.jars import driver_folder
from retry_safe.postgres import DATABASE, local_postgres, on_database, psql
from retry_safe.project import configure_environment
from retry_safe.project import table_format as format_of
from retry_safe.s3 import local_s3

# dbt Labs' adapter suite's fixtures (`project`, `unique_schema`, ...; tests/adapter): pytest
# takes plugins from the top-level conftest only. No fixture of it is autouse.
pytest_plugins = ["dbt.tests.fixtures.project"]

ADAPTER_SUITE = Path(__file__).parent / "adapter"

_schema_numbers = itertools.count(1)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--target",
        default=os.environ.get("DBT_TARGET", "local"),
        help="dbt target to run against: local (Delta) or local_iceberg (Iceberg)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", passes.MARKER)
    config.addinivalue_line("markers", passes.SOAK_MARKER)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    passes.deselect_other_passes(config, items, config.getoption("--target"))
    # dbt Labs' suite last: its project fixture removes DBT_PROFILES_DIR from the environment
    # when a class ends, which a scenario step started afterwards would inherit
    items.sort(key=lambda item: item.path.is_relative_to(ADAPTER_SUITE))


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--target")


@pytest.fixture(scope="session")
def table_format(target: str) -> str:
    return format_of(target)


@pytest.fixture(scope="session", autouse=True)
def lakehouse_home(tmp_path_factory: pytest.TempPathFactory, target: str) -> Path:
    """A fresh warehouse and metastore for this process, outside the project, and dbt's
    artifacts and log there too: `make test` runs the Delta and Iceberg processes at once, and
    two dbt processes must not write one target/ folder (manifest, run_results, partial parse).
    The scenario steps' processes inherit these settings."""
    home = tmp_path_factory.mktemp(f"lakehouse_{target}")
    configure_environment(home)
    # Small tables, hundreds of statements: interpreted expressions instead of Java code compiled
    # per query (profiles/profiles.yml, LAKEHOUSE_CODEGEN). dbt Labs' adapter suite and the
    # wheel-install test run with Spark's default, code generation on.
    os.environ.setdefault("LAKEHOUSE_CODEGEN", "false")
    # This JVM lives for the whole pass: C2 compiles only what stays hot, the serial collector
    # (support/processes.py); scenario steps' own JVMs run C1 only.
    os.environ.setdefault("LAKEHOUSE_JAVA_OPTIONS", SUITE_JAVA_OPTIONS)
    os.environ["DBT_TARGET_PATH"] = str(home / "target")
    os.environ["DBT_LOG_PATH"] = str(home / "logs")
    # As dbt Labs' test fixtures do (dbt.tests.fixtures.project): new interval vars or a test's
    # new schema (the profile) make dbt parse the whole project again, and the Jinja of its 550
    # macros is the same text each time; dbt then keeps the parsed templates (a sixth less time
    # on test_customer_balances.py, half its Python CPU).
    enable_test_caching()
    # dbt's JSON artifacts (manifest.json, run_results.json, ...) are written twice per
    # invocation and read by no test but those that use the json_artifacts fixture: about a
    # third of a warm invocation's Python CPU (0.47 against 0.30 s, paired in one process).
    # The scenario steps' processes inherit it; users' runs write them as usual.
    os.environ.setdefault("DBT_WRITE_JSON", "false")
    # the PostgreSQL driver in this JVM too: tests/test_metastore.py checks databases with it
    os.environ.setdefault("LAKEHOUSE_METASTORE_CLASSPATH", f"{driver_folder('postgresql')}/*")
    # the steps' JVMs start from a class-data archive this process's JVM writes when the first
    # step asks for it (support/class_archive.py)
    processes.use_class_archive(home / "class-archive")
    return home


@pytest.fixture
def json_artifacts(monkeypatch: pytest.MonkeyPatch) -> None:
    """dbt writes its JSON artifacts again, for a test that reads them (the docs' catalog and
    manifest, `dbt retry`'s run results)."""
    monkeypatch.setenv("DBT_WRITE_JSON", "true")


@pytest.fixture
def postgres() -> Iterator[tuple[Path, dict[str, str]]]:
    """A local PostgreSQL server for a metastore (its folder, and the environment that points a
    session at it), stopped and removed afterwards. PostgreSQL runs as its own user, so its
    folder is not under pytest's private tmp_path."""
    cluster = Path(tempfile.mkdtemp(prefix="lakehouse-pg-"))
    cluster.chmod(0o755)
    try:
        with local_postgres(cluster / "pg") as environment:
            yield cluster / "pg", environment
    finally:
        shutil.rmtree(cluster, ignore_errors=True)


@pytest.fixture(scope="session")
def initialized_postgres(
    tmp_path_factory: pytest.TempPathFactory, table_format: str
) -> Iterator[tuple[Path, dict[str, str]]]:
    """One PostgreSQL server for the pass, whose database `metastore` the package's `lakehouse
    metastore init` made (once: a cold Spark session of about 30 s): the template each test's
    own metastore database is copied from (`fresh_metastore`)."""
    cluster = Path(tempfile.mkdtemp(prefix="lakehouse-pg-"))
    cluster.chmod(0o755)
    try:
        with local_postgres(cluster / "pg") as environment:
            env = processes.step_env(
                **environment, LAKEHOUSE_HOME=str(tmp_path_factory.mktemp("metastore-init"))
            )
            env.pop("LAKEHOUSE_METASTORE_CLASSPATH", None)  # the driver from `lakehouse jars`
            made = processes.metastore_init(env, "--format", table_format)
            assert made.startswith("Created the metastore schema (Hive 2.3.0)"), made
            yield cluster / "pg", environment
    finally:
        shutil.rmtree(cluster, ignore_errors=True)


_metastore_numbers = itertools.count(1)


@pytest.fixture
def fresh_metastore(initialized_postgres) -> tuple[Path, str, dict[str, str]]:
    """A metastore database of this test's own (its cluster folder, its name, the environment
    that points a session at it): a copy of the pass's initialized one, made by PostgreSQL from
    it as a template in a moment, as a team's new database would be after `lakehouse metastore
    init`."""
    cluster, environment = initialized_postgres
    name = f"metastore_{next(_metastore_numbers)}"
    psql(cluster, "postgres", f"create database {name} template {DATABASE}")
    return cluster, name, on_database(environment, name)


@pytest.fixture(scope="session")
def s3_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A local S3-compatible server (retry_safe.s3: its folder, whose data/ holds the buckets'
    objects as files, and the environment that points a session at it), for the pass; stopped
    at its end."""
    folder = tmp_path_factory.mktemp("s3")
    with local_s3(folder) as environment:
        yield folder, environment


@pytest.fixture
def schema(request: pytest.FixtureRequest) -> str:
    """A schema of its own for each test: tests never see each other's tables."""
    name = f"t{next(_schema_numbers):03d}_{request.node.name[:40]}"
    name = "".join(c if c.isalnum() else "_" for c in name).lower()
    previous = os.environ.get("LAKEHOUSE_SCHEMA")
    os.environ["LAKEHOUSE_SCHEMA"] = name
    yield name
    if previous is None:
        os.environ.pop("LAKEHOUSE_SCHEMA", None)
    else:
        os.environ["LAKEHOUSE_SCHEMA"] = previous


@pytest.fixture(scope="session")
def spark(target: str):
    """The SparkSession dbt's session method created (started on first use by a dbt run)."""
    from pyspark.sql import SparkSession

    from retry_safe.project import run_dbt

    session = SparkSession.getActiveSession()
    if session is None:
        run_dbt(["debug"], target=target)
        session = SparkSession.builder.getOrCreate()
    return session
