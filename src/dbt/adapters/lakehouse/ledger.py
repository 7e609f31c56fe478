"""The interval ledger: which intervals a model's table holds, read from the table's own history.

Every CREATE and MERGE of idempotent_merge (and so of microbatch) carries an entry in the
format's commit metadata (Delta ``userMetadata``, Iceberg snapshot summary ``lakehouse.ledger``):
the model, the interval [start, end) in UTC, dbt's invocation id and the kind of load. The
listing replays those entries in commit order: a ``create`` (first load, full refresh) starts
the table over; every point in time is attributed to the newest commit whose interval covers it.
Adjacent pieces last changed by the same commit are shown as one interval; the uncovered
pieces between ``begin`` (or the first interval) and the end of the last interval are gaps.
A run that changed nothing committed nothing, so an interval keeps the commit that last changed
it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from dbt.adapters.lakehouse.interval import parse_instant


@dataclass(frozen=True)
class Entry:
    version: str
    invocation_id: str
    start: datetime
    end: datetime


def read_entries(model_id: str, commits: list[tuple[str, str | None]]) -> list[Entry]:
    """The model's interval entries since its table last started over, oldest first.

    commits: (version, commit metadata or None) of every commit, oldest first.
    """
    entries: list[Entry] = []
    for version, metadata in commits:
        try:
            entry = json.loads(metadata) if metadata else None
        except ValueError:  # another writer's userMetadata
            continue
        if not isinstance(entry, dict) or entry.get("model") != model_id:
            continue
        if entry.get("load") == "create":
            entries = []
        start = parse_instant(entry.get("interval_start") or "")
        end = parse_instant(entry.get("interval_end") or "")
        if start is not None and end is not None and start < end:
            entries.append(Entry(version, str(entry.get("invocation_id")), start, end))
    return entries


def listing(
    model_id: str, commits: list[tuple[str, str | None]], begin: object = None
) -> list[dict]:
    """Loaded intervals and gaps, in time order, as dicts with kind ('loaded' or 'gap'),
    start, end (ISO-8601 UTC) and, for loaded intervals, version and invocation_id."""
    entries = read_entries(model_id, commits)
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
        return [f"{relation}: no interval loaded (no commit carries a ledger entry)"]
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
