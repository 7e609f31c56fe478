"""Bind values into SQL for the session method: each value becomes a Spark SQL literal.

dbt hands seed rows to the connection as bindings of an ``insert into ... values
(cast(%s as <type>), ...)`` statement (dbt-spark's ``spark__load_csv_rows``). dbt-spark's
session cursor pastes them in as ``'<str(value)>'``: an empty cell (None) loads as the string
'None', and an apostrophe ends the literal early (PARSE_SYNTAX_ERROR). Spark's own parameter
binding (``spark.sql(sql, args=[...])``) refuses None, so each value is rendered here as a
literal of its type instead:

    None               NULL
    bool               TRUE / FALSE
    int, Decimal       the exact digits (12.50, -3); NaN and infinities as cast(r'NaN' as double)
    float              repr (2.5, 1e-05)
    datetime.date      DATE'2026-10-03'
    datetime.datetime  TIMESTAMP'2026-10-03 09:15:30[.ffffff][+02:00]' (an offset is kept)
    bytes              X'00ff'
    str                '...', with each apostrophe and backslash as chr(39) / chr(92):
                       concat('O', chr(39), 'Brien'). No escape sequence is ever written,
                       so the value reads the same whatever spark.sql.parser.
                       escapedStringLiterals says (a raw r'...' literal is misread when it
                       is true, and cannot hold an apostrophe).

Placeholders follow the DB-API "format" style dbt-spark uses: each ``%s`` takes the next
value, ``%%`` is a percent sign, and any other ``%`` is left alone. A value is never scanned
for placeholders, so a ``%s`` inside data stays data.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

PLACEHOLDER = re.compile(r"%%|%s")
# the connection methods whose statements run on a SparkSession object (in-process, or a Spark
# Connect session to the lakehouse server): dbt-spark's session cursor, Python models
SESSION_METHODS = ("session", "connect")
ESCAPED_CHARS = {"'": "chr(39)", "\\": "chr(92)"}


def sql_literal(value: Any) -> str:
    """value as a Spark SQL literal of its type (see the module docstring)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal | float):
        if not math.isfinite(value):
            text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
            return f"cast({string_literal(text)} as double)"
        return format(value, "f") if isinstance(value, Decimal) else repr(value)
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP'{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE'{value.isoformat()}'"
    if isinstance(value, bytes | bytearray):
        return f"X'{bytes(value).hex()}'"
    if isinstance(value, str):
        return string_literal(value)
    raise DbtRuntimeError(
        f"Cannot bind a value of type {type(value).__name__} ({value!r}) into Spark SQL: "
        "expected None, bool, int, Decimal, float, date, datetime, bytes or str."
    )


def string_literal(text: str) -> str:
    """text as Spark SQL: 'text', or concat('O', chr(39), 'Brien') around ' and \\."""
    pieces = [ESCAPED_CHARS.get(part) or f"'{part}'" for part in re.split(r"(['\\])", text) if part]
    if not pieces:
        return "''"
    if len(pieces) == 1:
        return pieces[0]
    return "concat(" + ", ".join(pieces) + ")"


def render_bindings(sql: str, bindings: Sequence[Any]) -> str:
    """sql with each %s replaced by the next binding's literal, and %% by %."""
    values = iter(bindings)
    used = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal used
        if match.group() == "%%":
            return "%"
        used += 1
        try:
            return sql_literal(next(values))
        except StopIteration:
            raise DbtRuntimeError(
                f"The statement has more %s placeholders than the {len(bindings)} values bound "
                "to it."
            ) from None

    rendered = PLACEHOLDER.sub(replace, sql)
    if used != len(bindings):
        raise DbtRuntimeError(
            f"The statement has {used} %s placeholders for {len(bindings)} bound values."
        )
    return rendered
