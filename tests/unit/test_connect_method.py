"""The adapter's connect method without a server (src/dbt/adapters/lakehouse/session/connect.py)."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.connections import LakehouseCredentials
from dbt.adapters.lakehouse.session.connect import (
    connect_url,
    on_the_server,
    require_listening,
    require_same_format,
)


def credentials(**overrides):
    settings = {"host": "localhost", "port": 15002, "token": None, "user": None}
    return SimpleNamespace(**{"table_format": "delta", **settings, **overrides})


def test_the_url_carries_the_user_and_the_token_only_when_set():
    assert connect_url(credentials()) == "sc://localhost:15002/;user_id=dbt"
    assert connect_url(credentials(token="s3cret", user="etl")) == (
        "sc://localhost:15002/;user_id=etl;token=s3cret"
    )


def test_a_server_that_does_not_listen_is_one_line_naming_the_command():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DbtRuntimeError) as refused:
        require_listening(credentials(port=port, table_format="iceberg"))
    assert f"No lakehouse server answers at localhost:{port}" in str(refused.value)
    assert "Start it first (`lakehouse serve --target <a session target of this project>`" in str(
        refused.value
    )


class Conf:
    def __init__(self, catalog: str) -> None:
        self.catalog = catalog

    def get(self, key: str, default: str = "") -> str:
        return self.catalog if key == "spark.sql.catalog.spark_catalog" else default


@pytest.mark.parametrize(
    ("catalog", "target_format", "command"),
    [
        (
            "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "iceberg",
            "serve a session target with table_format: iceberg (`lakehouse serve --target",
        ),
        (
            "org.apache.iceberg.spark.SparkSessionCatalog",
            "delta",
            "serve a session target with table_format: delta (`lakehouse serve --target",
        ),
    ],
)
def test_a_server_of_the_other_format_is_refused_naming_the_right_command(
    catalog, target_format, command
):
    spark = SimpleNamespace(conf=Conf(catalog))
    with pytest.raises(DbtRuntimeError) as refused:
        require_same_format(spark, credentials(table_format=target_format))
    assert f"this target writes {target_format}" in str(refused.value)
    assert command in str(refused.value)


def test_the_same_format_passes():
    spark = SimpleNamespace(conf=Conf("org.apache.iceberg.spark.SparkSessionCatalog"))
    require_same_format(spark, credentials(table_format="iceberg"))


def test_an_unknown_table_format_in_the_profile_is_refused():
    with pytest.raises(DbtRuntimeError, match="table_format is 'hudi'"):
        LakehouseCredentials(
            method="connect", host="localhost", schema="analytics", table_format="hudi"
        )


def test_connect_is_a_method_of_the_profile():
    creds = LakehouseCredentials.from_dict(
        {"method": "connect", "host": "localhost", "port": 15002, "schema": "analytics"}
    )
    assert creds.method == "connect"
    assert creds.type == "lakehouse"


def test_a_lost_server_ends_the_statement_in_one_line_and_every_later_one_at_once():
    import grpc
    from pyspark.errors.exceptions.connect import SparkConnectGrpcException

    lost = credentials(port=15099)
    line = (
        "The lakehouse server at localhost:15099 stopped answering during this run (connection "
        "lost, retried for 25 seconds). Each model's change commits whole or not at all, so "
        "rerunning the same selection and interval is safe once a server serves again "
        "(`lakehouse serve --target <a session target of this project>`)."
    )
    with pytest.raises(DbtRuntimeError) as first, on_the_server(lost):
        raise SparkConnectGrpcException(
            "failed to connect", grpc_status_code=grpc.StatusCode.UNAVAILABLE
        )
    assert str(first.value) == f"Runtime Error\n  {line}"
    ran = []
    with pytest.raises(DbtRuntimeError) as later, on_the_server(lost):
        ran.append("statement")
    assert str(later.value) == str(first.value)
    assert ran == []  # nothing sent to a server known lost


def test_a_statements_own_error_passes_unchanged():
    import grpc
    from pyspark.errors.exceptions.connect import SparkConnectGrpcException

    own_error = SparkConnectGrpcException(
        "[TABLE_OR_VIEW_NOT_FOUND] x", grpc_status_code=grpc.StatusCode.INTERNAL
    )
    with (
        pytest.raises(SparkConnectGrpcException, match="TABLE_OR_VIEW_NOT_FOUND"),
        on_the_server(credentials(port=15098)),
    ):
        raise own_error
    with on_the_server(credentials(port=15098)):  # the server is not taken for lost
        pass
