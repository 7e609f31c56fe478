"""Which listing errors mean "list again" (a table vanished), "empty" (no schema) or "raise"."""

from __future__ import annotations

from dbt.adapters.lakehouse import listing

# Spark 4.1's message when a table named by `show table extended` was dropped before Spark read
# its metadata (captured from a listing while another thread dropped tables)
VANISHED = (
    "[TABLE_OR_VIEW_NOT_FOUND] The table or view `spark_catalog`.`analytics`.`churn_0` cannot "
    "be found. Verify the spelling and correctness of the schema and catalog."
)
NO_SCHEMA = "[SCHEMA_NOT_FOUND] The schema `analytics` cannot be found."


def test_a_vanished_table_is_listed_again():
    assert listing.table_vanished(VANISHED)
    assert not listing.schema_missing(VANISHED)


def test_a_missing_schema_lists_as_empty_and_is_not_listed_again():
    assert listing.schema_missing(NO_SCHEMA)
    assert not listing.table_vanished(NO_SCHEMA)


def test_other_errors_are_neither():
    message = "[PARSE_SYNTAX_ERROR] Syntax error at or near 'extended'."
    assert not listing.table_vanished(message)
    assert not listing.schema_missing(message)
    assert not listing.needs_show_tables(message)


def test_the_pauses_grow_and_stay_short():
    assert [listing.pause(n) for n in (1, 2, 9)] == [0.2, 0.4, 1.8]


def test_giving_up_names_the_schema_the_error_and_what_to_do():
    assert listing.gave_up("analytics", VANISHED + "\nJVM stacktrace:\n...") == (
        "Could not list the tables of schema analytics: 10 times in a row a table was dropped "
        "while Spark listed them ([TABLE_OR_VIEW_NOT_FOUND] The table or view "
        "`spark_catalog`.`analytics`.`churn_0` cannot be found. Verify the spelling and "
        "correctness of the schema and catalog.). Nothing was written. Another process is "
        "creating and dropping tables in analytics (a dbt run's staging tables, a full "
        "refresh): run again once it has finished."
    )
