"""The one parser of the interval a run reconciles: half-open [start, end), in UTC.

How a user passes it (dbt's event-time flags, preferred, or the vars data_interval_start /
data_interval_end; for microbatch models, dbt's own batch bounds) is documented in
docs/using.md, "Passing the interval". Here: dbt hands the flags over as datetimes without a
time zone, which mean UTC; a var is ISO-8601 text, or the date / datetime YAML makes of an
unquoted ``2026-10-03``. Both at once must name the same interval; anything else is refused
with a message naming the model, the value and the fix. The macros (``interval_bounds``) and
the Python models (``dbt.interval``) both get their bounds here; a parse is cached, so a model
run parses its interval once however many macros ask for it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

FLAGS_EXAMPLE = "dbt run --event-time-start 2026-10-03 --event-time-end 2026-10-04"
VARS_EXAMPLE = (
    'dbt run --vars \'{data_interval_start: "2026-10-03", data_interval_end: "2026-10-04"}\''
)
# What to pass when the interval is missing: both ways, the preferred one first.
EXAMPLE = (
    f"  {FLAGS_EXAMPLE}\n"
    "(dbt's event-time flags: a new interval keeps dbt's partial parsing), or\n"
    f"  {VARS_EXAMPLE}"
)
_ISO = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,6}))?)?)?"
    r"(Z|([+-])([0-9]{2}):?([0-9]{2}))?$"
)


class IntervalError(ValueError):
    """A missing, malformed or reversed interval; the message says what to pass instead."""


@dataclass(frozen=True)
class Interval:
    start: datetime
    end: datetime

    @property
    def whole_days(self) -> bool:
        """Both bounds at midnight UTC: a DATE column can be reconciled."""
        return all(bound.timetz() == time(tzinfo=UTC) for bound in (self.start, self.end))

    def as_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "whole_days": self.whole_days}


def parse_instant(value: object) -> datetime | None:
    """One bound as a UTC datetime, or None when it is not an ISO-8601 date or timestamp."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    found = _ISO.match(str(value).strip())
    if not found:
        return None
    g = found.groups()
    try:
        moment = datetime(
            int(g[0]),
            int(g[1]),
            int(g[2]),
            int(g[3] or 0),
            int(g[4] or 0),
            int(g[5] or 0),
            int((g[6] or "0").ljust(6, "0")),
            tzinfo=UTC,
        )
    except ValueError:  # month 13, February 30, hour 24, ...
        return None
    if g[8]:
        hours, minutes = int(g[9]), int(g[10])
        if hours > 23 or minutes > 59:
            return None
        offset = timedelta(hours=hours, minutes=minutes)
        moment = moment - offset if g[8] == "+" else moment + offset
    return moment


# how each way of giving the interval names its two values in a message
WAYS = {
    "vars": ("the var data_interval_start", "the var data_interval_end"),
    "flags": ("the flag --event-time-start", "the flag --event-time-end"),
}


@functools.lru_cache(maxsize=256)
def _parse(raw_start: object, raw_end: object, way: str = "vars") -> Interval:
    if _missing(raw_start) and _missing(raw_end):
        raise IntervalError(
            "no interval was given (neither --event-time-start / --event-time-end nor the vars "
            "data_interval_start / data_interval_end).\n"
            "Pass the interval to reconcile, half-open [start, end), e.g.\n"
            f"{EXAMPLE}"
        )
    (start_name, end_name), bounds = WAYS[way], []
    for name, raw in ((start_name, raw_start), (end_name, raw_end)):
        if _missing(raw):
            raise IntervalError(
                f"{name} is missing.\n"
                "Pass the interval to reconcile, half-open [start, end), e.g.\n"
                f"{EXAMPLE}"
            )
        moment = parse_instant(raw)
        if moment is None:
            raise IntervalError(
                f'{name} = "{raw}" is not an ISO-8601 date or timestamp.\n'
                "Use a date such as 2026-10-03 or a timestamp such as 2026-10-03T00:00:00Z "
                "(an offset such as +02:00 is converted to UTC)."
            )
        bounds.append(moment)
    start, end = bounds
    if end <= start:
        raise IntervalError(
            f"{end_name.split()[-1]} ({end.isoformat()}) must be after {start_name.split()[-1]} "
            f"({start.isoformat()}): the interval is half-open, [start, end).\n"
            "Swap the two values, or widen the interval."
        )
    return Interval(start, end)


def parse_interval(who: str, raw_start: object, raw_end: object, way: str = "vars") -> Interval:
    """The interval [raw_start, raw_end) in UTC, given as the vars or as dbt's event-time flags
    (way: what a message calls the values); IntervalError names `who` and the fix."""
    try:
        return _parse(_hashable(raw_start), _hashable(raw_end), way)
    except IntervalError as problem:
        raise IntervalError(f"{who}: {problem}") from None


def parse_run_interval(
    who: str,
    var_start: object,
    var_end: object,
    flag_start: object = None,
    flag_end: object = None,
) -> Interval:
    """The interval of a run: from dbt's event-time flags when given, else from the vars.

    Given both ways, they must name the same interval: a scheduler that passes both and lets
    them drift apart would otherwise reconcile one and record the other.
    """
    if flag_start is None and flag_end is None:
        return parse_interval(who, var_start, var_end)
    flags = parse_interval(who, flag_start, flag_end, "flags")
    if var_start is None and var_end is None:
        return flags
    given = parse_interval(who, var_start, var_end)
    if given != flags:
        raise IntervalError(
            f"{who}: the event-time flags give the interval [{flags.start.isoformat()}, "
            f"{flags.end.isoformat()}), the vars data_interval_start / data_interval_end "
            f"[{given.start.isoformat()}, {given.end.isoformat()}).\n"
            "Pass the interval one way: the flags --event-time-start / --event-time-end "
            "(preferred), or the vars."
        )
    return flags


def _missing(value: object) -> bool:
    return value is None or str(value).strip() == ""


def _hashable(value: object) -> object:
    return (
        value if isinstance(value, str | date | datetime | int | float | type(None)) else str(value)
    )
