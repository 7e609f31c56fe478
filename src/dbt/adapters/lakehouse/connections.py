"""Credentials and connection manager: dbt-spark's, under the adapter type ``lakehouse``."""

from dataclasses import dataclass

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.lakehouse.java import require_java
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
        return super().open(connection)
