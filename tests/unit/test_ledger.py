"""The interval ledger's replay (src/dbt/adapters/lakehouse/tables/ledger.py), without Spark: rows of
the ledger table, in the order they were recorded, become loaded intervals and gaps."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dbt.adapters.lakehouse.tables import ledger
from dbt.adapters.lakehouse.tables.ledger import Record


def day(n: int) -> datetime:
    return datetime(2026, 11, n, tzinfo=UTC)


def test_a_run_that_changed_nothing_counts_and_keeps_the_commit_that_changed_it():
    rows = [
        Record("create", day(1), day(2), "inv-1", "0"),
        Record("merge", day(3), day(4), "inv-2", "1"),
        Record("unchanged", day(3), day(4), "inv-3", None),
        # a day no run had changed, recorded as loaded by a run with nothing to change
        Record("unchanged", day(5), day(6), "inv-4", None),
    ]
    assert ledger.listing(rows, begin="2026-10-31") == [
        {
            "kind": "gap",
            "start": "2026-10-31T00:00:00Z",
            "end": "2026-11-01T00:00:00Z",
            "version": None,
            "invocation_id": None,
        },
        {
            "kind": "loaded",
            "start": "2026-11-01T00:00:00Z",
            "end": "2026-11-02T00:00:00Z",
            "version": "0",
            "invocation_id": "inv-1",
        },
        {
            "kind": "gap",
            "start": "2026-11-02T00:00:00Z",
            "end": "2026-11-03T00:00:00Z",
            "version": None,
            "invocation_id": None,
        },
        {
            "kind": "loaded",
            "start": "2026-11-03T00:00:00Z",
            "end": "2026-11-04T00:00:00Z",
            "version": "1",
            "invocation_id": "inv-2",
        },
        {
            "kind": "gap",
            "start": "2026-11-04T00:00:00Z",
            "end": "2026-11-05T00:00:00Z",
            "version": None,
            "invocation_id": None,
        },
        {
            "kind": "loaded",
            "start": "2026-11-05T00:00:00Z",
            "end": "2026-11-06T00:00:00Z",
            "version": None,
            "invocation_id": "inv-4",
        },
    ]


def test_a_create_starts_the_table_over_and_a_run_without_an_interval_lists_nothing():
    rows = [
        Record("create", day(1), day(2), "inv-1", "0"),
        Record("merge", day(2), day(3), "inv-2", "1"),
        # --full-refresh over [1, 3): the table starts over with this one commit
        Record("create", day(1), day(3), "inv-3", "2"),
        Record("merge", None, None, "inv-4", "3"),
    ]
    assert ledger.listing(rows) == [
        {
            "kind": "loaded",
            "start": "2026-11-01T00:00:00Z",
            "end": "2026-11-03T00:00:00Z",
            "version": "2",
            "invocation_id": "inv-3",
        },
    ]
    assert ledger.listing([Record("create", None, None, "inv-1", "0")]) == []


def test_the_rows_sql_writes_and_reads_are_literals_of_their_types():
    at = datetime(2026, 11, 4, 6, 30, 1, 250, tzinfo=UTC)
    rows = [
        ledger.Row("analytics.orders", "model.p.orders", "merge", day(3), day(4), "inv'1", "7", at),
        ledger.Row("analytics.days", "model.p.days", "create", None, None, "inv'1", None, at),
    ]
    assert ledger.insert_sql("lakehouse", rows) == (
        "insert into lakehouse.interval_ledger values ('analytics.orders', 'model.p.orders', "
        "'merge', TIMESTAMP'2026-11-03 00:00:00+00:00', TIMESTAMP'2026-11-04 00:00:00+00:00', "
        "concat('inv', chr(39), '1'), '7', TIMESTAMP'2026-11-04 06:30:01.000250+00:00'), "
        "('analytics.days', 'model.p.days', 'create', NULL, NULL, concat('inv', chr(39), '1'), "
        "NULL, TIMESTAMP'2026-11-04 06:30:01.000250+00:00')"
    )
    assert ledger.select_sql("lakehouse", "analytics.orders") == (
        "select load, interval_start, interval_end, invocation_id, version from "
        "lakehouse.interval_ledger where relation = 'analytics.orders' order by recorded_at"
    )
    with pytest.raises(ValueError, match="ledger load 'loaded' is not one of"):
        ledger.Row("a.b", "m", "loaded", None, None, "i", None)


def test_the_compacting_write_bounds_the_ledgers_own_history():
    now = datetime(2026, 12, 6, 9, 30, tzinfo=UTC)
    table = "lakehouse.interval_ledger"
    assert ledger.upkeep_sql(table, "delta", now) == [
        "optimize lakehouse.interval_ledger",
        "vacuum lakehouse.interval_ledger",
    ]
    assert ledger.upkeep_sql(table, "iceberg", now) == [
        "call spark_catalog.system.rewrite_data_files(table => 'lakehouse.interval_ledger', "
        "options => map('min-input-files', '2'))",
        "alter table lakehouse.interval_ledger set tblproperties ("
        "'write.metadata.delete-after-commit.enabled' = 'true', "
        "'write.metadata.previous-versions-max' = '20')",
        "call spark_catalog.system.expire_snapshots(table => 'lakehouse.interval_ledger', "
        "older_than => timestamp '2026-11-29 09:30:00.000000', retain_last => 1)",
    ]


def test_one_write_in_check_one_in_counts_the_files_and_compacts_at_the_threshold():
    ran: list[str] = []

    def run(sql: str) -> list[dict]:
        ran.append(sql)
        return [{"numFiles": 32}] if sql.startswith("describe detail") else []

    # a write whose draw is not 0 runs no statement at all
    assert not ledger.compact_if_due(run, "lakehouse", "delta", draw=lambda n: n - 1)
    assert ran == []
    # the drawn write counts, and at 32 files compacts and vacuums
    assert ledger.compact_if_due(run, "lakehouse", "delta", draw=lambda n: 0)
    assert ran == [
        "describe detail lakehouse.interval_ledger",
        "optimize lakehouse.interval_ledger",
        "vacuum lakehouse.interval_ledger",
    ]
    # the draw is over CHECK_ONE_IN writes
    drawn: list[int] = []
    ledger.compact_if_due(run, "lakehouse", "delta", draw=lambda n: drawn.append(n) or 1)
    assert drawn == [8]


@pytest.mark.parametrize(
    ("message", "missing"),
    [
        # Spark 4.1's own messages, through Spark Connect and in a session, on both formats
        (
            "[TABLE_OR_VIEW_NOT_FOUND] The table or view `lakehouse`.`interval_ledger` cannot be "
            "found. Verify the spelling and correctness of the schema and catalog.",
            True,
        ),
        ("[SCHEMA_NOT_FOUND] The schema `lakehouse` cannot be found.", True),
        # anything else fails the invocation as before
        (
            "[DELTA_CONCURRENT_APPEND] Files were added to the root of the table by a concurrent "
            "update.",
            False,
        ),
        ("[INSUFFICIENT_PERMISSIONS] Insufficient privileges", False),
    ],
)
def test_only_a_missing_ledger_table_or_schema_sends_the_write_to_create_it(message, missing):
    assert ledger.missing(message) is missing


class LedgerStatements:
    """The statements _write_ledger sends, and what Spark answers them (no Spark: the control
    flow only; every integration test starts on an empty warehouse and proves the writes)."""

    def __init__(self, *answers: Exception | None) -> None:
        self.answers, self.sent = list(answers), []

    def execute(self, sql: str) -> None:
        self.sent.append(sql)
        answer = self.answers.pop(0) if self.answers else None
        if answer is not None:
            raise answer

    def _create_ledger(self, schema: str) -> None:
        self.sent.append(f"create schema and table {schema}")


def test_the_ledger_insert_runs_alone_and_creates_the_table_only_when_missing(monkeypatch):
    from dbt_common.exceptions import DbtRuntimeError

    from dbt.adapters.lakehouse import impl

    monkeypatch.setattr(impl, "_LEDGERS", set())
    write = impl.LakehouseAdapter._write_ledger
    missing = DbtRuntimeError(
        "[TABLE_OR_VIEW_NOT_FOUND] The table or view `l`.`t` cannot be found."
    )

    first = LedgerStatements(missing)  # a project's first run: created, then inserted
    write(first, "l", "insert 1")
    assert first.sent == ["insert 1", "create schema and table l", "insert 1"]

    later = LedgerStatements()  # every other run: the INSERT alone
    monkeypatch.setattr(impl, "_LEDGERS", set())
    write(later, "l", "insert 2")
    write(later, "l", "insert 3")  # known to exist in this process
    assert later.sent == ["insert 2", "insert 3"]

    refused = LedgerStatements(DbtRuntimeError("[INSUFFICIENT_PERMISSIONS] no"))
    monkeypatch.setattr(impl, "_LEDGERS", set())
    with pytest.raises(DbtRuntimeError, match="INSUFFICIENT_PERMISSIONS"):
        write(refused, "l", "insert 4")
    assert refused.sent == ["insert 4"]
