"""dbt-spark's session connection wrapper, binding values as Spark SQL literals (bindings.py)."""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.bindings import render_bindings
from dbt.adapters.spark.session import SessionConnectionWrapper


class LiteralBindingSessionWrapper(SessionConnectionWrapper):
    """Only execute with bindings differs: the values are rendered into the statement as
    literals, then it runs like any other statement (no ``%`` formatting by dbt-spark)."""

    def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
        if bindings is None:
            return super().execute(sql)
        return super().execute(render_bindings(sql, bindings))
