"""Listing a schema's tables while other runs create and drop tables in it.

dbt learns which tables exist from one listing per schema at the start of a run (its relation
cache), and the incremental materialization decides "first load or MERGE" from it. dbt-spark
lists with `show table extended in <schema> like '*'`: Spark reads the table names, then each
table's metadata. A table dropped in between (another run's `<model>__dbt_tmp` staging table,
a full refresh) makes the whole statement fail with TABLE_OR_VIEW_NOT_FOUND, and dbt-spark
answers that error with an empty list, as if the schema held no table at all. Every model of
the run then took the first-load path and created its table again from this run's interval
alone: `create or replace` replaced the history with one interval, with a green run.

Here a listing that fails on a vanished table is started again (the table is gone, the next
listing will not name it); if it keeps failing, the run stops with an error before any model
runs, never with an empty schema. A missing schema still lists as empty, as in dbt-spark.
"""

from __future__ import annotations

from dbt.adapters.spark.impl import SCHEMA_NOT_FOUND_MESSAGES, TABLE_OR_VIEW_NOT_FOUND_MESSAGES

ATTEMPTS = 10
PAUSE_SECONDS = 0.2  # before attempt n + 1: n times this

V2_TABLES = "SHOW TABLE EXTENDED is not supported for v2 tables"


def schema_missing(message: str) -> bool:
    return any(text in message for text in SCHEMA_NOT_FOUND_MESSAGES)


def table_vanished(message: str) -> bool:
    """A table named by the listing was gone when Spark read its metadata."""
    return not schema_missing(message) and any(
        text in message for text in TABLE_OR_VIEW_NOT_FOUND_MESSAGES
    )


def needs_show_tables(message: str) -> bool:
    """A catalog whose tables `show table extended` cannot describe (dbt-spark's fallback)."""
    return V2_TABLES in message


def pause(attempt: int) -> float:
    return attempt * PAUSE_SECONDS


def gave_up(schema: str, last_error: str) -> str:
    first_line = next((line for line in last_error.splitlines() if line.strip()), last_error)
    return (
        f"Could not list the tables of schema {schema}: {ATTEMPTS} times in a row a table was "
        f"dropped while Spark listed them ({first_line.strip()}). Nothing was written. Another "
        f"process is creating and dropping tables in {schema} (a dbt run's staging tables, a "
        "full refresh): run again once it has finished."
    )
