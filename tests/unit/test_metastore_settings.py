"""The settings of a session on a PostgreSQL metastore (session_settings.py, metastore.py):
the pinned driver, the login from the environment, no DDL at start, Hive's locks on Iceberg."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.session.jars import pinned_drivers
from dbt.adapters.lakehouse.session.metastore import (
    init_settings,
    is_postgresql,
    metastore_tables,
    shown,
)
from dbt.adapters.lakehouse.session.settings import session_settings

URL = "jdbc:postgresql://db.example:5432/metastore"
VARIABLES = (
    "LAKEHOUSE_METASTORE_URL",
    "LAKEHOUSE_METASTORE_DRIVER",
    "LAKEHOUSE_METASTORE_CLASSPATH",
    "LAKEHOUSE_METASTORE_USER",
    "LAKEHOUSE_METASTORE_PASSWORD",
    "LAKEHOUSE_HIVE_LOCKS",
)


@pytest.fixture
def environment(monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LAKEHOUSE_JARS_DIR", "/opt/lakehouse-jars")
    return monkeypatch


@pytest.mark.parametrize(("table_format", "locks"), [("delta", None), ("iceberg", "true")])
def test_a_postgresql_url_gets_the_pinned_driver_its_login_and_no_ddl(
    environment, table_format, locks
):
    environment.setenv("LAKEHOUSE_METASTORE_URL", URL)
    environment.setenv("LAKEHOUSE_METASTORE_USER", "hive")
    environment.setenv("LAKEHOUSE_METASTORE_PASSWORD", "s3cret")
    settings = session_settings(table_format, {})
    hadoop = {
        k: v for k, v in settings.items() if k.startswith("spark.hadoop.") and "col.type" not in k
    }
    expected = {
        "spark.hadoop.javax.jdo.option.ConnectionURL": URL,
        "spark.hadoop.javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
        "spark.hadoop.javax.jdo.option.ConnectionUserName": "hive",
        "spark.hadoop.javax.jdo.option.ConnectionPassword": "s3cret",
        "spark.hadoop.hive.metastore.schema.verification": "true",
        "spark.hadoop.datanucleus.schema.autoCreateAll": "false",
        # 3 connections a pool, not Hive's 10: 19 per Iceberg session instead of 47
        "spark.hadoop.datanucleus.connectionPool.maxPoolSize": "3",
    }
    if table_format == "iceberg":
        expected["spark.hadoop.datanucleus.connectionPoolingType"] = "HikariCP"
        expected["spark.hadoop.iceberg.engine.hive.lock-enabled"] = locks
        # a lock a minute without heartbeat is a dead writer's; Iceberg beats every 20 s
        expected["spark.hadoop.hive.txn.timeout"] = "60s"
        expected["spark.hadoop.iceberg.hive.lock-heartbeat-interval-ms"] = "20000"
    assert hadoop == expected
    assert settings["spark.driver.extraClassPath"] == (
        f"/opt/lakehouse-jars/{table_format}/*:/opt/lakehouse-jars/postgresql/*"
    )
    assert is_postgresql(settings)
    # `lakehouse metastore init` alone may create the schema and record its version
    made = init_settings(settings)
    assert made["spark.hadoop.datanucleus.schema.autoCreateAll"] == "true"
    assert made["spark.hadoop.hive.metastore.schema.verification"] == "false"
    assert made["spark.hadoop.hive.metastore.schema.verification.record.version"] == "true"


def test_the_environment_decides_the_locks_and_the_driver_jar(environment):
    environment.setenv("LAKEHOUSE_METASTORE_URL", URL)
    environment.setenv("LAKEHOUSE_HIVE_LOCKS", "false")
    environment.setenv("LAKEHOUSE_METASTORE_CLASSPATH", "/srv/postgresql.jar")
    settings = session_settings("iceberg", {})
    assert settings["spark.hadoop.iceberg.engine.hive.lock-enabled"] == "false"
    assert (
        settings["spark.driver.extraClassPath"]
        == "/opt/lakehouse-jars/iceberg/*:/srv/postgresql.jar"
    )
    # no login in the environment: none in the settings (the URL may carry it)
    assert "spark.hadoop.javax.jdo.option.ConnectionUserName" not in settings


def test_the_embedded_derby_metastore_keeps_its_settings(environment):
    settings = session_settings("iceberg", {})
    assert settings["spark.hadoop.javax.jdo.option.ConnectionURL"].startswith("jdbc:derby:;")
    assert settings["spark.hadoop.hive.metastore.schema.verification"] == "false"
    assert settings["spark.hadoop.iceberg.engine.hive.lock-enabled"] == "false"
    assert "spark.hadoop.datanucleus.schema.autoCreateAll" not in settings
    assert not is_postgresql(settings)


def test_a_url_is_shown_without_its_query_string():
    assert shown(f"{URL}?user=hive&password=s3cret") == URL


def test_the_postgresql_driver_is_pinned_like_the_format_jars():
    (driver,) = pinned_drivers()["postgresql"]
    assert driver.coordinate == "org.postgresql:postgresql:42.7.14"
    assert driver.sha256 == "73914527305a40cce504b0d3d90b23caf565136912d607ae8ae7c5895512332c"
    assert driver.size == 1221004


def test_the_tables_init_makes_and_each_session_expects_are_the_mappings_own():
    """Hive 2.3's package.jdo: 43 tables; an embedded-only class (SORT_ORDER, RESOURCE_URI)
    lives in its owner's table."""
    tables = metastore_tables()
    assert len(tables) == 43
    assert {"VERSION", "DBS", "TBLS", "TBL_PRIVS", "Skewed_STRING_LIST", "FUNC_RU"} <= set(tables)
    assert not {"SORT_ORDER", "RESOURCE_URI"} & set(tables)
