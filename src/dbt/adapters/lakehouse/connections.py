"""Credentials and connection manager: dbt-spark's, under the adapter type ``lakehouse``,
plus the ``connect`` method (a lakehouse server over Spark Connect, connect.py)."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from dbt_common.dataclass_schema import StrEnum
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.lakehouse.errors import (
    one_line_error,
    prepare_pyspark_errors,
    quiet_query_context_loggers,
    runtime_error,
)
from dbt.adapters.lakehouse.session.jars import require_jars
from dbt.adapters.lakehouse.session.java import require_java
from dbt.adapters.lakehouse.session.jvm import shared_jvm_threads, start_session
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)


class LakehouseConnectionMethod(StrEnum):
    """dbt-spark's methods plus connect. Members equal dbt-spark's ("session" == "session")."""

    THRIFT = "thrift"
    HTTP = "http"
    ODBC = "odbc"
    SESSION = "session"
    CONNECT = "connect"


TABLE_FORMATS = ("delta", "iceberg")


@dataclass
class LakehouseCredentials(SparkCredentials):
    method: LakehouseConnectionMethod = None  # type: ignore[assignment]
    # the table format the target writes (delta or iceberg): target.table_format for the
    # project's file_format; connect checks it against the server's catalog
    table_format: str | None = None
    # the schema of the interval ledger table, <ledger_schema>.interval_ledger (ledger.py)
    ledger_schema: str = "lakehouse"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.table_format is not None and self.table_format not in TABLE_FORMATS:
            msg = (
                f"table_format is {self.table_format!r} in the profile; it must be delta or "
                "iceberg (the format of the lakehouse server the target connects to)."
            )
            raise DbtRuntimeError(msg)

    @property
    def type(self) -> str:
        return "lakehouse"

    def _connection_keys(self) -> tuple[str, ...]:
        # table_format reaches projects as target.table_format (dbt_project.yml's file_format)
        return (*super()._connection_keys(), "table_format", "ledger_schema")


class LakehouseConnectionManager(SparkConnectionManager):
    TYPE = "lakehouse"

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        """dbt-spark's, except that a Spark error with an error class reaches the console as
        one line (errors.py: a failed write's reason, not TASK_WRITE_FAILED's stack trace), and
        a PySpark exception dbt-spark leaves as it is becomes a DbtRuntimeError too
        (errors.runtime_error)."""
        try:
            with super().exception_handler(sql):
                yield
        except Exception as error:
            # dbt-spark wraps the Spark error in a DbtRuntimeError (its session cursor wraps an
            # AnalysisException in one more); one without args it re-raises as it is
            cause: BaseException | None = error
            while isinstance(cause, DbtRuntimeError) and cause.__context__ is not None:
                cause = cause.__context__
            one_line = one_line_error(cause) or runtime_error(error)
            if one_line is None:
                raise
            raise one_line from cause

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        # imported here: it imports pyspark, which commands that open no connection never load
        from dbt.adapters.lakehouse.session.wrapper import with_literal_bindings

        method = connection.credentials.method
        if method == LakehouseConnectionMethod.CONNECT:
            # no JSON error record per failed statement on dbt's console (errors.py)
            quiet_query_context_loggers()
            return with_literal_bindings(cls.open_connect(connection))
        # An embedded driver without a usable Java would die in a JVM stack trace.
        if method == SparkConnectionMethod.SESSION:
            require_java()
            # Likewise without its table-format jars (ClassNotFoundException for the catalog).
            require_jars(connection.credentials.server_side_parameters)
            # Delta's own error messages, and no PySpark JSON error records (errors.py)
            prepare_pyspark_errors()
            # The JVM starts here, not on the first statement, so its stderr can be filtered;
            # dbt's threads share its threads (the metastore's per-thread store built once).
            with shared_jvm_threads():
                start_session(connection.credentials.server_side_parameters)
        # seed values are bound as Spark SQL literals, not pasted in as '<value>' (bindings.py)
        return with_literal_bindings(super().open(connection))

    @classmethod
    def open_connect(cls, connection: Connection) -> Connection:
        """A Spark Connect session to the lakehouse server, no JVM here (connect.py)."""
        # the Spark Connect client only where it serves (gRPC, pandas, pyarrow)
        from dbt.adapters.lakehouse.session.connect import ConnectConnection, connect_session
        from dbt.adapters.spark.session import SessionConnectionWrapper

        if connection.state == ConnectionState.OPEN:
            return connection
        connect_session(connection.credentials)  # fails now, in one line, if unreachable
        connection.handle = SessionConnectionWrapper(ConnectConnection(connection.credentials))
        connection.state = ConnectionState.OPEN  # type: ignore[assignment]
        return connection
