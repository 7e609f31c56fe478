"""`lakehouse intervals` and `lakehouse catchup`: a scheduler's view of the interval ledger.

    lakehouse intervals --select orders --since 2026-10-01 [--until 2026-10-08] [--json]
    lakehouse catchup   --select +orders --since 2026-10-01 [--until ...] [--command build]
                        [--quiet | --json]

Both take dbt's --project-dir, --profiles-dir, --target and --vars. The interval models of the
selection (incremental `idempotent_merge` and `microbatch` models; the others, such as upstream
views and seeds, run along as dbt runs them) each have a grain: their `batch_size` config
(hour, day, month, year), a day by default. An interval of the grain in [since, until) is
loaded when the model's ledger covers it: the intervals the table's own commits carry (ledger.py,
read by the macro lakehouse_intervals); otherwise it is missing.

`catchup` runs each interval missing from any selected model, oldest first, as one normal
retry-safe `dbt run` (or `build`) of the whole selection with the interval as dbt's event-time
flags. It stops at the first failure, naming the interval, exit status 1; run again, it
starts at that interval (the ledger now holds the ones before it). Nothing missing: no dbt run,
nothing written. dbt runs in this process (dbtRunner): the project is parsed once and that
manifest serves every invocation, and the flags are not vars, so no interval costs a parse.

Every refusal (a bad date, --since not before --until, a selection without an interval model)
is one line naming the problem and the fix, exit status 2, before dbt runs anything.

Instants are UTC. What a person reads shows them as dbt's --event-time-start / --event-time-end
take them, so a listed interval can be pasted into a run: a midnight as the date (2026-10-03),
any other instant without an offset (2026-10-03T04:00:00). The JSON (--json of both commands)
keeps RFC 3339 instants with their Z (2026-10-03T00:00:00Z), as before.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from dbt.adapters.lakehouse.strategy.interval import parse_instant
from dbt.adapters.lakehouse.tables.ledger import iso

LEDGER_PREFIX = "lakehouse_intervals "
INTERVAL_STRATEGIES = ("idempotent_merge", "microbatch")
GRAINS = ("hour", "day", "month", "year")


class SchedulerError(Exception):
    """Refused before dbt runs anything; the message names the problem and the fix."""


# -- plan: dates, grains, what is missing (pure) ----------------------------------------------


def parse_moment(option: str, text: str | None) -> datetime | None:
    """A --since / --until value as a UTC instant (dates are midnight UTC), via the one parser."""
    if text is None:
        return None
    moment = parse_instant(text)
    if moment is None:
        raise SchedulerError(
            f"{option} {text!r} is not a date or timestamp: write it as YYYY-MM-DD or ISO-8601 "
            "(2026-10-01, 2026-10-01T06:00:00Z)."
        )
    return moment


def next_step(moment: datetime, grain: str) -> datetime:
    if grain == "hour":
        return moment + timedelta(hours=1)
    if grain == "day":
        return moment + timedelta(days=1)
    if grain == "month":
        year, month = divmod(moment.month, 12)
        return moment.replace(year=moment.year + year, month=month + 1)
    return moment.replace(year=moment.year + 1)


def floor(moment: datetime, grain: str) -> datetime:
    """The start of the grain's interval that holds the moment."""
    moment = moment.replace(minute=0, second=0, microsecond=0)
    if grain in ("day", "month", "year"):
        moment = moment.replace(hour=0)
    if grain in ("month", "year"):
        moment = moment.replace(day=1)
    if grain == "year":
        moment = moment.replace(month=1)
    return moment


def steps(since: datetime, until: datetime, grain: str) -> list[tuple[datetime, datetime]]:
    """The intervals of the grain that make up [since, until)."""
    out = []
    start = since
    while start < until:
        end = next_step(start, grain)
        out.append((start, min(end, until)))
        start = end
    return out


def is_covered(
    step: tuple[datetime, datetime], loaded: Iterable[tuple[datetime, datetime]]
) -> bool:
    """Whether the loaded intervals together cover the step."""
    reached = step[0]
    for start, end in sorted(loaded):
        if start > reached:
            break
        reached = max(reached, end)
        if reached >= step[1]:
            return True
    return reached >= step[1]


@dataclass
class IntervalModel:
    unique_id: str
    name: str
    grain: str
    begin: datetime | None
    loaded: list[tuple[datetime, datetime]] = field(default_factory=list)

    def missing(self, since: datetime, until: datetime) -> list[tuple[datetime, datetime]]:
        return [s for s in steps(since, until, self.grain) if not is_covered(s, self.loaded)]


def interval_model(node: dict) -> IntervalModel | None:
    """The selected node as an interval model, or None when it is not one."""
    config = node.get("config") or {}
    if node.get("resource_type") != "model" or config.get("materialized") != "incremental":
        return None
    if config.get("incremental_strategy") not in INTERVAL_STRATEGIES:
        return None
    grain = str(config.get("batch_size") or "day").lower()
    if grain not in GRAINS:
        raise SchedulerError(
            f"{node['unique_id']}: batch_size {config.get('batch_size')!r} is not a grain: set "
            f"it to one of {', '.join(GRAINS)}."
        )
    begin = config.get("begin")
    return IntervalModel(
        node["unique_id"], node["name"], grain, parse_instant(begin) if begin else None
    )


def window(
    models: list[IntervalModel], since: datetime | None, until: datetime | None, now: datetime
) -> tuple[datetime, datetime]:
    """[since, until): --since, else the earliest `begin`; --until, else the start of the
    current interval of the finest grain (only whole intervals are missing)."""
    if since is None:
        begins = [model.begin for model in models if model.begin is not None]
        if not begins:
            names = ", ".join(model.name for model in models)
            raise SchedulerError(
                f"{names}: no `begin` config to start from: pass --since YYYY-MM-DD."
            )
        since = min(begins)
    if until is None:
        until = min(floor(now, model.grain) for model in models)
    if since >= until:
        raise SchedulerError(
            f"--since {event_time(since)} is not before --until {event_time(until)}: "
            "pass an earlier --since or a later --until."
        )
    for model in models:
        for option, moment in (("--since", since), ("--until", until)):
            if floor(moment, model.grain) != moment:
                raise SchedulerError(
                    f"{model.name}: {option} {event_time(moment)} is inside one of the "
                    f"model's intervals (grain {model.grain}): pass the start of an interval."
                )
    return since, until


def missing_intervals(
    models: list[IntervalModel], since: datetime, until: datetime
) -> list[tuple[datetime, datetime]]:
    """Every interval missing from any model, oldest first, once."""
    return sorted({step for model in models for step in model.missing(since, until)})


def event_time(moment: datetime) -> str:
    """A UTC instant as dbt's --event-time-start / --event-time-end take it (click's DateTime
    formats, no offset: dbt reads it as UTC): the date at midnight, else date and time."""
    if moment == floor(moment, "day"):
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def span(start: datetime, end: datetime) -> str:
    """[start, end) for a person, in event_time's form."""
    return f"[{event_time(start)}, {event_time(end)})"


# -- run: dbt in this process ----------------------------------------------------------------


# What of dbt's own console output a command shows: everything (a person watching the
# catch-up), dbt's errors only (--quiet), or nothing (--json, and the command's own dbt
# invocations: parse, ls, the ledger). Callbacks see every event either way.
DBT_OUTPUT = {"all": [], "errors": ["--quiet"], "none": ["--log-level", "none"]}


class Dbt:
    """dbt invocations in this process over one parsed manifest."""

    def __init__(self, common: list[str], shown: str) -> None:
        from dbt.cli.main import dbtRunner

        self.runner = dbtRunner
        self.common = common
        self.shown = shown  # what the command's dbt runs show (DBT_OUTPUT)
        self.manifest: Any = None

    def invoke(
        self, args: list[str], callbacks: list[Callable] | None = None, shown: str = "none"
    ) -> Any:
        full = [*args, *self.common, *DBT_OUTPUT[shown]]
        return self.runner(manifest=self.manifest, callbacks=callbacks or []).invoke(full)

    def parse(self) -> None:
        result = self.invoke(["parse"])
        if not result.success:
            raise SchedulerError(f"dbt could not parse the project: {failure(result)}")
        self.manifest = result.result

    def selected(self, selection: str, resource_types: Iterable[str] = ("model",)) -> list[dict]:
        types = [option for kind in resource_types for option in ("--resource-type", kind)]
        result = self.invoke(["ls", "--select", selection, *types, "--output", "json"])
        if not result.success:
            raise SchedulerError(f"dbt ls --select {selection} failed: {failure(result)}")
        return [json.loads(line) for line in result.result or []]

    def read_ledger(self, model: IntervalModel) -> None:
        """The model's loaded intervals, from its table's commits (none without a table)."""
        captured: list[dict] = []

        def capture(event: Any) -> None:
            message = getattr(event.data, "msg", "")
            if event.info.name in ("JinjaLogDebug", "JinjaLogInfo") and message.startswith(
                LEDGER_PREFIX
            ):
                captured.append(json.loads(message.removeprefix(LEDGER_PREFIX)))

        arguments = json.dumps({"model": model.unique_id, "missing_ok": True})
        result = self.invoke(
            ["run-operation", "lakehouse_intervals", "--args", arguments], [capture]
        )
        if not result.success or not captured:
            raise SchedulerError(f"{model.name}: its ledger could not be read: {failure(result)}")
        model.loaded = [
            (parse_instant(piece["start"]), parse_instant(piece["end"]))
            for piece in captured[-1]["intervals"]
            if piece["kind"] == "loaded"
        ]


def failure(result: Any, separator: str = "; ") -> str:
    """The error of a failed dbt invocation: the exception, or each failing node's message."""
    if result.exception is not None:
        return str(result.exception)
    messages = [
        f"{node.node.unique_id}: {node.message}"
        for node in getattr(result.result, "results", None) or []
        if str(node.status) in {"error", "fail", "runtime error"}
    ]
    return separator.join(messages) or "unknown failure (see dbt's log)"


def plan(
    dbt: Dbt, selection: str, since: str | None, until: str | None
) -> tuple[list[IntervalModel], datetime, datetime]:
    """Parse once, select, check the window, read every selected interval model's ledger."""
    since_at, until_at = parse_moment("--since", since), parse_moment("--until", until)
    dbt.parse()
    nodes = dbt.selected(selection)
    if not nodes:
        raise SchedulerError(
            f"--select {selection} selects no model of this project: check the name "
            "(dbt ls --select ... lists what a selection holds)."
        )
    models = [model for model in map(interval_model, nodes) if model is not None]
    if not models:
        names = ", ".join(node["name"] for node in nodes)
        raise SchedulerError(
            f"--select {selection} holds no interval model ({names}): intervals belong to "
            "incremental models with incremental_strategy idempotent_merge or microbatch."
        )
    since_at, until_at = window(models, since_at, until_at, datetime.now(UTC))
    for model in models:
        dbt.read_ledger(model)
    return models, since_at, until_at


# -- the two commands -----------------------------------------------------------------------


def report(models: list[IntervalModel], since: datetime, until: datetime) -> dict[str, Any]:
    """What `intervals` prints: per model its loaded intervals (clipped to the window) and
    its missing ones."""
    out = {"since": iso(since), "until": iso(until), "models": []}
    for model in models:
        loaded = [
            (max(start, since), min(end, until))
            for start, end in model.loaded
            if start < until and end > since
        ]
        out["models"].append(
            {
                "model": model.name,
                "unique_id": model.unique_id,
                "grain": model.grain,
                "loaded": [[iso(s), iso(e)] for s, e in merge(loaded)],
                "missing": [[iso(s), iso(e)] for s, e in model.missing(since, until)],
            }
        )
    return out


def merge(pieces: list[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    """Adjacent or overlapping intervals as one."""
    out: list[tuple[datetime, datetime]] = []
    for start, end in sorted(pieces):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def report_lines(listing: dict[str, Any]) -> list[str]:
    """The listing for a person: per model, its loaded and its missing intervals, each as
    dbt's event-time flags take it (module docstring)."""

    def shown(start: str, end: str) -> str:
        return span(parse_instant(start), parse_instant(end))

    lines = [
        f"intervals in {shown(listing['since'], listing['until'])}, UTC, as "
        "--event-time-start / --event-time-end take them"
    ]
    for model in listing["models"]:
        lines.append(f"{model['model']} (grain {model['grain']})")
        for kind in ("loaded", "missing"):
            spans = model[kind]
            lines.append(f"  {kind}: {len(spans) or 'none'}")
            lines.extend(f"    {shown(start, end)}" for start, end in spans)
    return lines


def intervals_command(
    dbt: Dbt, selection: str, since: str | None, until: str | None, as_json: bool
) -> int:
    models, since_at, until_at = plan(dbt, selection, since, until)
    listing = report(models, since_at, until_at)
    if as_json:
        print(json.dumps(listing))
    else:
        print("\n".join(report_lines(listing)))
    return 0


def catchup_command(
    dbt: Dbt,
    selection: str,
    since: str | None,
    until: str | None,
    command: str,
    output: str,
) -> int:
    """Runs each missing interval, oldest first; stops at the first failure (module docstring)."""
    models, since_at, until_at = plan(dbt, selection, since, until)
    todo = missing_intervals(models, since_at, until_at)
    say = Progress(output, len(todo))
    if not todo:
        say.nothing(since_at, until_at)
        return 0
    started = time.monotonic()
    for number, (start, end) in enumerate(todo, 1):
        say.starting(number, start, end)
        flags = ["--event-time-start", event_time(start), "--event-time-end", event_time(end)]
        result = dbt.invoke([command, "--select", selection, *flags], shown=dbt.shown)
        if not result.success:
            say.failed(number, start, end, failure(result), time.monotonic() - started)
            return 1
        say.done(number, start, end, time.monotonic() - started)
    return 0


@dataclass
class Progress:
    """Progress for a person (text), for a program (JSON lines), or nothing but the failure."""

    output: str  # text | json | quiet
    total: int

    def emit(self, text: str, record: dict, error: bool = False) -> None:
        if self.output == "json":
            print(json.dumps(record), flush=True)
        elif self.output == "text" or error:
            print(
                f"lakehouse catchup: {text}", file=sys.stderr if error else sys.stdout, flush=True
            )

    def nothing(self, since: datetime, until: datetime) -> None:
        self.emit(
            f"nothing missing in {span(since, until)}: no run, nothing written",
            {"event": "nothing_missing", "since": iso(since), "until": iso(until)},
        )

    def starting(self, number: int, start: datetime, end: datetime) -> None:
        if self.output == "text":
            self.emit(f"interval {number} of {self.total} {span(start, end)}", {})

    def done(self, number: int, start: datetime, end: datetime, elapsed: float) -> None:
        self.emit(
            f"interval {number} of {self.total} {span(start, end)} loaded, {elapsed:.0f} s elapsed",
            {
                "event": "loaded",
                "interval": [iso(start), iso(end)],
                "number": number,
                "of": self.total,
                "elapsed_seconds": round(elapsed, 1),
            },
        )

    def failed(
        self, number: int, start: datetime, end: datetime, error: str, elapsed: float
    ) -> None:
        self.emit(
            f"interval {span(start, end)} failed ({number} of {self.total}); the "
            f"intervals after it were not run. {error} Fix the cause and run the same command "
            "again: it starts at this interval.",
            {
                "event": "failed",
                "interval": [iso(start), iso(end)],
                "number": number,
                "of": self.total,
                "elapsed_seconds": round(elapsed, 1),
                "error": error,
            },
            error=True,
        )
