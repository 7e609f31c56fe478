"""The Iceberg branches write-audit-publish stages on: their names, and which are leftovers.

A model's change is staged on Iceberg in a branch of its table named
`dbt_audit_<when it was staged, UTC>_<dbt invocation id>`. The next audited or staged run of the
model discards another invocation's branch as the leftover of a killed build, but only once
it is older than LEFTOVER_AFTER: a younger one may be the stage of a build running now (a
scheduler's runs of one pipeline at once), which discarding would break under it. Seen under
Airflow on Iceberg with 3 runs at once: one run dropped another's live branch and tried to
expire the snapshot that run had just published (`Cannot expire ... Still referenced by refs:
[main]`). A branch named without the time (`dbt_audit_<invocation id>`, before this naming) is a
leftover at once, as before. `lakehouse maintain` does not touch audit branches.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

PREFIX = "dbt_audit_"
#: how old another invocation's audit branch must be before a run discards it as a leftover
LEFTOVER_AFTER = timedelta(hours=12)
_STAMP = "%Y%m%dt%H%M%Sz"
_STAMPED = re.compile(rf"{PREFIX}(\d{{8}}t\d{{6}}z)_")


def _invocation(invocation_id: str) -> str:
    """The invocation id as a branch name ends with (lowercase: a plain SQL identifier)."""
    return invocation_id.replace("-", "_").lower()


def branch_name(invocation_id: str, now: datetime) -> str:
    """The audit branch of a change staged now by this invocation."""
    stamp = now.astimezone(UTC).strftime(_STAMP)
    return f"{PREFIX}{stamp}_{_invocation(invocation_id)}"


def leftover(branch: str, invocation_id: str, now: datetime) -> bool:
    """Whether a branch of a table is the leftover of another, killed build: an audit branch
    of another invocation, staged LEFTOVER_AFTER ago or more (or named before the time was in
    the name)."""
    if not branch.startswith(PREFIX):
        return False
    if branch.endswith(_invocation(invocation_id)):
        return False
    stamped = _STAMPED.match(branch)
    if stamped is None:
        return True
    staged = datetime.strptime(stamped.group(1), _STAMP).replace(tzinfo=UTC)
    return now - staged >= LEFTOVER_AFTER
