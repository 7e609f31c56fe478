"""Credentials and connection manager: dbt-spark's, under the adapter type ``lakehouse``."""

from dataclasses import dataclass

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.lakehouse.bindings import with_literal_bindings
from dbt.adapters.lakehouse.errors import prepare_pyspark_errors
from dbt.adapters.lakehouse.jars import require_jars
from dbt.adapters.lakehouse.java import require_java
from dbt.adapters.lakehouse.jvm import start_session
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)


@dataclass
class LakehouseCredentials(SparkCredentials):
    @property
    def type(self) -> str:
        return "lakehouse"


class LakehouseConnectionManager(SparkConnectionManager):
    TYPE = "lakehouse"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        # An embedded driver without a usable Java would die in a JVM stack trace.
        if connection.credentials.method == SparkConnectionMethod.SESSION:
            require_java()
            # Likewise without its table-format jars (ClassNotFoundException for the catalog).
            require_jars(connection.credentials.server_side_parameters)
            # Delta's own error messages, and no PySpark JSON error records (errors.py)
            prepare_pyspark_errors()
            # The JVM starts here, not on the first statement, so its stderr can be filtered.
            start_session(connection.credentials.server_side_parameters)
        # seed values are bound as Spark SQL literals, not pasted in as '<value>' (bindings.py)
        return with_literal_bindings(super().open(connection))
