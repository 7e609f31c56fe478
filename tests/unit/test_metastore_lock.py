"""Which embedded Derby database a session's metastore opens, and who holds it: real locks held
by child processes, a lakehouse server among them (no Spark here; the second-process test in
tests/test_errors.py runs the whole check against a real JVM's lock)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.session.metastore_lock import (
    derby_database,
    lock_holder,
    metastore_problem,
    parent_of,
)

URL = "spark.hadoop.javax.jdo.option.ConnectionURL"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "jdbc:derby:;databaseName=/lakehouse/delta/metastore_db;create=true",
            "/lakehouse/delta/metastore_db",
        ),
        (
            "jdbc:derby:/lakehouse/iceberg/metastore_db;create=true",
            "/lakehouse/iceberg/metastore_db",
        ),
        ("jdbc:derby:directory:/lakehouse/delta/metastore_db", "/lakehouse/delta/metastore_db"),
        ("jdbc:derby://127.0.0.1:1527/lakehouse/metastore_db;create=true", None),
        ("jdbc:derby:memory:metastore;create=true", None),
        ("jdbc:postgresql://db:5432/metastore", None),
    ],
)
def test_the_database_folder_comes_from_the_connection_url(url, expected):
    found = derby_database({URL: url})
    assert (str(found) if found else None) == expected


def test_a_relative_database_is_in_the_directory_dbt_runs_in(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = "jdbc:derby:;databaseName=.lakehouse/delta/metastore_db;create=true"
    assert derby_database({URL: url}) == tmp_path / ".lakehouse/delta/metastore_db"
    # Hive's default when no URL is set
    assert derby_database({}) == tmp_path / "metastore_db"


def test_a_database_never_booted_or_not_locked_is_free(tmp_path: Path):
    assert lock_holder(tmp_path / "metastore_db") is None
    (tmp_path / "metastore_db").mkdir()
    (tmp_path / "metastore_db" / "dbex.lck").write_bytes(b"\x00\x00\x00\x01")
    assert lock_holder(tmp_path / "metastore_db") is None


# A process holding Derby's lock as a JVM does (a POSIX record lock on dbex.lck), and with a
# second argument the lakehouse server's own lock (flock) on that file too; it prints its id
# once both are held and keeps them until its standard input closes.
HOLD = """
import fcntl, os, sys
lock = os.open(os.path.join(sys.argv[1], "dbex.lck"), os.O_RDWR | os.O_CREAT)
fcntl.lockf(lock, fcntl.LOCK_EX)
if len(sys.argv) > 2:
    server = os.open(sys.argv[2], os.O_RDWR | os.O_CREAT)
    fcntl.flock(server, fcntl.LOCK_EX)
print(os.getpid(), flush=True)
sys.stdin.read()
"""
# A stand-in for `lakehouse serve` whose child (its "JVM") holds the lock, as the server's does.
SERVE = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {HOLD!r}, sys.argv[-1]])\n"
SERVER_FIX = (
    "A lakehouse server holds this warehouse: while it serves, run dbt through it, with a "
    "target of method: connect pointing at it (e.g. --target server), or stop the server "
    "(Ctrl-C in its terminal) to run this target."
)


@contextmanager
def holding(*command: str) -> Iterator[int]:
    """The command in a process of its own, once its lock holder printed its id: that id."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        yield int(process.stdout.readline())
    finally:
        process.stdin.close()
        process.wait(timeout=30)


@pytest.fixture
def database(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path))
    (tmp_path / "delta" / "metastore_db").mkdir(parents=True)
    return tmp_path / "delta" / "metastore_db"


def problem(database: Path) -> str | None:
    return metastore_problem({URL: f"jdbc:derby:;databaseName={database};create=true"})


def test_a_lakehouse_server_holding_the_metastore_is_named_with_the_target_to_use(
    tmp_path, database
):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "lakehouse").write_text(SERVE)
    serve = [sys.executable, str(tmp_path / "bin" / "lakehouse"), "serve", "--target", "local"]
    with holding(*serve, str(database)) as jvm:
        found = problem(database)
        server = parent_of(jvm)
    assert found == (
        f"The embedded metastore {database} (LAKEHOUSE_HOME={tmp_path}) is in use by process "
        f"{jvm} (python, started by process {server}: python lakehouse serve --target local "
        f"{database}). {SERVER_FIX}"
    )
    assert problem(database) is None  # released with the process


def test_a_server_known_by_its_lock_file_alone_is_named_too(tmp_path, database):
    """Where the command line does not tell (no /proc, another launcher): the server's lock."""
    lock_file = str(database.parent / "server.lock")
    with holding(sys.executable, "-c", HOLD, str(database), lock_file) as holder:
        found = problem(database)
    assert found.startswith(f"The embedded metastore {database} (LAKEHOUSE_HOME={tmp_path}) ")
    assert f"is in use by process {holder} (python, started by process {os.getpid()}: " in found
    assert found.endswith(f"). {SERVER_FIX}")


def test_another_holder_gets_the_ways_to_share_the_metastore(tmp_path, database):
    (database.parent / "server.lock").touch()  # a server served here once, and stopped
    with holding(sys.executable, "-c", HOLD, str(database)) as holder:
        found = problem(database)
    assert f"is in use by process {holder} (python, started by process {os.getpid()}: " in found
    assert found.endswith(
        "). An embedded Derby metastore admits one process at a time: wait until that one ends, "
        "set LAKEHOUSE_HOME to another folder, serve it to everyone with `lakehouse serve`, or "
        "share a PostgreSQL metastore (LAKEHOUSE_METASTORE_URL, _USER and _PASSWORD, then "
        "`lakehouse metastore init` once)."
    )
