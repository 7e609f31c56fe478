"""Seed values rendered as Spark SQL literals (no Spark here; tests/test_seeds.py loads them)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.session.bindings import render_bindings, sql_literal


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (None, "NULL"),
        (True, "TRUE"),
        (False, "FALSE"),
        (-3, "-3"),
        (Decimal("12.50"), "12.50"),
        (Decimal("-0.75"), "-0.75"),
        (Decimal("1E+2"), "100"),
        (Decimal("NaN"), "cast('NaN' as double)"),
        (2.5, "2.5"),
        (float("-inf"), "cast('-Infinity' as double)"),
        (dt.date(2026, 10, 3), "DATE'2026-10-03'"),
        (dt.datetime(2026, 10, 3, 9, 15, 30), "TIMESTAMP'2026-10-03 09:15:30'"),
        (dt.datetime(2026, 1, 1, 0, 0, 0, 120), "TIMESTAMP'2026-01-01 00:00:00.000120'"),
        (
            dt.datetime(2026, 10, 3, 2, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            "TIMESTAMP'2026-10-03 02:00:00+02:00'",
        ),
        (b"\x00\xff", "X'00ff'"),
        ("", "''"),
        ("None", "'None'"),
        ("Müller 東京 🎉", "'Müller 東京 🎉'"),
        ("O'Brien", "concat('O', chr(39), 'Brien')"),
        ("C:\\new", "concat('C:', chr(92), 'new')"),
        ("'", "chr(39)"),
        ("it\\'s", "concat('it', chr(92), chr(39), 's')"),
        ('say "hi"', "'say \"hi\"'"),
        ("50% %s", "'50% %s'"),
    ],
)
def test_each_value_becomes_a_literal_of_its_type(value, literal):
    assert sql_literal(value) == literal


def test_placeholders_take_the_values_in_order_and_data_is_never_reformatted():
    sql = "insert into t values (cast(%s as string), cast(%s as bigint)), (%s, 100%%)"
    assert render_bindings(sql, ["%s and %%", None, "x"]) == (
        "insert into t values (cast('%s and %%' as string), cast(NULL as bigint)), ('x', 100%)"
    )


def test_a_percent_that_is_no_placeholder_is_left_alone():
    assert render_bindings("select '%d' like 'a%', %s", [1]) == "select '%d' like 'a%', 1"


@pytest.mark.parametrize(("sql", "values"), [("select %s, %s", [1]), ("select %s", [1, 2])])
def test_a_count_mismatch_is_refused(sql, values):
    with pytest.raises(DbtRuntimeError, match="placeholders"):
        render_bindings(sql, values)


def test_an_unknown_type_is_refused_by_name():
    with pytest.raises(DbtRuntimeError, match="type timedelta"):
        sql_literal(dt.timedelta(days=1))
