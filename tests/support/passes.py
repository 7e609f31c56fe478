"""Which pass runs a test: `make test` runs the suite once per table format (--target local for
Delta, --target local_iceberg for Iceberg). A test whose outcome can depend on the format runs
in both. A test marked `@pytest.mark.format_independent` cannot (argument and interval
parsing, messages raised before any SQL, console output, dbt ls / compile / docs behaviour,
install checks) and runs in one pass only: the Delta pass, or the target its `run_in` names.
Both pytest trees (tests/ and dbt Labs' suite in tests/adapter) deselect it in the other pass."""

from __future__ import annotations

import pytest

# The pass that runs a format-independent test unless its marker names another.
FORMAT_INDEPENDENT_TARGET = "local"
MARKER = (
    "format_independent(run_in='local'): the outcome cannot depend on the table format; "
    "runs in one pass only (--target run_in)"
)


def runs_in(item: pytest.Item) -> str | None:
    """The one target a format-independent test runs in; None for a test of both formats."""
    marker = item.get_closest_marker("format_independent")
    if marker is None:
        return None
    return marker.kwargs.get("run_in", FORMAT_INDEPENDENT_TARGET)


def deselect_other_passes(config: pytest.Config, items: list[pytest.Item], target: str) -> None:
    """Deselect the format-independent tests that run in the other pass (counted by pytest)."""
    kept, deselected = [], []
    for item in items:
        elsewhere = runs_in(item) not in (None, target)
        (deselected if elsewhere else kept).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept
