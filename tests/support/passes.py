"""Which pass runs a test: `make test` runs the suite once per table format (--target local for
Delta, --target local_iceberg for Iceberg). A test whose outcome can depend on the format runs
in both. A test marked `@pytest.mark.format_independent` cannot (argument and interval
parsing, messages raised before any SQL, console output, dbt ls / compile / docs behaviour,
install checks) and runs in one pass only: the Delta pass, or the target its `run_in` names.
A long test whose outcome can depend on the format but whose format-dependent part another test
of both passes already proves is marked `@pytest.mark.one_pass_outside_soak(run_in=...)`: `make
test` runs it in that pass only, `make soak` (SOAK_RUNS set) in both. Both pytest trees (tests/
and dbt Labs' suite in tests/adapter) deselect such a test in the other pass."""

from __future__ import annotations

import os

import pytest

# `make soak` (SOAK_RUNS set): the fault scenarios at length, and the tests `make test` runs in
# one pass only or not at all.
SOAK = bool(os.environ.get("SOAK_RUNS"))
# The pass that runs a format-independent test unless its marker names another.
FORMAT_INDEPENDENT_TARGET = "local"
MARKER = (
    "format_independent(run_in='local'): the outcome cannot depend on the table format; "
    "runs in one pass only (--target run_in)"
)
SOAK_MARKER = (
    "one_pass_outside_soak(run_in=...): the outcome can depend on the format; make test runs "
    "it in the run_in pass only, make soak (SOAK_RUNS) in both"
)


def runs_in(item: pytest.Item) -> str | None:
    """The one target a test runs in (format_independent; one_pass_outside_soak outside
    `make soak`); None for a test of both formats."""
    marker = item.get_closest_marker("format_independent")
    if marker is not None:
        return marker.kwargs.get("run_in", FORMAT_INDEPENDENT_TARGET)
    marker = item.get_closest_marker("one_pass_outside_soak")
    if marker is not None and not SOAK:
        return marker.kwargs["run_in"]
    return None


def deselect_other_passes(config: pytest.Config, items: list[pytest.Item], target: str) -> None:
    """Deselect the format-independent tests that run in the other pass (counted by pytest)."""
    kept, deselected = [], []
    for item in items:
        elsewhere = runs_in(item) not in (None, target)
        (deselected if elsewhere else kept).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept
