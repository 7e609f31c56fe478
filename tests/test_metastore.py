"""A Hive metastore on PostgreSQL that cannot serve a session: one line naming the cause and the
fix, before any statement, nothing written (dbt.adapters.lakehouse.session.metastore). Parallel
writers on one, with the schema `lakehouse metastore init` made: test_concurrent_runs.py.

The checks run in this process's JVM, with the PostgreSQL driver (tests/conftest.py puts it on
the classpath), against a real local server; one run goes the whole way through dbt.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.processes import metastore_init, step_env

from dbt.adapters.lakehouse.session import metastore
from dbt.adapters.lakehouse.session.metastore import ICEBERG_LOCKS, PASSWORD, URL, USER
from dbt.adapters.lakehouse.storage.object_store import LOG_STORE, LOG_STORE_SETTING
from retry_safe.cluster import free_port
from retry_safe.postgres import ADMIN, port_of, psql
from retry_safe.project import PROJECT_DIR

pytestmark = pytest.mark.format_independent(run_in="local_iceberg")

INIT = "Run `lakehouse metastore init` once with the same settings."


def test_a_database_that_cannot_serve_the_metastore_is_one_line_naming_the_fix(
    spark, postgres, tmp_path
):
    folder, environment = postgres
    url = environment["LAKEHOUSE_METASTORE_URL"]
    port = port_of(folder)
    login = {URL: url, USER: "lakehouse", PASSWORD: environment["LAKEHOUSE_METASTORE_PASSWORD"]}

    # a new database: no schema yet
    assert metastore.problem(login) == (
        f"The metastore database {url} has no Hive metastore schema (login lakehouse). {INIT}"
    )
    assert metastore.problem({**login, PASSWORD: "not-the-password"}) == (
        f"PostgreSQL refused the metastore login lakehouse at {url} (FATAL: password "
        'authentication failed for user "lakehouse"). Set LAKEHOUSE_METASTORE_USER and '
        "LAKEHOUSE_METASTORE_PASSWORD to a login of that database."
    )
    missing = f"jdbc:postgresql://127.0.0.1:{port}/no_such_database"
    assert metastore.problem({**login, URL: missing}) == (
        f"The metastore database of {missing} does not exist. Create it (`create database ...` "
        "as a PostgreSQL superuser), then run `lakehouse metastore init` once."
    )
    down = free_port()
    # a password in the URL's query string is never shown
    assert metastore.problem(
        {**login, URL: f"jdbc:postgresql://127.0.0.1:{down}/m?password=x"}
    ) == (
        f"The metastore database jdbc:postgresql://127.0.0.1:{down}/m is unreachable (Connection "
        f"to 127.0.0.1:{down} refused. Check that the hostname and port are correct and that the "
        "postmaster is accepting TCP/IP connections.). Start its PostgreSQL server, or set "
        "LAKEHOUSE_METASTORE_URL to one that runs."
    )

    # a database whose schema records Hive 2.3.0 and holds nothing else: what an init stopped
    # right after DataNucleus recorded the version leaves behind
    psql(folder, "postgres", "create database other")
    psql(
        folder,
        "other",
        'create table "VERSION" ("VER_ID" bigint primary key, "SCHEMA_VERSION" varchar(127), '
        "\"VERSION_COMMENT\" varchar(255)); insert into \"VERSION\" values (1, '2.3.0', 'x')",
    )
    other_url = f"jdbc:postgresql://127.0.0.1:{port}/other"
    other = {URL: other_url, USER: ADMIN, PASSWORD: (folder / "admin-password").read_text()}
    assert metastore.problem(other) == (
        f"The metastore schema in {other_url} is incomplete (42 tables missing, e.g. "
        "BUCKETING_COLS, CDS, COLUMNS_V2): its `lakehouse metastore init` did not finish. Run "
        "`lakehouse metastore init` again: it adds what is missing."
    )
    # init again, as the message says: the rest of the schema and the lock tables are added
    env = step_env(
        LAKEHOUSE_METASTORE_URL=other_url,
        LAKEHOUSE_METASTORE_USER=ADMIN,
        LAKEHOUSE_METASTORE_PASSWORD=other[PASSWORD],
        LAKEHOUSE_HOME=str(tmp_path / "init"),
    )
    env.pop("LAKEHOUSE_METASTORE_CLASSPATH")  # the driver from `lakehouse jars`
    assert metastore_init(env) == (
        f"Completed the metastore schema (Hive 2.3.0) in {other_url}: added 42 metastore, 11 "
        "lock and 1 commit tables.\n"
    )
    assert metastore.problem({**other, ICEBERG_LOCKS: "true", LOG_STORE_SETTING: LOG_STORE}) is None
    # and once more (in this process: a complete schema is left alone before any session)
    assert metastore.initialize(other) == (
        f"The metastore schema in {other_url} is ready (Hive 2.3.0); nothing to do."
    )
    # the lock tables dropped: enough for Delta, not for Iceberg's Hive lock
    psql(folder, "other", f"drop table {', '.join(metastore.LOCK_TABLES)}")
    assert metastore.problem(other) is None
    assert metastore.problem({**other, ICEBERG_LOCKS: "true"}) == (
        f"The metastore database {other_url} has no lock tables ({', '.join(metastore.LOCK_TABLES)}"
        "), which Iceberg's Hive commit lock needs. Run `lakehouse metastore init` once: it adds "
        "them."
    )
    # the Delta commit table dropped: enough for a local warehouse, not for Delta on S3
    psql(folder, "other", f"drop table {metastore.COMMIT_TABLE}")
    assert metastore.problem(other) is None
    assert metastore.problem({**other, LOG_STORE_SETTING: LOG_STORE}) == (
        f"The metastore database {other_url} has no lakehouse_delta_commits table, which Delta's "
        "commits to object storage are kept in. Run `lakehouse metastore init` once: it adds it."
    )
    psql(folder, "other", 'update "VERSION" set "SCHEMA_VERSION" = \'3.1.0\'')
    assert metastore.problem(other) == (
        f"The metastore database {other_url} holds a Hive 3.1.0 schema; Spark's Hive client needs "
        "2.3.0. Use a metastore database of that version (a new database and `lakehouse "
        "metastore init`), not this one."
    )


def test_a_run_on_a_metastore_without_its_schema_stops_before_any_model(tmp_path, postgres):
    _, environment = postgres
    home = tmp_path / "lakehouse"
    env = step_env(**environment, LAKEHOUSE_HOME=str(home), LAKEHOUSE_SCHEMA="analytics")
    env.update(DBT_TARGET="local", DBT_LOG_PATH=str(tmp_path / "logs"))
    env.pop("LAKEHOUSE_METASTORE_CLASSPATH")  # the driver from `lakehouse jars`, as for a user
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("dbt")),
            "run",
            "--select",
            "customer_balances_additive",
        ],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    url = environment["LAKEHOUSE_METASTORE_URL"]
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    assert (
        f"The metastore database {url} has no Hive metastore schema (login lakehouse). {INIT}"
        in (done.stdout)
    )
    assert "START" not in done.stdout
    assert "\tat " not in done.stdout + done.stderr  # no Java stack trace
    assert not (home / "delta" / "warehouse").exists() or not any(
        (home / "delta" / "warehouse").iterdir()
    )


def test_statements_of_new_python_threads_reuse_one_jvm_thread_and_its_metastore_store(spark):
    """dbt runs each invocation's statements in new Python threads; the session the adapter
    started lets them share the gateway's JVM threads (session/jvm.py), so the Hive metastore's
    per-thread store is built once, not again by every invocation (pinned, each new Python
    thread got a JVM thread of its own: 0.2 to 0.4 s on Iceberg per new thread)."""
    import threading

    seen: list[int] = []

    def statement() -> None:
        spark.sql("show databases").collect()
        seen.append(spark._jvm.java.lang.Thread.currentThread().getId())

    for _ in range(3):
        thread = threading.Thread(target=statement)
        thread.start()
        thread.join()
    statement()
    assert len(seen) == 4
    assert len(set(seen)) == 1, seen
