"""A commit the table format refused because another writer committed first, absorbed.

Delta's and Iceberg's commits are optimistic: a MERGE reads the table at one version and
commits only if no commit since then touched what it read (Delta's conflict checker, Iceberg's
serializable validation of a copy-on-write MERGE) or the table's metadata. Two scheduler tasks
of one model (a parallel backfill), or a run and a compaction (`lakehouse maintain`), meet
there, and the loser failed with the format's error and "succeeds on rerun": a failed task
per conflict, a retry burnt, a page.

idempotent_merge can absorb its own conflict, because planning again is what a rerun does:
the change set is computed again against the table as it now is (what the other writer
committed included), and the MERGE applies what is still to apply, under the same version
and batch guards; if nothing is left, nothing is committed. So the strategy plans and merges
again, up to ATTEMPTS times, after a short randomized wait (two writers that met once should
not meet again at the same moment), and says so in its log line. Any other error is raised at
once: only the errors below mean "another writer committed first".
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

ATTEMPTS = 5

#: What the formats raise for a commit another writer beat, as it appears in the error text,
#: and the name the log gives it: Delta's error classes (a MERGE meeting a compaction is
#: DELTA_CONCURRENT_APPEND: OPTIMIZE adds files), Iceberg's lost metadata swap and its
#: validations of a copy-on-write commit (the text: a ValidationException is raised for
#: other reasons too).
CONFLICTS = (
    ("DELTA_CONCURRENT_APPEND", "DELTA_CONCURRENT_APPEND"),
    ("DELTA_CONCURRENT_DELETE_READ", "DELTA_CONCURRENT_DELETE_READ"),
    ("DELTA_CONCURRENT_DELETE_DELETE", "DELTA_CONCURRENT_DELETE_DELETE"),
    ("DELTA_CONCURRENT_TRANSACTION", "DELTA_CONCURRENT_TRANSACTION"),
    ("DELTA_CONCURRENT_WRITE", "DELTA_CONCURRENT_WRITE"),
    ("DELTA_METADATA_CHANGED", "DELTA_METADATA_CHANGED"),
    ("DELTA_PROTOCOL_CHANGED", "DELTA_PROTOCOL_CHANGED"),
    ("ConcurrentAppendException", "ConcurrentAppendException"),
    ("ConcurrentDeleteReadException", "ConcurrentDeleteReadException"),
    ("ConcurrentDeleteDeleteException", "ConcurrentDeleteDeleteException"),
    ("MetadataChangedException", "MetadataChangedException"),
    ("ProtocolChangedException", "ProtocolChangedException"),
    ("org.apache.iceberg.exceptions.CommitFailedException", "CommitFailedException"),
    ("Found conflicting files", "ValidationException"),
    ("Missing required files to delete", "ValidationException"),
    ("Found new conflicting delete files", "ValidationException"),
    ("Cannot commit rewrite because of a ValidationException", "ValidationException"),
)


#: Iceberg's fast_forward when main moved since the branch was made (write-audit-publish)
NOT_AN_ANCESTOR = "is not an ancestor of"


def publish_conflict(message: str) -> str | None:
    """The name of what refused an audited publish because another writer committed since the
    stage (a commit conflict, or Iceberg's fast-forward onto a main that moved), or None."""
    if NOT_AN_ANCESTOR in message and "fast-forward" in message:
        return "main moved"
    return conflict(message)


def conflict(message: str) -> str | None:
    """The name of the conflict an error's text reports, or None when the error is anything
    else."""
    for needle, name in CONFLICTS:
        if needle in message:
            return name
    return None


def pause(attempt: int) -> float:
    """Seconds to wait before attempt + 1: a random share of a second per attempt made."""
    return random.uniform(0.2, 1.0) * attempt


def retrying(work: Callable[[], T]) -> T:
    """work(), done again (up to ATTEMPTS times, after pause()) while its commit is one another
    writer beat: for a commit that is whole in one statement and planned from the table as it
    is when the statement runs (a maintenance command, a seed's overwrite). Any other error is
    raised at once."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return work()
        except Exception as error:  # noqa: BLE001 (only a conflict is retried)
            if conflict(str(error)) is None or attempt == ATTEMPTS:
                raise
            time.sleep(pause(attempt))
    raise AssertionError("unreachable: the last attempt returns or raises")


def attempt_line(relation: str, attempt: int, name: str) -> str:
    return (
        f"idempotent_merge {relation}: attempt {attempt} of {ATTEMPTS} met a concurrent commit "
        f"({name}); planning again against the table as it is now"
    )


def committed_note(attempt: int) -> str:
    """What the model's log line adds when a later attempt committed."""
    return f"committed on attempt {attempt} of {ATTEMPTS} after a concurrent commit"


def gave_up(relation: str, name: str, message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else name
    return (
        f"idempotent_merge {relation}: another writer committed first on each of {ATTEMPTS} "
        f"attempts ({name}: {first}); nothing of this run was committed. Run the interval "
        "again once the other writers are done: it applies what is still missing, once."
    )
