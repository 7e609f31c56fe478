"""Write-audit-publish: the models staged for audit in this dbt invocation.

Under `publish: audited`, `dbt build` writes a model's change where readers of the published
table cannot see it (an Iceberg branch, a Delta view of the table with the change applied, or
a first load's `<model>__dbt_audit` table) and publishes it in `on-run-end`
(`lakehouse_publish_audited`) once every data test on the model passed. Between the two, the
model's tests and the downstream models of the same invocation must read the staged state:
the adapter's Relation renders a staged relation as its staged name (`LakehouseRelation.render`,
relations.py), so `ref()`, generic and singular tests all see it without overriding `ref`.

The registry lives in the process (dbt runs an invocation's nodes in one process, and its
on-run-end hooks in the same one) and is keyed by dbt's invocation id, so an invocation that
ended without its on-run-end (killed, or an error in dbtRunner) never redirects the next one.
"""

from __future__ import annotations

import threading
from typing import Any

from dbt_common.invocation import get_invocation_id

_LOCK = threading.Lock()
# invocation id -> {(schema, identifier) lowercased: the stage's details}, in staging order
_STAGED: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}


def key(schema: str | None, identifier: str | None) -> tuple[str, str]:
    return ((schema or "").lower(), (identifier or "").lower())


def stage(schema: str, identifier: str, details: dict[str, Any]) -> None:
    """Record a model staged for audit; details['staged'] is the SQL name readers of the staged
    state use (a branch identifier, a temporary view, a staging table)."""
    with _LOCK:
        _STAGED.setdefault(get_invocation_id(), {})[key(schema, identifier)] = dict(details)


def staged_name(schema: str | None, identifier: str | None) -> str | None:
    """The staged name of a relation staged in this invocation, or None. Without a stage of this
    invocation (a lookup of one key, atomic in CPython) no lock is taken: a stage left by an
    invocation killed before its on-run-end costs later renders nothing."""
    if not _STAGED.get(get_invocation_id()):
        return None
    with _LOCK:
        entry = _STAGED.get(get_invocation_id(), {}).get(key(schema, identifier))
    return None if entry is None else entry["staged"]


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
