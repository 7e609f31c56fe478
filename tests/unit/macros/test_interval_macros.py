"""The interval macros rendered without Spark (base.py): where a run's interval comes from
(dbt's event-time flags or the vars), what the models' predicates and Python models get, and
the placeholders of commands that write nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from dbt_common.exceptions import CompilationError
from unit.macros.base import Macros, normalize

FLAGS = {"event_time_start": datetime(2026, 10, 3), "event_time_end": datetime(2026, 10, 4)}
VARS = {"data_interval_start": "2026-10-03", "data_interval_end": "2026-10-04"}


@pytest.mark.parametrize(
    ("variables", "flags"),
    [(VARS, {}), ({}, FLAGS), (VARS, FLAGS)],
    ids=["vars", "event-time flags", "both, agreeing"],
)
def test_the_flags_and_the_vars_give_the_same_predicate(variables, flags):
    macros = Macros({}, variables=variables, invocation_args=flags)
    assert macros.interval_given() is True
    assert macros.interval_bounds() == {
        "start": datetime(2026, 10, 3, tzinfo=UTC),
        "end": datetime(2026, 10, 4, tzinfo=UTC),
        "whole_days": True,
    }
    assert normalize(macros.in_interval("event_date", "date")) == (
        "(event_date >= date'2026-10-03' and event_date < date'2026-10-04')"
    )
    assert normalize(macros.in_interval("updated_at")) == (
        "(updated_at >= timestamp'2026-10-03 00:00:00.000000Z' "
        "and updated_at < timestamp'2026-10-04 00:00:00.000000Z')"
    )


def test_interval_given_tells_the_flags_from_the_vars():
    flags_only = Macros({}, invocation_args=FLAGS)
    assert (flags_only.interval_given("flags"), flags_only.interval_given("vars")) == (True, False)
    vars_only = Macros({}, variables=VARS)
    assert (vars_only.interval_given("flags"), vars_only.interval_given("vars")) == (False, True)
    assert Macros({}).interval_given() is False


@pytest.mark.parametrize("command", ["compile", "generate", "list", "ls", "parse"])
def test_commands_that_write_nothing_render_placeholders(command):
    macros = Macros({}, command=command)
    assert macros.interval_bounds() is None
    assert normalize(macros.in_interval("event_date", "date")) == (
        "(event_date >= date'<data_interval_start>' and event_date < date'<data_interval_end>')"
    )


@pytest.mark.parametrize("command", ["run", "build", "retry", "show"])
def test_commands_that_write_refuse_a_missing_interval(command):
    with pytest.raises(CompilationError) as refused:
        Macros({}, command=command).interval_bounds()
    assert "model.scratch.m: no interval was given" in str(refused.value)
    assert "--event-time-start 2026-10-03 --event-time-end 2026-10-04" in str(refused.value)


def test_a_python_model_gets_the_flags_interval_as_utc_datetimes():
    script = Macros({}, invocation_args=FLAGS).py_script_comment()
    assert 'start = _dbt_datetime.datetime.fromisoformat("2026-10-03T00:00:00+00:00")' in script
    assert 'end = _dbt_datetime.datetime.fromisoformat("2026-10-04T00:00:00+00:00")' in script
