"""`lakehouse intervals` / `catchup`: the window, the grain's intervals and what is missing, and
every refusal before dbt runs (dbt/adapters/lakehouse/commands/catchup.py, cli.py): no JVM."""

from __future__ import annotations

from datetime import UTC, datetime

import click
import pytest
from dbt.cli.main import cli as dbt_cli

from dbt.adapters.lakehouse.commands import cli
from dbt.adapters.lakehouse.commands.catchup import (
    IntervalModel,
    SchedulerError,
    event_time,
    interval_model,
    is_covered,
    missing_intervals,
    report,
    report_lines,
    steps,
    window,
)


def day(n: int, hour: int = 0) -> datetime:
    return datetime(2026, 10, n, hour, tzinfo=UTC)


def orders(grain: str = "day", begin: datetime | None = None) -> IntervalModel:
    return IntervalModel("model.shop.orders", "orders", grain, begin)


def node(strategy: str = "idempotent_merge", **config: object) -> dict:
    return {
        "unique_id": "model.shop.orders",
        "name": "orders",
        "resource_type": "model",
        "config": {"materialized": "incremental", "incremental_strategy": strategy, **config},
    }


def test_days_1_2_and_4_loaded_leave_3_and_5_missing_up_to_day_6():
    model = orders()
    model.loaded = [(day(1), day(3)), (day(4), day(5))]
    assert model.missing(day(1), day(6)) == [(day(3), day(4)), (day(5), day(6))]


def test_an_interval_is_loaded_only_when_covered_whole_even_by_several_pieces():
    assert is_covered((day(1), day(2)), [(day(1, 12), day(2)), (day(1), day(1, 12))])
    assert not is_covered((day(1), day(2)), [(day(1), day(1, 12)), (day(1, 13), day(2))])
    assert not is_covered((day(1), day(2)), [])


def test_the_grain_cuts_the_window():
    assert steps(day(1), day(1, 3), "hour") == [
        (day(1), day(1, 1)),
        (day(1, 1), day(1, 2)),
        (day(1, 2), day(1, 3)),
    ]
    assert steps(datetime(2026, 11, 1, tzinfo=UTC), datetime(2027, 2, 1, tzinfo=UTC), "month") == [
        (datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC)),
        (datetime(2026, 12, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)),
        (datetime(2027, 1, 1, tzinfo=UTC), datetime(2027, 2, 1, tzinfo=UTC)),
    ]


def test_intervals_missing_from_several_models_are_run_once_oldest_first():
    first, second = orders(), orders()
    first.loaded = [(day(1), day(3))]
    second.loaded = [(day(2), day(4))]
    assert missing_intervals([first, second], day(1), day(4)) == [
        (day(1), day(2)),
        (day(3), day(4)),
    ]


def test_the_window_defaults_to_begin_and_the_last_whole_interval():
    since, until = window([orders(begin=day(2))], None, None, now=day(7, 15))
    assert (since, until) == (day(2), day(7))


@pytest.mark.parametrize(
    ("since", "until", "message"),
    [
        (day(6), day(6), "--since 2026-10-06 is not before --until 2026-10-06"),
        (day(1, 6), day(6), "orders: --since 2026-10-01T06:00:00 is inside one of the model's"),
        (None, day(6), "orders: no `begin` config to start from: pass --since YYYY-MM-DD."),
    ],
)
def test_a_bad_window_is_refused_naming_the_fix(since, until, message):
    with pytest.raises(SchedulerError, match=message):
        window([orders()], since, until, now=day(9))


def test_only_idempotent_merge_and_microbatch_models_have_intervals():
    assert interval_model(node()).grain == "day"
    assert interval_model(node("microbatch", batch_size="hour", begin="2026-10-01")) == (
        IntervalModel("model.shop.orders", "orders", "hour", day(1))
    )
    assert interval_model(node("merge")) is None
    assert interval_model({**node(), "config": {"materialized": "view"}}) is None
    with pytest.raises(SchedulerError, match="batch_size 'week' is not a grain: set it to one of"):
        interval_model(node(batch_size="week"))


def test_the_listing_for_a_person_and_for_a_program():
    model = orders()
    model.loaded = [(day(1), day(2)), (day(2), day(3)), (day(4), day(5))]
    listing = report([model], day(1), day(6))
    assert listing == {
        "since": "2026-10-01T00:00:00Z",
        "until": "2026-10-06T00:00:00Z",
        "models": [
            {
                "model": "orders",
                "unique_id": "model.shop.orders",
                "grain": "day",
                "loaded": [
                    ["2026-10-01T00:00:00Z", "2026-10-03T00:00:00Z"],
                    ["2026-10-04T00:00:00Z", "2026-10-05T00:00:00Z"],
                ],
                "missing": [
                    ["2026-10-03T00:00:00Z", "2026-10-04T00:00:00Z"],
                    ["2026-10-05T00:00:00Z", "2026-10-06T00:00:00Z"],
                ],
            }
        ],
    }
    # for a person: each instant as dbt's --event-time-start / --event-time-end take it
    assert report_lines(listing) == [
        "intervals in [2026-10-01, 2026-10-06), UTC, as --event-time-start / --event-time-end "
        "take them",
        "orders (grain day)",
        "  loaded: 2",
        "    [2026-10-01, 2026-10-03)",
        "    [2026-10-04, 2026-10-05)",
        "  missing: 2",
        "    [2026-10-03, 2026-10-04)",
        "    [2026-10-05, 2026-10-06)",
    ]


def test_hours_are_listed_with_their_time_and_no_offset():
    model = orders("hour")
    model.loaded = [(day(3), day(3, 4))]
    lines = report_lines(report([model], day(3), day(3, 6)))
    assert lines[1:] == [
        "orders (grain hour)",
        "  loaded: 1",
        "    [2026-10-03, 2026-10-03T04:00:00)",
        "  missing: 2",
        "    [2026-10-03T04:00:00, 2026-10-03T05:00:00)",
        "    [2026-10-03T05:00:00, 2026-10-03T06:00:00)",
    ]


@pytest.mark.parametrize(
    ("moment", "shown", "dbt_reads"),
    [
        (day(3), "2026-10-03", datetime(2026, 10, 3)),
        (day(3, 4), "2026-10-03T04:00:00", datetime(2026, 10, 3, 4)),
    ],
)
@pytest.mark.parametrize("flag", ["event_time_start", "event_time_end"])
def test_a_listed_instant_pasted_into_dbts_event_time_flag_is_accepted(
    moment, shown, dbt_reads, flag
):
    """What `lakehouse intervals` prints and `catchup` passes, through dbt's own click option."""
    assert event_time(moment) == shown
    run = dbt_cli.commands["run"]
    option = next(param for param in run.params if param.name == flag)
    assert option.type.convert(shown, option, click.Context(run)) == dbt_reads
    # the RFC 3339 form the JSON keeps is the one dbt refuses
    with pytest.raises(click.BadParameter, match="does not match the formats"):
        option.type.convert(f"{moment:%Y-%m-%dT%H:%M:%SZ}", option, click.Context(run))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--since", "2026-10-32"], "lakehouse catchup: --since '2026-10-32' is not a date or"),
        (["--since", "2026-10-01", "--until", "soon"], "--until 'soon' is not a date or"),
    ],
)
def test_a_bad_date_is_refused_before_dbt_runs(capsys, argv, message):
    assert cli.main(["catchup", "--select", "orders", *argv]) == 2
    assert message in capsys.readouterr().err
