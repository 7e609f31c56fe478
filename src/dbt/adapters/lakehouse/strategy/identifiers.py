"""Names in the SQL the strategy renders: the one place that decides how a column name (or the
strategy's temporary view) is written (adapter.quote_column; macro idempotent_merge_names).

A plain name (letters, digits, underscores, not starting with a digit) that is not a reserved
word is written as it is, so the SQL of ordinary models reads as before. Any other name (a
space, a dash, a dot, a non-ASCII letter, a reserved word such as ``order`` or ``select``) is
written in backticks, a backtick inside doubled, as Spark SQL reads it back.
"""

import re

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: Spark 4.1's reserved words under spark.sql.ansi.enforceReservedKeywords=true (``select
#: keyword from sql_keywords() where reserved`` with that setting; tests/test_quoted_columns.py
#: compares), plus the strict non-reserved words Spark never reads as a name (ANTI, MINUS,
#: SEMI). Quoting them is harmless when the setting is off and required when it is on.
RESERVED = frozenset(
    """
    ALL AND ANTI ANY AS AUTHORIZATION BOTH CALL CASE CAST CHECK COLLATE COLLATION COLUMN
    CONSTRAINT CREATE CROSS CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP CURRENT_USER DISTINCT
    ELSE END ESCAPE EXCEPT EXECUTE FALSE FETCH FILTER FOR FOREIGN FROM FULL GRANT GROUP HAVING
    IN INNER INTERSECT INTO IS JOIN LATERAL LEADING LEFT MINUS NATURAL NOT NULL OFFSET ON ONLY
    OR ORDER OUTER OVERLAPS PRIMARY RECURSIVE REFERENCES RIGHT SELECT SEMI SESSION_USER SOME
    SQL TABLE THEN TIME TO TRAILING UNION UNIQUE UNKNOWN USER USING WHEN WHERE WITH WITHIN
    """.split()  # noqa: SIM905 (one word list, read as the docs print it)
)


def quote_column(name: str) -> str:
    """name as written in Spark SQL: as it is when plain, otherwise in backticks."""
    if _PLAIN.match(name) and name.upper() not in RESERVED:
        return name
    return "`" + name.replace("`", "``") + "`"


def column_name(written: str) -> str:
    """The name a config means: `order date` (backticks, as dbt's own event_time filter needs
    them) and order date are the same column."""
    if len(written) > 1 and written.startswith("`") and written.endswith("`"):
        return written[1:-1].replace("``", "`")
    return written
