"""The ``connect`` method: dbt's statements and Python models through a lakehouse server.

A target with ``method: connect`` opens no JVM. It talks to a running lakehouse server
(``lakehouse serve``) over Spark Connect: every SQL statement is
``spark.sql`` on one Spark Connect session per dbt process, and a Python model's DataFrame code
is built in dbt's process and executed by the server. dbt-spark's session cursor is reused for
everything but ``execute`` (its ``execute`` would build a classic SparkSession per statement).

The session is created once per process and server address, released when the process exits
(the server then drops its temporary views and change sets at once, not after its idle
timeout), and checked on creation: a server that does not listen gives one line naming
``lakehouse serve``, and a server of the other table format (a Delta server for an Iceberg
target) one line saying so.

A server that stops answering during a run (its JVM killed, its machine gone) is retried for
about 25 seconds, not the Connect client's ten minutes; then the statement or Python model ends
with one line naming the server and saying a rerun is safe, every later statement of the
process fails at once with the same line, and the exit does not wait on the lost server.
"""

from __future__ import annotations

import atexit
import os
import socket
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.session.jvm import quiet_pandas_on_spark
from dbt.adapters.spark.session import Connection, Cursor

SERVE = "lakehouse serve --target <a session target of this project>"
# The Connect client's retries of a lost connection: waits of 0.05, 0.2, 0.8, 3.2, 10 and 10
# seconds (plus jitter), about 25 seconds in all; its default tolerates at least 10 minutes.
RETRIES = {"max_retries": 6, "max_backoff": 10_000}
_sessions: dict[str, Any] = {}
_lost: dict[str, str] = {}  # url -> the line that ended the first statement on a lost server


def connect_url(credentials: Any) -> str:
    """sc://host:port/;user_id=…[;token=…] from the target (the token only if set)."""
    url = f"sc://{credentials.host}:{credentials.port}/;user_id={credentials.user or 'dbt'}"
    return url + (f";token={credentials.token}" if credentials.token else "")


def require_listening(credentials: Any) -> None:
    """One line instead of the Connect client's retries (minutes) when nothing listens."""
    try:
        socket.create_connection((credentials.host, int(credentials.port)), timeout=5).close()
    except OSError as problem:
        msg = (
            f"No lakehouse server answers at {credentials.host}:{credentials.port} "
            f"({problem.strerror or problem}). Start it first (`{SERVE}`, in another "
            "terminal), or run on a session target of the project (method: session)."
        )
        raise DbtRuntimeError(msg) from None


def server_format(spark: Any) -> str:
    """delta or iceberg: the table format of the server's session catalog."""
    catalog = spark.conf.get("spark.sql.catalog.spark_catalog", "")
    return "iceberg" if "iceberg" in catalog.lower() else "delta"


def require_same_format(spark: Any, credentials: Any) -> None:
    expected = credentials.table_format
    actual = server_format(spark)
    if expected and expected != actual:
        msg = (
            f"The lakehouse server at {credentials.host}:{credentials.port} serves {actual} "
            f"tables, but this target writes {expected}. Stop that server and serve a session "
            f"target with table_format: {expected} (`{SERVE}`), or use a target with "
            f"table_format: {actual}."
        )
        raise DbtRuntimeError(msg)


def lost_server(credentials: Any, reason: str) -> str:
    return (
        f"The lakehouse server at {credentials.host}:{credentials.port} stopped answering "
        f"during this run ({reason}). Each model's change commits whole or not at all, so "
        f"rerunning the same selection and interval is safe once a server serves again "
        f"(`{SERVE}`)."
    )


@contextmanager
def on_the_server(credentials: Any) -> Iterator[None]:
    """Around everything dbt sends to the server: a lost server ends it with one line (and
    every later statement of this process at once), not a gRPC status."""
    from pyspark.errors.exceptions.connect import SparkConnectGrpcException

    url = connect_url(credentials)
    if url in _lost:
        raise DbtRuntimeError(_lost[url])
    try:
        yield
    except SparkConnectGrpcException as problem:
        import grpc

        if problem.getGrpcStatusCode() != grpc.StatusCode.UNAVAILABLE:
            raise
        _lost[url] = lost_server(credentials, "connection lost, retried for 25 seconds")
        raise DbtRuntimeError(_lost[url]) from None


def release(spark: Any) -> None:
    """At exit: release the session on the server, without retries (a lost server must not
    keep a finished dbt waiting)."""
    spark.client.set_retry_policies([])
    spark.stop()


def connect_session(credentials: Any) -> Any:
    """This process's Spark Connect session to the target's server (created on first use)."""
    url = connect_url(credentials)
    if url in _sessions:
        return _sessions[url]
    require_listening(credentials)
    # pyspark.sql.functions and friends build Connect expressions only in this mode
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    quiet_pandas_on_spark()
    from pyspark.sql.connect.client.retries import DefaultPolicy
    from pyspark.sql.connect.session import SparkSession

    spark = SparkSession.builder.remote(url).create()
    spark.client.set_retry_policies([DefaultPolicy(**RETRIES)])
    # the client's own notice when they run out, printed before our line says the same
    warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]", category=UserWarning)
    try:
        for key, value in credentials.server_side_parameters.items():
            spark.conf.set(key, value)
        require_same_format(spark, credentials)
    except Exception:
        spark.stop()
        raise
    atexit.register(release, spark)
    _sessions[url] = spark
    return spark


def open_session() -> Any:
    """This process's Spark Connect session, if a connect target opened one."""
    return next(iter(_sessions.values()), None)


class ConnectCursor(Cursor):
    """dbt-spark's session cursor, running each statement on the Connect session."""

    def __init__(self, credentials: Any) -> None:
        super().__init__(server_side_parameters=credentials.server_side_parameters)
        self.credentials = credentials

    def execute(self, sql: str, *parameters: Any) -> None:
        from pyspark.errors import PySparkException

        if parameters:
            sql = sql % parameters
        spark = connect_session(self.credentials)
        self._rows = None
        try:
            with on_the_server(self.credentials):
                self._df = spark.sql(sql)
        except PySparkException as problem:
            raise DbtRuntimeError(str(problem)) from problem

    def fetchall(self) -> Any:
        with on_the_server(self.credentials):
            return super().fetchall()

    def fetchone(self) -> Any:
        with on_the_server(self.credentials):
            return super().fetchone()


class ConnectConnection(Connection):
    def __init__(self, credentials: Any) -> None:
        super().__init__(server_side_parameters=credentials.server_side_parameters)
        self.credentials = credentials

    def cursor(self) -> ConnectCursor:
        return ConnectCursor(self.credentials)
