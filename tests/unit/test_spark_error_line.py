"""One line for a Spark error on dbt's console (src/dbt/adapters/lakehouse/errors.py), checked
on exceptions built without a JVM in the shape PySpark gives them (each with its cause)."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError
from pyspark.errors import PySparkException

from dbt.adapters.lakehouse.connections import LakehouseConnectionManager
from dbt.adapters.lakehouse.errors import first_load_conflict, runtime_error, spark_error_line
from dbt.adapters.lakehouse.strategy.conflicts import publish_conflict

CAST = (
    '[CAST_INVALID_INPUT] The value \'A-3\' of the type "STRING" cannot be cast to "BIGINT" '
    "because it is malformed. SQLSTATE: 22018\n== SQL (line 1, position 8) ==\nselect cast(code "
    "as bigint)\n       ^^^^^^^^^^^^^^^^^^^^^^"
)


class Captured(PySparkException):
    """A converted JVM exception: its error class (or None), its message, its cause."""

    def __init__(self, condition: str | None, message: str, cause: Captured | None = None):
        super().__init__(message=message)
        self.condition, self.text, self._cause = condition, message, cause

    def getCondition(self) -> str | None:  # noqa: N802 (PySpark's name)
        return self.condition

    def getMessage(self) -> str:  # noqa: N802
        return self.text


def test_a_failed_write_is_its_root_cause_in_one_line_naming_the_value():
    write = Captured(
        "TASK_WRITE_FAILED",
        "[TASK_WRITE_FAILED] Task failed while writing rows to file:/warehouse/t.",
        Captured(None, "Job aborted due to stage failure", Captured("CAST_INVALID_INPUT", CAST)),
    )
    assert spark_error_line(write) == (
        "[CAST_INVALID_INPUT] The value 'A-3' of the type \"STRING\" cannot be cast to "
        '"BIGINT" because it is malformed. SQLSTATE: 22018 (raised as TASK_WRITE_FAILED; the '
        "stack trace is in dbt's log)"
    )


def test_an_error_that_is_its_own_cause_is_its_first_line():
    assert spark_error_line(Captured("CAST_INVALID_INPUT", CAST)) == (
        "[CAST_INVALID_INPUT] The value 'A-3' of the type \"STRING\" cannot be cast to "
        '"BIGINT" because it is malformed. SQLSTATE: 22018'
    )


def test_a_root_cause_without_an_error_class_keeps_the_whole_text():
    python_udf = Captured(None, "An exception was thrown from the Python worker.\nValueError: x")
    write = Captured("TASK_WRITE_FAILED", "[TASK_WRITE_FAILED] Task failed", python_udf)
    assert spark_error_line(write) is None
    assert spark_error_line(ValueError("not Spark's")) is None
    assert spark_error_line(None) is None


def test_delta_refusing_a_column_name_names_the_columns_and_the_setting_that_allows_them():
    delta = Captured(
        "DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES",
        "[DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES] Found invalid character(s) among "
        "' ,;{}()\\n\\t=' in the column names of your schema.\n"
        "Invalid column names: customer name, a=b.\n"
        "Please use other characters and try again.\n"
        "Alternatively, enable Column Mapping to keep using these characters.",
    )
    assert spark_error_line(delta) == (
        "[DELTA_INVALID_CHARACTERS_IN_COLUMN_NAMES] Found invalid character(s) among "
        "' ,;{}()\\n\\t=' in the column names of your schema. Invalid column names: customer "
        "name, a=b. A Delta table holds such column names only with column mapping: set "
        "spark.databricks.delta.properties.defaults.columnMapping.mode: name in the target's "
        "server_side_parameters (every new table, seeds and Python models included), or "
        "tblproperties: {delta.columnMapping.mode: name} on the model."
    )


def test_a_first_load_conflict_is_told_apart_from_any_other_error():
    """Two first loads at once: the second CREATE's error, as dbt receives it (the format's
    first line), says another run created the table; anything else is not such a conflict."""
    cases = {
        "[DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION] Cannot create table "
        "('`spark_catalog`.`analytics`.`orders`'). The associated location "
        "('file:/w/analytics.db/orders') is not empty and also not a Delta table.": (
            "its folder holds files but no Delta table yet: another run is creating the table "
            "right now (two first loads at once), or an earlier table left files there"
        ),
        "[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view "
        "`spark_catalog`.`analytics`.`orders` because it already exists.": (
            "another run created it meanwhile"
        ),
        "[DELTA_PROTOCOL_CHANGED] ProtocolChangedException: The protocol version of the Delta "
        "table has been changed by a concurrent update.": (
            "another run created it meanwhile (its first commit came first)"
        ),
        # seen under Airflow: two first loads of an audited model, the metastore naming the
        # table between the plan and Delta's commit
        "[DELTA_TABLE_ALREADY_EXISTS] Table "
        "`analytics`.`retail_daily_product_cart_abandonment` already exists.": (
            "another run created it meanwhile"
        ),
        # seen under Airflow on Iceberg: both CREATEs past Spark's check, the catalog's commit
        # refusing the second
        "An error occurred while calling o87.sql.\n: org.apache.iceberg.exceptions."
        "AlreadyExistsException: Table already exists: "
        "analytics.retail_daily_product_cart_abandonment\n\tat org.apache.iceberg.hive."
        "HiveTableOperations.doCommit(HiveTableOperations.java:270)": (
            "another run created it meanwhile (its commit to the catalog came first)"
        ),
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `analytics`.`src` cannot be found.": None,
        "An error occurred while calling o87.sql.\n: org.apache.iceberg.exceptions."
        "CommitFailedException: Cannot commit: stale metadata": None,
        "[CAST_INVALID_INPUT] The value 'A-3' of the type \"STRING\" cannot be cast.": None,
    }
    assert {message: first_load_conflict(message) for message in cases} == cases


def test_an_audited_publish_told_another_writer_committed_first():
    """What refuses an audited publish because the table moved since the stage: a commit
    conflict of the format, or Iceberg's fast-forward onto a main that moved (as seen under
    Airflow and in Iceberg's FastForward); anything else is raised."""
    cases = {
        "[DELTA_CONCURRENT_APPEND.WITHOUT_HINT] Transaction conflict detected. a concurrent "
        "MERGE added data to table spark_catalog.analytics.orders committed at version 1.": (
            "DELTA_CONCURRENT_APPEND"
        ),
        "org.apache.iceberg.exceptions.ValidationException: Cannot fast-forward: main is not "
        "an ancestor of dbt_audit_0f3a": "main moved",
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `analytics`.`src` cannot be found.": None,
    }
    assert {message: publish_conflict(message) for message in cases} == cases


def test_a_pyspark_exception_dbt_spark_leaves_as_it_is_becomes_a_runtime_error_it_classifies():
    """Seen under Airflow on Iceberg: fast_forward onto a main another run moved raised PySpark's
    IllegalArgumentException, which has no args, so dbt-spark re-raised it unwrapped and it
    escaped the publish's conflict handling. Through the adapter's exception handler it is a
    DbtRuntimeError whose text the publish reads as another writer's commit; a DbtRuntimeError
    or any other Python error is left as it is."""
    # built with keywords only, as PySpark builds it: no args
    fast_forward = Captured(
        condition=None,
        message="Cannot fast-forward: main is not an ancestor of dbt_audit_eb52d539_d5be",
    )
    assert fast_forward.args == ()
    manager = object.__new__(LakehouseConnectionManager)  # its handler needs no connection
    fast_forward_sql = "call spark_catalog.system.fast_forward(...)"
    with pytest.raises(DbtRuntimeError) as raised, manager.exception_handler(fast_forward_sql):
        raise fast_forward
    assert str(raised.value) == (
        "Runtime Error\n  Cannot fast-forward: main is not an ancestor of dbt_audit_eb52d539_d5be"
    )
    assert publish_conflict(str(raised.value)) == "main moved"
    assert runtime_error(DbtRuntimeError("x")) is None
    assert runtime_error(ValueError("x")) is None
