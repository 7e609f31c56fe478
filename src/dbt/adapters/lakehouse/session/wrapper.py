"""dbt-spark's session connection wrapper, binding values as Spark SQL literals (bindings.py).

Imported when a session or connect connection opens (connections.py): dbt-spark's session
module imports pyspark, which a dbt command that opens no connection (parse, ls) never needs.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.lakehouse.session.bindings import SESSION_METHODS, render_bindings
from dbt.adapters.spark.session import SessionConnectionWrapper


class LiteralBindingSessionWrapper(SessionConnectionWrapper):
    """Only execute with bindings differs: the values are rendered into the statement as
    literals, then it runs like any other statement (no ``%`` formatting by dbt-spark)."""

    def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
        if bindings is None:
            return super().execute(sql)
        return super().execute(render_bindings(sql, bindings))


def with_literal_bindings(connection: Connection) -> Connection:
    """Give a session- or connect-method connection the wrapper that binds values as literals."""
    if connection.credentials.method not in SESSION_METHODS:
        return connection
    handle = connection.handle
    if not isinstance(handle, LiteralBindingSessionWrapper):
        connection.handle = LiteralBindingSessionWrapper(handle.handle)
    return connection
