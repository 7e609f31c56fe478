"""The interval ledger: which intervals of a model its table holds, in a table of its own.

Every run of idempotent_merge (and so of microbatch) that ends well records one row in
``<ledger_schema>.interval_ledger`` (the profile's ``ledger_schema``, default ``lakehouse``):
the table, the model, the interval [start, end) in UTC, dbt's invocation id, the table's version
after the run and the kind of load: ``create`` (first load, full refresh: the table starts
over), ``merge`` (a MERGE committed) or ``unchanged`` (nothing to change: the interval is loaded
all the same). The rows are written after the data commits (for write-audit-publish, after the
publish), all of an invocation's in one statement as the invocation ends (a commit of the
ledger table per model run cost 0.3-0.5 s each), so a run killed in between leaves its
intervals missing with their rows in place: the next run finds nothing to change and records
them. No interval is ever listed as loaded without its rows.

Why a table, and not the table's own commit history (the first design, still written as each
commit's metadata): history is what routine maintenance removes. Iceberg's expire_snapshots and
Delta's log cleanup dropped the commits carrying the entries (an operator's
`expire_snapshots(retain_last => 1)` made loaded days "missing", and `lakehouse catchup` reran
them); compaction commits carry no entry, and a run with nothing to change made no commit at
all. Rows of a table survive all of that. Appends of several writers never conflict on either
format. The one atomicity the table cannot give, data and ledger in one commit, is not needed:
the strategy's runs are idempotent, so a missing row costs one no-op rerun, never a wrong row.

The listing replays a table's rows in the order they were recorded: a ``create`` starts the
table over, and its row is ordered at the moment the create began, not when the run recorded
it (two first loads at once: the other run merged into the created table and may record
first; under Airflow the create's row, recorded later, hid that run's day); every point in
time is attributed to the newest row whose interval covers it, and shown with the version and
invocation of the newest row that changed it. Adjacent pieces last changed by the same commit
are shown as one interval; the uncovered pieces between ``begin`` (or the first interval) and
the end of the last interval are gaps.

Each invocation's rows are one commit, so one small file: after a year of daily runs without
`lakehouse maintain`, the listing read 1,005 of them (3.7 s on Delta, 5.3 s on Iceberg at
1,000 intervals). The writer therefore compacts the ledger table itself once it holds
COMPACT_AT files or more (Delta OPTIMIZE, Iceberg rewrite_data_files): a commit that rewrites
files, not rows, which another writer's append never conflicts with; a compaction that meets
another's compaction leaves it to the next write. Counting the files is a metadata query of
0.3 to 0.6 s, a sixth of a small model's whole invocation, so one write in CHECK_ONE_IN, drawn
at random, counts them: the table is compacted at about COMPACT_AT + CHECK_ONE_IN files.

The same write keeps the ledger's own history bounded, for users who never run `lakehouse
maintain` (which maintains the ledger with any selection): after the Iceberg year soak, the
ledger's superseded files and 3,660 metadata files held 139 MB for 8 current files. With each
compaction, Delta's VACUUM (its own retention, 7 days by default: the files a reader of a
recent version needs stay) and, on Iceberg, expire_snapshots older than KEEP_HISTORY_HOURS,
and the table property that deletes all but METADATA_KEPT previous metadata files at each
commit. The rows carry everything the listing needs, so the history is only for time travel.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from dbt.adapters.lakehouse.session.bindings import sql_literal
from dbt.adapters.lakehouse.strategy import conflicts
from dbt.adapters.lakehouse.strategy.interval import parse_instant

TABLE = "interval_ledger"
COLUMNS = (
    ("relation", "string"),
    ("model", "string"),
    ("load", "string"),
    ("interval_start", "timestamp"),
    ("interval_end", "timestamp"),
    ("invocation_id", "string"),
    ("version", "string"),
    ("recorded_at", "timestamp"),
)
LOADS = ("create", "merge", "unchanged")
#: the ledger table's data files at which a write compacts it (module docstring)
COMPACT_AT = 32
#: one ledger write in this many (at random) counts the table's files (module docstring)
CHECK_ONE_IN = 8
#: the ledger's own history kept by the compacting write (Iceberg; Delta's VACUUM keeps the
#: table's deleted-file retention, 7 days by default), and its previous metadata files kept
KEEP_HISTORY_HOURS = 168
METADATA_KEPT = 20


@dataclass(frozen=True)
class Record:
    """One row of the ledger table, as the listing reads it."""

    load: str
    start: datetime | None
    end: datetime | None
    invocation_id: str
    version: str | None


@dataclass(frozen=True)
class Entry:
    version: str | None
    invocation_id: str
    start: datetime
    end: datetime


def table_name(schema: str) -> str:
    return f"{schema}.{TABLE}"


def missing(message: str) -> bool:
    """Whether a statement on the ledger table failed because the table, or its schema, does
    not exist yet (Spark's error class for both, on either format)."""
    return "[TABLE_OR_VIEW_NOT_FOUND]" in message or "[SCHEMA_NOT_FOUND]" in message


def create_sql(schema: str, table_format: str) -> str:
    columns = ", ".join(f"{name} {kind}" for name, kind in COLUMNS)
    return f"create table if not exists {table_name(schema)} ({columns}) using {table_format}"


@dataclass(frozen=True)
class Row:
    """One run's row, before it is written: the table, the model, the kind of load, the
    interval (none without one), the invocation and the table's version after the run."""

    relation: str
    model: str
    load: str
    start: datetime | None
    end: datetime | None
    invocation_id: str
    version: str | None
    recorded_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __post_init__(self) -> None:
        if self.load not in LOADS:
            raise ValueError(f"ledger load {self.load!r} is not one of {', '.join(LOADS)}")


def insert_sql(schema: str, rows: Sequence[Row]) -> str:
    """The rows of an invocation's runs, in one statement (recorded_at: when each run recorded
    it, so the replay keeps their order)."""
    values = []
    for row in rows:
        fields = (row.relation, row.model, row.load, row.start, row.end, row.invocation_id)
        literals = ", ".join(
            sql_literal(value) for value in (*fields, row.version, row.recorded_at)
        )
        values.append(f"({literals})")
    return f"insert into {table_name(schema)} values {', '.join(values)}"


def data_files(run: Callable[[str], list[dict[str, Any]]], table: str, table_format: str) -> int:
    """The data files of the table's current version (run: a statement's rows as dicts)."""
    if table_format == "iceberg":
        return int(run(f"select count(*) as files from {table}.files")[0]["files"])
    return int(run(f"describe detail {table}")[0]["numFiles"])


def compact_if_due(
    run: Callable[[str], list[dict[str, Any]]],
    schema: str,
    table_format: str,
    draw: Callable[[int], int] = random.randrange,
) -> bool:
    """After a write, on one write in CHECK_ONE_IN (draw(CHECK_ONE_IN) == 0): the ledger table
    compacted when it holds COMPACT_AT files or more (run: a statement's rows as dicts). A
    compaction another writer's compaction beat is left to the next write. Whether it
    compacted."""
    if draw(CHECK_ONE_IN) != 0:
        return False
    table = table_name(schema)
    if data_files(run, table, table_format) < COMPACT_AT:
        return False
    try:
        for statement in upkeep_sql(table, table_format, datetime.now(UTC)):
            run(statement)
    except Exception as error:  # noqa: BLE001 (only a conflict is left to the next write)
        if conflicts.conflict(str(error)) is None:
            raise
        return False
    return True


def upkeep_sql(table: str, table_format: str, now: datetime) -> list[str]:
    """The compacting write's statements: the compaction, then the history it bounds (module
    docstring)."""
    if table_format != "iceberg":
        return [f"optimize {table}", f"vacuum {table}"]
    cutoff = (now - timedelta(hours=KEEP_HISTORY_HOURS)).strftime("%Y-%m-%d %H:%M:%S.%f")
    return [
        f"call spark_catalog.system.rewrite_data_files(table => '{table}', "
        "options => map('min-input-files', '2'))",
        f"alter table {table} set tblproperties ("
        "'write.metadata.delete-after-commit.enabled' = 'true', "
        f"'write.metadata.previous-versions-max' = '{METADATA_KEPT}')",
        f"call spark_catalog.system.expire_snapshots(table => '{table}', "
        f"older_than => timestamp '{cutoff}', retain_last => 1)",
    ]


def select_sql(schema: str, relation: str) -> str:
    return (
        "select load, interval_start, interval_end, invocation_id, version"
        f" from {table_name(schema)} where relation = {sql_literal(relation)}"
        " order by recorded_at"
    )


def records(rows: Iterable[Sequence[Any]]) -> list[Record]:
    """The rows of select_sql as records (timestamps read as UTC, as the session keeps them)."""
    return [
        Record(
            str(load),
            parse_instant(start) if start is not None else None,
            parse_instant(end) if end is not None else None,
            str(invocation_id),
            None if version is None else str(version),
        )
        for load, start, end, invocation_id, version in rows
    ]


def read_entries(rows: list[Record]) -> list[Entry]:
    """The intervals recorded since the table last started over, oldest first; a row that
    changed nothing stands for the newest earlier row whose interval holds it (the commit
    that last changed it), if any."""
    entries: list[Entry] = []
    for row in rows:
        if row.load == "create":
            entries = []
        if row.start is None or row.end is None or not row.start < row.end:
            continue
        entry = Entry(row.version, row.invocation_id, row.start, row.end)
        if row.load == "unchanged":
            covering = [e for e in entries if e.start <= row.start and row.end <= e.end]
            if covering:  # the run that last changed it
                entry = Entry(covering[-1].version, covering[-1].invocation_id, row.start, row.end)
        entries.append(entry)
    return entries


def listing(rows: list[Record], begin: object = None) -> list[dict]:
    """Loaded intervals and gaps, in time order, as dicts with kind ('loaded' or 'gap'),
    start, end (ISO-8601 UTC) and, for loaded intervals, version and invocation_id."""
    entries = read_entries(rows)
    if not entries:
        return []
    cuts = sorted({e.start for e in entries} | {e.end for e in entries})
    first = parse_instant(begin) if begin is not None else None
    if first is not None and first < cuts[0]:
        cuts.insert(0, first)
    pieces: list[dict] = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        covering = [e for e in entries if e.start <= start and end <= e.end]
        newest = covering[-1] if covering else None
        piece = {
            "kind": "loaded" if newest else "gap",
            "start": start,
            "end": end,
            "version": newest.version if newest else None,
            "invocation_id": newest.invocation_id if newest else None,
        }
        previous = pieces[-1] if pieces else None
        same = ("kind", "version", "invocation_id")
        if previous and previous["end"] == start and all(previous[k] == piece[k] for k in same):
            previous["end"] = end
        else:
            pieces.append(piece)
    return [{**p, "start": iso(p["start"]), "end": iso(p["end"])} for p in pieces]


def lines(relation: str, pieces: list[dict], version_label: str = "version") -> list[str]:
    """The listing as text, one interval a line (version_label: Delta version, Iceberg snapshot)."""
    if not pieces:
        return [f"{relation}: no interval loaded (the interval ledger holds none)"]
    out = [f"{relation}: intervals [start, end), the commit that last changed each, and gaps"]
    for p in pieces:
        span = f"[{p['start']}, {p['end']})"
        if p["kind"] == "gap":
            out.append(f"  gap     {span}")
        else:
            out.append(
                f"  loaded  {span}  {version_label} {p['version']}  invocation {p['invocation_id']}"
            )
    return out


def iso(moment: datetime) -> str:
    """A UTC instant as the ledger listing and the scheduler commands write it."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
