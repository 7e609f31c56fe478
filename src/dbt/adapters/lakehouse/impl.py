"""The adapter: SparkAdapter with one more Python submission method, ``session``."""

from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.contracts.connection import AdapterResponse
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

    def generate_python_submission_response(self, submission_result: Any) -> AdapterResponse:
        return AdapterResponse(_message="OK", rows_affected=None)
