"""The lakehouse server's options and Spark settings (dbt/adapters/lakehouse/server/settings.py),
and the session target it serves read from a project's profile (server/profile.py): no JVM."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from dbt.adapters.lakehouse.server.profile import ProfileError, ServedTarget, load_target
from dbt.adapters.lakehouse.server.settings import (
    ServerOptionError,
    options_from,
    server_settings,
)
from retry_safe.project import PROJECT_DIR

DELTA = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.driver.extraClassPath": "/jars/delta/*",
    "spark.sql.warehouse.dir": "/home/delta/warehouse",
}


def test_defaults_are_loopback_and_the_usual_ports():
    options = options_from("delta", environ={})
    assert (options.bind, options.connect_port, options.thrift_port) == ("127.0.0.1", 15002, 10000)
    assert options.table_format == "delta"


def test_the_command_line_wins_over_the_environment():
    environ = {"LAKEHOUSE_CONNECT_PORT": "16000", "LAKEHOUSE_THRIFT_PORT": "11000"}
    assert options_from("delta", environ=environ).connect_port == 16000
    options = options_from("delta", connect_port=17000, environ=environ)
    assert (options.connect_port, options.thrift_port) == (17000, 11000)


@pytest.mark.parametrize("bind", ["0.0.0.0", "192.168.1.20", "db.example.com", "::"])
@pytest.mark.parametrize(
    ("secrets", "missing"),
    [
        ({}, "LAKEHOUSE_SERVER_TOKEN and LAKEHOUSE_THRIFT_PASSWORD"),
        ({"LAKEHOUSE_SERVER_TOKEN": "t"}, "Set LAKEHOUSE_THRIFT_PASSWORD "),
        ({"LAKEHOUSE_THRIFT_PASSWORD": "p"}, "Set LAKEHOUSE_SERVER_TOKEN "),
    ],
)
def test_another_address_without_both_secrets_is_refused(bind, secrets, missing):
    with pytest.raises(ServerOptionError) as refused:
        options_from("delta", bind=bind, environ=secrets)
    assert f"Refusing to listen on {bind} without authentication" in str(refused.value)
    assert missing in str(refused.value)


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
def test_loopback_needs_no_secrets(bind):
    assert options_from("delta", bind=bind, environ={}).loopback


def test_another_address_with_both_secrets_starts():
    environ = {"LAKEHOUSE_SERVER_TOKEN": "t", "LAKEHOUSE_THRIFT_PASSWORD": "p"}
    assert options_from("delta", bind="0.0.0.0", environ=environ).token == "t"


@pytest.mark.parametrize(
    ("ports", "message"),
    [
        ({"connect_port": 10000}, "cannot share port 10000"),
        ({"thrift_port": 70000}, "The thrift port is 70000; give a port number from 1 to 65535"),
    ],
)
def test_bad_ports_are_refused(ports, message):
    with pytest.raises(ServerOptionError, match=message):
        options_from("delta", environ={}, **ports)


def test_a_port_that_is_not_a_number_is_refused():
    with pytest.raises(ServerOptionError, match="The connect port is 'abc'"):
        options_from("delta", environ={"LAKEHOUSE_CONNECT_PORT": "abc"})


def test_an_unknown_format_is_refused():
    with pytest.raises(ServerOptionError, match="Unknown table format 'hudi'.*delta or iceberg"):
        options_from("hudi", environ={})


def test_the_settings_add_both_endpoints_and_the_read_only_rule_to_the_embedded_ones():
    options = options_from("delta", connect_port=15100, thrift_port=10100, environ={})
    settings = server_settings(options, DELTA, Path("/jars/server/lakehouse-server.jar"))
    assert settings["spark.sql.warehouse.dir"] == "/home/delta/warehouse"
    assert settings["spark.sql.extensions"] == (
        "io.delta.sql.DeltaSparkSessionExtension,lakehouse.server.ReadOnlyOutsideConnect"
    )
    assert settings["spark.driver.extraClassPath"] == (
        "/jars/delta/*:/jars/server/lakehouse-server.jar"
    )
    assert settings["spark.plugins"] == "org.apache.spark.sql.connect.SparkConnectPlugin"
    assert settings["spark.connect.grpc.binding.address"] == "127.0.0.1"
    assert settings["spark.connect.grpc.binding.port"] == "15100"
    assert settings["spark.hadoop.hive.server2.thrift.bind.host"] == "127.0.0.1"
    assert settings["spark.hadoop.hive.server2.thrift.port"] == "10100"
    assert settings["spark.hadoop.hive.server2.authentication"] == "NONE"


def test_a_password_turns_on_the_password_check():
    options = options_from("iceberg", environ={"LAKEHOUSE_THRIFT_PASSWORD": "p"})
    settings = server_settings(options, {}, Path("/s.jar"))
    assert settings["spark.hadoop.hive.server2.authentication"] == "CUSTOM"
    assert settings["spark.sql.extensions"] == "lakehouse.server.ReadOnlyOutsideConnect"
    assert "p" not in settings.values()  # the password stays in the environment


# -- the session target a server serves: a project's profile, rendered by dbt -----------------

PROFILES = PROJECT_DIR / "profiles"


def test_a_session_target_is_served_with_its_format_defaults_and_its_own_settings(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LAKEHOUSE_JARS_DIR", str(tmp_path / "jars"))
    monkeypatch.delenv("LAKEHOUSE_METASTORE_CLASSPATH", raising=False)  # a shared metastore's
    served = load_target(str(PROJECT_DIR), str(PROFILES), "local_iceberg")
    assert (served.profile, served.target, served.table_format) == (
        "retry_safe",
        "local_iceberg",
        "iceberg",
    )
    settings = served.settings
    assert settings["spark.sql.warehouse.dir"] == f"{tmp_path}/home/iceberg/warehouse"
    assert (
        settings["spark.sql.catalog.spark_catalog"]
        == "org.apache.iceberg.spark.SparkSessionCatalog"
    )
    assert settings["spark.driver.extraClassPath"] == f"{tmp_path}/jars/iceberg/*"
    # a served table is read at its current snapshot, never at one cached before another
    # process committed
    assert settings["spark.sql.catalog.spark_catalog.cache-enabled"] == "false"
    assert settings["spark.sql.shuffle.partitions"] == "4"  # the profile's own, rendered by dbt
    assert settings["spark.sql.ansi.enabled"] == "false"  # as dbt-spark's session forces it


@pytest.mark.parametrize(
    ("home", "warehouse"),
    [(None, ".lakehouse/delta/warehouse"), ("shared/lh", "shared/lh/delta/warehouse")],
)
def test_a_relative_home_is_the_projects_wherever_the_server_starts(
    monkeypatch, tmp_path, home, warehouse
):
    # `dbt build` in the project folder and `lakehouse serve --project-dir` from elsewhere must
    # open the same warehouse
    if home is None:
        monkeypatch.delenv("LAKEHOUSE_HOME", raising=False)
    else:
        monkeypatch.setenv("LAKEHOUSE_HOME", home)
    monkeypatch.chdir(tmp_path)
    served = load_target(str(PROJECT_DIR), str(PROFILES), "local")
    assert served.settings["spark.sql.warehouse.dir"] == f"{PROJECT_DIR}/{warehouse}"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("server", "target server of profile retry_safe is `method: connect`; the server serves"),
        ("thrift", "target thrift of profile retry_safe is `method: thrift`; the server serves"),
        ("nowhere", "dbt could not read the profile"),
    ],
)
def test_a_target_that_is_not_a_session_target_is_refused(name, message):
    with pytest.raises(ProfileError, match=message):
        load_target(str(PROJECT_DIR), str(PROFILES), name)


def test_a_session_target_without_table_format_is_refused(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "dbt_project.yml").write_text("name: p\nversion: '1'\nprofile: p\n")
    (project / "profiles.yml").write_text(
        "p:\n  target: dev\n  outputs:\n    dev:\n      type: lakehouse\n"
        "      method: session\n      host: NA\n      schema: s\n"
    )
    with pytest.raises(ProfileError, match="names no table_format; add `table_format: delta`"):
        load_target(str(project), str(project), None)


def test_a_folder_without_a_dbt_project_is_refused(tmp_path):
    with pytest.raises(ProfileError, match=f"{tmp_path} holds no dbt_project.yml"):
        load_target(str(tmp_path), str(PROFILES), "local")


def test_a_jvm_that_dies_while_serving_ends_the_server_with_one_line(monkeypatch):
    """The serve loop notices the JVM's exit within a second (no Ctrl-C needed), so the
    process ends and its lock never blocks the next server."""
    from dbt.adapters.lakehouse.server.app import JvmDied, wait_for_stop

    monkeypatch.setattr("signal.signal", lambda *_: None)  # pytest keeps its Ctrl-C
    killed = SimpleNamespace(poll=lambda: -9, returncode=-9)
    with pytest.raises(JvmDied) as died:
        wait_for_stop(killed, SimpleNamespace(target="local_iceberg"))
    assert str(died.value) == (
        "the server's JVM exited while serving (killed by signal 9). The tables hold only "
        "committed runs: a dbt run writing through the server fails and is safe to rerun once "
        "a server serves again (`lakehouse serve --target local_iceberg`)."
    )


def test_a_server_on_object_storage_keeps_its_lock_in_the_lakehouse_home(monkeypatch, tmp_path):
    # the warehouse URL is no local folder: the lock and state file go to $LAKEHOUSE_HOME/<format>
    from dbt.adapters.lakehouse.server.app import served_home

    warehouse = "spark.sql.warehouse.dir"

    monkeypatch.setenv("LAKEHOUSE_HOME", str(tmp_path / "home"))
    served = ServedTarget("p", "local", "delta", "analytics", {warehouse: "s3a://lake/w"})
    assert served_home(served) == tmp_path / "home" / "delta"
    local = ServedTarget("p", "local", "delta", "analytics", {warehouse: f"{tmp_path}/d/warehouse"})
    assert served_home(local) == tmp_path / "d"
