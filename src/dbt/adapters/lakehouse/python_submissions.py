"""Run a compiled dbt Python model inside the SparkSession the SQL statements use.

Stock dbt-spark submits Python models only to Databricks clusters. With ``method: session``
the SQL side already runs in an in-process SparkSession; this helper executes the compiled
model code (which ends with dbt-spark's own ``saveAsTable``, or for idempotent_merge with the
rows pinned into a temporary view: incremental.sql, lakehouse_py_stage) against that same
session, so SQL and Python models share one JVM, one catalog and one set of table-format
extensions.
With ``method: connect`` the session is the process's Spark Connect session to the lakehouse
server (connect.py): the DataFrame plan is built here and runs on the server.
"""

from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.lakehouse.errors import one_line_error
from dbt.adapters.lakehouse.session.bindings import SESSION_METHODS


def active_session(server_side_parameters: dict[str, Any]) -> Any:
    """The SparkSession dbt-spark's session cursor uses (built the same way, so the same one)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.enableHiveSupport()
    for key, value in server_side_parameters.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


class SessionPythonJobHelper(PythonJobHelper):
    def __init__(self, parsed_model: dict, credentials: Any) -> None:
        self.model_name = f"{parsed_model['schema']}.{parsed_model['alias']}"
        self.credentials = credentials
        if credentials.method not in SESSION_METHODS:
            msg = (
                f"Python model {self.model_name}: submission_method 'session' needs a target "
                f"with method: session or connect, but this target uses method: "
                f"{credentials.method}. Run Python models on a target with method: session (Spark "
                "in dbt's process) or method: connect (a lakehouse server)."
            )
            raise DbtRuntimeError(msg)

    def submit(self, compiled_code: str) -> None:
        if self.credentials.method == "connect":
            # the Spark Connect client only where it serves (gRPC, pandas, pyarrow)
            from dbt.adapters.lakehouse.session.connect import connect_session, on_the_server

            spark = connect_session(self.credentials)
            with on_the_server(self.credentials):
                self.run(spark, compiled_code)
            return
        else:
            spark = active_session(self.credentials.server_side_parameters)
            # dbt runs the model in a worker thread, which has no active session in the JVM:
            # there an Iceberg table's overwrite by saveAsTable took Spark's V1 path and failed
            # ("IcebergSource does not allow create table as select") unless the model's own
            # code happened to set it (classic createDataFrame does).
            spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
        self.run(spark, compiled_code)

    def run(self, spark: Any, compiled_code: str) -> None:
        """The model's code; a Spark error with an error class ends it in one line (errors.py),
        the stack trace in dbt's log."""
        code = compile(compiled_code, f"<dbt python model {self.model_name}>", "exec")
        try:
            exec(code, {"spark": spark, "__name__": "__dbt_python_model__"})  # noqa: S102
        except Exception as problem:
            error = one_line_error(problem)
            if error is None:
                raise
            raise error from problem
