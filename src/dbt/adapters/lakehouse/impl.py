"""The adapter: SparkAdapter with one more Python submission method, ``session``."""

from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.lakehouse import determinism
from dbt.adapters.lakehouse.connections import LakehouseConnectionManager
from dbt.adapters.lakehouse.python_submissions import SessionPythonJobHelper
from dbt.adapters.spark import SparkAdapter


class LakehouseAdapter(SparkAdapter):
    ConnectionManager = LakehouseConnectionManager  # type: ignore[assignment]

    @property
    def default_python_submission_method(self) -> str:
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}

    @available
    def find_nondeterministic(self, code: str, language: str = "sql") -> dict | None:
        """The first non-deterministic spelling in code (Spark SQL or Python), as a dict with
        name, what ("function uuid()"), line and text; None if there is none. Used by the
        macro idempotent_merge_assert_deterministic; the rules are in determinism.py."""
        found = determinism.find_nondeterministic(code, language)
        return found.as_dict() if found else None

    def generate_python_submission_response(self, submission_result: Any) -> AdapterResponse:
        return AdapterResponse(_message="OK", rows_affected=None)
