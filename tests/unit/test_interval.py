"""The one interval parser (src/dbt/adapters/lakehouse/strategy/interval.py), without Spark: what a run
reconciles for each way of passing the interval, and the message for each bad value."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from dbt.adapters.lakehouse.strategy.interval import IntervalError, parse_run_interval

WHO = "model.retry_safe.orders"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize(
    ("var_start", "var_end", "flag_start", "flag_end", "start", "end"),
    [
        # the vars, as text and as the dates YAML makes of unquoted values
        ("2026-10-03", "2026-10-04", None, None, utc(2026, 10, 3), utc(2026, 10, 4)),
        (date(2026, 10, 3), date(2026, 10, 4), None, None, utc(2026, 10, 3), utc(2026, 10, 4)),
        # an offset is converted to UTC; no offset means UTC
        (
            "2026-10-03T02:00:00+02:00",
            "2026-10-03 12:30:00",
            None,
            None,
            utc(2026, 10, 3),
            utc(2026, 10, 3, 12, 30),
        ),
        # dbt's event-time flags: datetimes without a zone, which mean UTC
        (None, None, datetime(2026, 10, 3), datetime(2026, 10, 4), utc(2026, 10, 3), utc(2026, 10, 4)),
        # as `dbt retry` hands them on from run_results.json: text
        (None, None, "2026-10-03 00:00:00", "2026-10-04 06:00:00", utc(2026, 10, 3), utc(2026, 10, 4, 6)),
        # both ways, naming the same interval
        ("2026-10-03", "2026-10-04", datetime(2026, 10, 3), datetime(2026, 10, 4), utc(2026, 10, 3), utc(2026, 10, 4)),
    ],
)  # fmt: skip
def test_the_interval_a_run_reconciles(var_start, var_end, flag_start, flag_end, start, end):
    interval = parse_run_interval(WHO, var_start, var_end, flag_start, flag_end)
    assert (interval.start, interval.end) == (start, end)


NONE_GIVEN = (
    f"{WHO}: no interval was given (neither --event-time-start / --event-time-end nor the vars "
    "data_interval_start / data_interval_end).\n"
    "Pass the interval to reconcile, half-open [start, end), e.g.\n"
    "  dbt run --event-time-start 2026-10-03 --event-time-end 2026-10-04\n"
    "(dbt's event-time flags: a new interval keeps dbt's partial parsing), or\n"
    '  dbt run --vars \'{data_interval_start: "2026-10-03", data_interval_end: "2026-10-04"}\''
)


@pytest.mark.parametrize(
    ("var_start", "var_end", "flags", "message"),
    [
        (None, None, (None, None), NONE_GIVEN),
        (
            None,
            "2026-01-02",
            (None, None),
            f"{WHO}: the var data_interval_start is missing.\n"
            "Pass the interval to reconcile, half-open [start, end), e.g.\n"
            "  dbt run --event-time-start 2026-10-03 --event-time-end 2026-10-04\n"
            "(dbt's event-time flags: a new interval keeps dbt's partial parsing), or\n"
            '  dbt run --vars \'{data_interval_start: "2026-10-03", data_interval_end: '
            '"2026-10-04"}\'',
        ),
        (
            "2026-01-01' OR '1'='1",
            "2026-01-02",
            (None, None),
            f"{WHO}: the var data_interval_start = \"2026-01-01' OR '1'='1\" is not an ISO-8601 "
            "date or timestamp.\nUse a date such as 2026-10-03 or a timestamp such as "
            "2026-10-03T00:00:00Z (an offset such as +02:00 is converted to UTC).",
        ),
        (
            "2026-02-30",
            "2026-03-01",
            (None, None),
            f'{WHO}: the var data_interval_start = "2026-02-30" is not an ISO-8601 date or '
            "timestamp.\nUse a date such as 2026-10-03 or a timestamp such as "
            "2026-10-03T00:00:00Z (an offset such as +02:00 is converted to UTC).",
        ),
        (
            "2026-01-02",
            "2026-01-01",
            (None, None),
            f"{WHO}: data_interval_end (2026-01-01T00:00:00+00:00) must be after "
            "data_interval_start (2026-01-02T00:00:00+00:00): the interval is half-open, "
            "[start, end).\nSwap the two values, or widen the interval.",
        ),
        (
            "2026-10-03",
            "2026-10-05",
            (datetime(2026, 10, 3), datetime(2026, 10, 4)),
            f"{WHO}: the event-time flags give the interval [2026-10-03T00:00:00+00:00, "
            "2026-10-04T00:00:00+00:00), the vars data_interval_start / data_interval_end "
            "[2026-10-03T00:00:00+00:00, 2026-10-05T00:00:00+00:00).\n"
            "Pass the interval one way: the flags --event-time-start / --event-time-end "
            "(preferred), or the vars.",
        ),
        (
            None,
            None,
            (datetime(2026, 10, 4), datetime(2026, 10, 3)),
            f"{WHO}: --event-time-end (2026-10-03T00:00:00+00:00) must be after "
            "--event-time-start (2026-10-04T00:00:00+00:00): the interval is half-open, "
            "[start, end).\nSwap the two values, or widen the interval.",
        ),
        (
            None,
            None,
            (datetime(2026, 10, 4), None),
            f"{WHO}: the flag --event-time-end is missing.\n"
            "Pass the interval to reconcile, half-open [start, end), e.g.\n"
            "  dbt run --event-time-start 2026-10-03 --event-time-end 2026-10-04\n"
            "(dbt's event-time flags: a new interval keeps dbt's partial parsing), or\n"
            '  dbt run --vars \'{data_interval_start: "2026-10-03", data_interval_end: '
            '"2026-10-04"}\'',
        ),
    ],
    ids=[
        "none",
        "start missing",
        "injection",
        "february 30",
        "reversed",
        "flags and vars differ",
        "flags reversed",
        "a flag alone",
    ],
)
def test_a_bad_interval_is_refused_naming_the_model_the_value_and_the_fix(
    var_start, var_end, flags, message
):
    with pytest.raises(IntervalError) as refused:
        parse_run_interval(WHO, var_start, var_end, *flags)
    assert str(refused.value) == message
