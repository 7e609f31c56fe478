"""Which embedded Derby database a session's metastore opens (no Spark here; the second-process
test in tests/test_errors.py runs the whole check against a real JVM's lock)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.lakehouse.metastore_lock import derby_database, lock_holder

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
