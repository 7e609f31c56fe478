"""The lakehouse server's options and Spark settings (src/retry_safe/server_settings.py): no JVM."""

from __future__ import annotations

from pathlib import Path

import pytest

from retry_safe.server_settings import ServerOptionError, options_from, server_settings

DELTA = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.driver.extraClassPath": "/jars/delta/*",
    "spark.sql.warehouse.dir": "/home/delta/warehouse",
}


def test_defaults_are_loopback_and_the_usual_ports():
    options = options_from("delta", environ={})
    assert (options.bind, options.connect_port, options.thrift_port) == ("127.0.0.1", 15002, 10000)
    assert options.target == "local"
    assert options_from("iceberg", environ={}).target == "local_iceberg"


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
    with pytest.raises(ServerOptionError, match="Unknown table format 'hudi'"):
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
    assert "spark.sql.catalog.spark_catalog.cache-enabled" not in settings


def test_a_password_turns_on_the_password_check_and_iceberg_reads_fresh_snapshots():
    options = options_from("iceberg", environ={"LAKEHOUSE_THRIFT_PASSWORD": "p"})
    settings = server_settings(options, {}, Path("/s.jar"))
    assert settings["spark.hadoop.hive.server2.authentication"] == "CUSTOM"
    assert settings["spark.sql.extensions"] == "lakehouse.server.ReadOnlyOutsideConnect"
    assert settings["spark.sql.catalog.spark_catalog.cache-enabled"] == "false"
    assert "p" not in settings.values()  # the password stays in the environment
