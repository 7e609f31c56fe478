"""Write-audit-publish: the models staged for audit in this dbt invocation, and who read them.

Under `publish: audited`, `dbt build` writes a model's change where readers of the published
table cannot see it (an Iceberg branch, or a Delta view of the table with the change applied;
a first load's table is created empty first) and publishes it in `on-run-end`
(`lakehouse_publish_audited`) once every data test on the model passed. Between the two, the
model's tests and the downstream models of the same invocation must read the staged state:
the adapter's Relation renders a staged relation as its staged name (`LakehouseRelation.render`,
relations.py), so `ref()`, generic and singular tests all see it without overriding `ref`.

No published row may be derived from an unpublished change, so what the node rendering a
staged relation does with it decides how it renders (`reading`):

- a data test (or a hook) reads the staged state;
- an incremental model reads it and is recorded as its reader: the lakehouse materialization
  then stages an idempotent_merge model with it (published with it, or held back with it) and
  refuses any other strategy before writing;
- a view stores a query, not rows: its definition names the published table (and the
  staged model itself, in dbt's result line, names its own table);
- a snapshot records the history analysts could read: it reads the published table, so it
  never records a version that is then held back; the versions this build publishes reach it
  at its next run, with their own timestamps (the timestamp strategy's valid_from);
- any other model (a table, ...) would write rows built from the staged change into a table
  of its own at once, or from yesterday's rows without a word: refused, before it writes
  anything.

The registry lives in the process (dbt runs an invocation's nodes in one process, and its
on-run-end hooks in the same one) and is keyed by dbt's invocation id, so an invocation that
ended without its on-run-end (killed, or an error in dbtRunner) never redirects the next one.

dbt's `selected_resources` (which the staging decision reads: are the model's tests in this
build?) is set by dbt's node selector, which `dbt retry` does not use: its graph queue is built
from the previous run's failures, and `selected_resources` stays empty in a process of its own
(or holds an earlier invocation's selection in-process). `record_every_selection` makes every
graph queue set it to the nodes it runs, which is what the selector sets for any other command.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from dbt_common.events.contextvars import get_node_info
from dbt_common.exceptions import CompilationError
from dbt_common.invocation import get_invocation_id

from dbt import selected_resources
from dbt.graph.queue import GraphQueue

_LOCK = threading.Lock()
# invocation id -> {(schema, identifier) lowercased: the stage's details}, in staging order
_STAGED: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
# invocation id -> {reader's unique id: the staged models it read}
_READS: dict[str, dict[str, set[str]]] = {}


def key(schema: str | None, identifier: str | None) -> tuple[str, str]:
    return ((schema or "").lower(), (identifier or "").lower())


def stage(schema: str, identifier: str, details: dict[str, Any]) -> None:
    """Record a model staged for audit; details['staged'] is the SQL name readers of the staged
    state use (a branch identifier, a temporary view, a staging table), details['model'] the
    model's unique id."""
    with _LOCK:
        _STAGED.setdefault(get_invocation_id(), {})[key(schema, identifier)] = dict(details)


def staged_name(schema: str | None, identifier: str | None) -> str | None:
    """The name the node being run reads the relation by: its staged name when it is staged in
    this invocation (and the node may read it, `reading`), else None (the relation's own name).
    Without a stage of this invocation (a lookup of one key, atomic in CPython) no lock is
    taken: a stage left by an invocation killed before its on-run-end costs later renders
    nothing."""
    if not _STAGED.get(get_invocation_id()):
        return None
    with _LOCK:
        entry = _STAGED.get(get_invocation_id(), {}).get(key(schema, identifier))
    if entry is None:
        return None
    return entry["staged"] if reading(entry, get_node_info()) else None


def reading(entry: dict[str, Any], node: dict[str, Any]) -> bool:
    """Whether the node being run (dbt's node_info of it) reads a staged relation's staged state
    (True) or its published table (False, a view); raises for a node that would write rows
    built from it into a table that cannot wait for its audit. An incremental model is
    recorded as its reader."""
    resource_type = str(node.get("resource_type") or "")
    materialized = str(node.get("materialized") or "")
    if resource_type not in ("model", "snapshot"):
        return True  # a data test, a hook
    reader = str(node.get("unique_id") or "")
    if resource_type == "snapshot" or materialized == "view" or reader == entry["model"]:
        return False  # published history; a view's definition; the model's own result line
    if resource_type == "model" and materialized == "incremental":
        with _LOCK:
            _READS.setdefault(get_invocation_id(), {}).setdefault(reader, set()).add(entry["model"])
        return True
    raise CompilationError(unstageable_reader(reader, f"{materialized} {resource_type}", entry))


def unstageable_reader(reader: str, kind: str, entry: dict[str, Any]) -> str:
    """The refusal of a node that reads a staged model but cannot be staged with it."""
    return (
        f"{reader} reads {entry['model']}, whose change is staged for audit in this build "
        f"and not published yet, and a {kind} cannot wait for that audit: it would publish "
        "rows built from a change that may never be published. Nothing was written. Build it "
        f"in a later invocation (dbt build --exclude {reader.split('.')[-1]}, then dbt build "
        f"--select {reader.split('.')[-1]}), make it an incremental model with "
        "incremental_strategy='idempotent_merge' (it is then staged and published with what "
        f"it reads), or set publish: 'direct' on {entry['model'].split('.')[-1]}."
    )


def refuse_staged_reads(reader: str, kind: str) -> None:
    """Raise when the node `reader`, a `kind` that cannot be staged, read a staged model."""
    read = stages_read_by(reader)
    if read:
        raise CompilationError(unstageable_reader(reader, kind, {"model": read[0]}))


def stages_read_by(reader: str) -> list[str]:
    """The staged models of this invocation the node `reader` read, sorted."""
    with _LOCK:
        return sorted(_READS.get(get_invocation_id(), {}).get(reader, ()))


def stages() -> list[dict[str, Any]]:
    """The models staged in this invocation, in staging order (upstream first)."""
    with _LOCK:
        return [dict(entry) for entry in _STAGED.get(get_invocation_id(), {}).values()]


def end(schema: str, identifier: str) -> None:
    """Forget a stage once it is published or discarded: the relation renders as itself again."""
    with _LOCK:
        invocation = get_invocation_id()
        _STAGED.get(invocation, {}).pop(key(schema, identifier), None)
        if not _STAGED.get(invocation, True):
            del _STAGED[invocation]
            _READS.pop(invocation, None)


def _recording(init: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(init)
    def init_and_record(
        self: GraphQueue, graph: Any, manifest: Any, selected: Any, *args: Any, **kwargs: Any
    ) -> None:
        init(self, graph, manifest, selected, *args, **kwargs)
        selected_resources.set_selected_resources(set(selected))

    init_and_record.records_selection = True  # type: ignore[attr-defined]
    return init_and_record


def record_every_selection() -> None:
    """Every graph queue sets dbt's `selected_resources` to the nodes it runs (once per process;
    see the module's docstring: `dbt retry` leaves it unset)."""
    if not getattr(GraphQueue.__init__, "records_selection", False):
        GraphQueue.__init__ = _recording(GraphQueue.__init__)  # type: ignore[method-assign]
