"""Errors from Spark reach dbt with the table format's own message, and only through dbt.

PySpark 4.1 turns a JVM exception into a Python one (`CapturedException`) and, while building
it, logs it (`_log_exception`) with a message it renders again from the error class and its
parameters, looked up in Spark's own registry of error conditions (`SparkThrowableHelper`).
Delta 4.4 keeps its error classes (`DELTA_*`) in a registry of its own, so for a Delta error
that lookup fails inside the JVM, and the Python exception dbt receives is that failure:
`[INTERNAL_ERROR] Cannot find main error class 'DELTA_MERGE_UNRESOLVED_EXPRESSION'`, with a
Java stack trace, instead of Delta's text. Spark has no setting to register another registry.

`keep_format_error_messages` makes that rendering fall back to the message the JVM exception
carries itself (Delta renders it from its own registry) when Spark's registry does not know the
class, so the exception is built as usual and dbt shows Delta's message.

A failed write reaches dbt as Spark's outer error, `TASK_WRITE_FAILED` with a Java stack trace,
while the reason (`CAST_INVALID_INPUT`, naming the value) is a cause further down the chain.
`spark_error_line` gives dbt one line instead when the chain's root cause has an error class:
its first line (the value, where Spark names it) and the outer class it was raised as; the
whole chain and the stack trace go to dbt's debug log (logs/dbt.log).

The same logging writes every SQL error that has a query context (a line and position) as one
JSON record on standard error, `{"level": "ERROR", "logger": "SQLQueryContextLogger", ...}`,
with the Java stack trace inside, even for errors dbt-spark expects and handles; dbt reports a
real failure itself. `quiet_query_context_loggers` leaves only CRITICAL records on those two
loggers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.events.logging import AdapterLogger

logger = AdapterLogger("lakehouse")

QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")

#: The fix, for an error whose own first line does not say it.
FIXES = {
    "DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES": (
        "A Delta table holds such column names only with column mapping: set "
        "spark.databricks.delta.properties.defaults.columnMapping.mode: name in the target's "
        "server_side_parameters (every new table, seeds and Python models included), or "
        "tblproperties: {delta.columnMapping.mode: name} on the model."
    ),
}


#: The errors of a first load's CREATE TABLE when another run created the table meanwhile
#: (two first loads of one model at once), by error class: what happened, in words.
FIRST_LOAD_CONFLICTS = {
    # Delta, the other run's data files already in the folder, its first commit not yet made
    "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION": (
        "its folder holds files but no Delta table yet: another run is creating the table right "
        "now (two first loads at once), or an earlier table left files there"
    ),
    # the metastore already names it (Delta and Iceberg)
    "TABLE_OR_VIEW_ALREADY_EXISTS": "another run created it meanwhile",
    "TABLE_ALREADY_EXISTS": "another run created it meanwhile",
    # Delta's own check, when the metastore named the table between the plan and the commit
    "DELTA_TABLE_ALREADY_EXISTS": "another run created it meanwhile",
    # Delta, both runs writing the first commit of one folder
    "DELTA_PROTOCOL_CHANGED": "another run created it meanwhile (its first commit came first)",
    "DELTA_CONCURRENT_WRITE": "another run created it meanwhile (its first commit came first)",
    "DELTA_METADATA_CHANGED": "another run created it meanwhile (its first commit came first)",
}
#: The same, for errors that reach dbt as the JVM exception (no `[CLASS]`), by its class name
FIRST_LOAD_CONFLICT_EXCEPTIONS = {
    # Iceberg, both runs past Spark's existence check, the other's commit to the catalog first
    "org.apache.iceberg.exceptions.AlreadyExistsException": (
        "another run created it meanwhile (its commit to the catalog came first)"
    ),
}


def first_load_conflict(message: str) -> str | None:
    """What happened, when the error of a first load's CREATE TABLE says another run created
    the table meanwhile (FIRST_LOAD_CONFLICTS, by the `[CLASS]` Spark's message starts with, or
    FIRST_LOAD_CONFLICT_EXCEPTIONS, by the JVM exception's class);
    None for any other error."""
    for condition, happened in FIRST_LOAD_CONFLICTS.items():
        if f"[{condition}]" in message:
            return happened
    for exception, happened in FIRST_LOAD_CONFLICT_EXCEPTIONS.items():
        if f"{exception}: " in message:
            return happened
    return None


def keep_format_error_messages() -> None:
    """Fall back to the JVM exception's own message when Spark cannot render its error class."""
    from py4j.protocol import Py4JError
    from pyspark.errors.exceptions.captured import CapturedException

    rendered_by_spark = CapturedException.getMessage
    if getattr(rendered_by_spark, "keeps_format_messages", False):
        return

    def getMessage(self: Any) -> str:  # noqa: N802 (PySpark's name)
        try:
            return rendered_by_spark(self)
        except Py4JError:
            # the JVM exception's getMessage(), which CapturedException holds as its text
            return getattr(self, "_desc", None) or ""

    getMessage.keeps_format_messages = True  # type: ignore[attr-defined]
    getMessage.__doc__ = rendered_by_spark.__doc__
    CapturedException.getMessage = getMessage  # type: ignore[method-assign]


def quiet_query_context_loggers() -> None:
    """Only CRITICAL records from PySpark's query-context loggers (dbt reports the error)."""
    from pyspark.logger import PySparkLogger

    for name in QUERY_CONTEXT_LOGGERS:
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)


def spark_error_line(problem: BaseException | None) -> str | None:
    """One line for a Spark error whose root cause has an error class: that cause's first
    line, and the outer class if another. None for anything else (a root cause without a class,
    such as a Python model's own exception raised in a UDF, keeps dbt-spark's whole text)."""
    chain = list(causes(problem))
    if not chain or not chain[-1][0]:
        return None
    inner, message = chain[-1]
    outer = next(condition for condition, _ in chain if condition)
    lines = (message or inner).strip().splitlines()
    line = lines[0]
    if outer != inner:
        line += f" (raised as {outer}; the stack trace is in dbt's log)"
    if inner in FIXES:
        # Delta names the offending columns on a line of their own
        named = [text.strip() for text in lines[1:] if "column names" in text.lower()]
        line = " ".join([line, *named[:1], FIXES[inner]])
    return line


def causes(problem: BaseException | None, limit: int = 50) -> Iterator[tuple[str | None, str]]:
    """(error class or None, message) of the error and each cause, outermost first: from the JVM
    (a Py4JJavaError, which PySpark leaves unconverted for SparkException such as
    TASK_WRITE_FAILED, or a converted exception's origin), else from PySpark's own chain."""
    from py4j.protocol import Py4JError, Py4JJavaError
    from pyspark.errors import PySparkException

    if isinstance(problem, Py4JJavaError):
        java = problem.java_exception
    else:
        java = getattr(problem, "_origin", None) if isinstance(problem, PySparkException) else None
    if java is not None:
        for _ in range(limit):
            try:
                condition = java.getCondition()  # only a SparkThrowable has one
            except Py4JError:
                condition = None
            yield condition, java.getMessage() or ""
            java = java.getCause()
            if java is None:
                return
        return
    error: Any = problem
    for _ in range(limit):
        if not isinstance(error, PySparkException):
            return
        yield error.getCondition(), error.getMessage()
        error = getattr(error, "_cause", None)


def one_line_error(problem: BaseException | None) -> DbtRuntimeError | None:
    """The DbtRuntimeError dbt shows for a Spark error (spark_error_line), its stack trace
    written to dbt's debug log; None when the error keeps its own text."""
    line = spark_error_line(problem)
    if line is None or problem is None:
        return None
    logger.debug(stack_trace(problem))
    return DbtRuntimeError(line)


def runtime_error(problem: BaseException) -> DbtRuntimeError | None:
    """A PySpark exception that reached dbt as it is, as the DbtRuntimeError its text makes,
    else None. dbt-spark wraps an error only when it has args, and PySpark's converted
    exceptions have none: a Java IllegalArgumentException (Iceberg's `Cannot fast-forward: main
    is not an ancestor of ...`) escaped every `except DbtRuntimeError` of the adapter and
    reached dbt as a Compilation Error of the macro that ran it."""
    from pyspark.errors import PySparkException

    if isinstance(problem, PySparkException) and not isinstance(problem, DbtRuntimeError):
        return DbtRuntimeError(str(problem))
    return None


def stack_trace(problem: BaseException) -> str:
    """For dbt's debug log: a converted exception's Java stack trace, else the error's own
    text (a Py4JJavaError's includes the trace)."""
    return getattr(problem, "_stackTrace", None) or str(problem)


def prepare_pyspark_errors() -> None:
    keep_format_error_messages()
    quiet_query_context_loggers()
