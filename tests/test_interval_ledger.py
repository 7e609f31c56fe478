"""The interval ledger: each run of the strategy records its model, interval and invocation in the
ledger table (and in the table format's own commit metadata), `dbt run-operation
lakehouse_intervals` lists it, and the ledger table compacts itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from dbt_common.invocation import get_invocation_id

from dbt.adapters.lakehouse.tables import ledger
from retry_safe.project import interval_flags, run_dbt
from retry_safe.tables import commits, current_files

MODEL = "model.retry_safe.f1_drivers_merge"


class Messages:
    """A dbtRunner callback keeping the messages macros log (JinjaLogInfo)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, event: Any) -> None:
        if event.info.name == "JinjaLogInfo":
            self.texts.append(event.info.msg)


def listing(target: str) -> list[str]:
    messages = Messages()
    run_dbt(
        ["run-operation", "lakehouse_intervals", "--args", "{model: f1_drivers_merge}"],
        target,
        callbacks=[messages],
    )
    return messages.texts


def test_ledger_lists_loaded_days_their_commits_and_the_gap(
    spark, target, schema, table_format, monkeypatch: pytest.MonkeyPatch
):
    # every write that leaves two files or more compacts the ledger table: three invocations'
    # commits end in one file, and the listing below reads every row of them; and bounds the
    # ledger's own history (Iceberg: none kept older than the compaction, two metadata files)
    monkeypatch.setattr(ledger, "COMPACT_AT", 2)
    monkeypatch.setattr(ledger, "CHECK_ONE_IN", 1)  # every write counts the files
    monkeypatch.setattr(ledger, "KEEP_HISTORY_HOURS", 0)
    monkeypatch.setattr(ledger, "METADATA_KEPT", 1)
    relation = f"{schema}.f1_drivers_merge"
    model = ["run", "--select", "f1_drivers_merge"]
    run_dbt(["seed", "--select", "f1_driver_batches"], target)
    run_dbt([*model, *interval_flags("2026-11-01", "2026-11-02")], target)
    first = get_invocation_id()
    run_dbt([*model, *interval_flags("2026-11-03", "2026-11-04")], target)
    second = get_invocation_id()
    # a rerun of day 3 finds nothing to change: no commit, so the ledger keeps `second`
    run_dbt([*model, *interval_flags("2026-11-03", "2026-11-04")], target)
    rerun = get_invocation_id()
    assert len({first, second, rerun}) == 3

    history = commits(spark, relation, table_format)
    assert [json.loads(commit["ledger"]) if commit["ledger"] else None for commit in history] == [
        {
            "model": MODEL,
            "interval_start": "2026-11-01T00:00:00+00:00",
            "interval_end": "2026-11-02T00:00:00+00:00",
            "invocation_id": first,
            "load": "create",
        },
        {
            "model": MODEL,
            "interval_start": "2026-11-03T00:00:00+00:00",
            "interval_end": "2026-11-04T00:00:00+00:00",
            "invocation_id": second,
            "load": "merge",
        },
    ]
    ids = [commit["version"] for commit in history]
    if table_format == "delta":
        assert ids == ["0", "1"]
    label = "snapshot" if table_format == "iceberg" else "version"
    assert listing(target) == [
        f"{relation}: intervals [start, end), the commit that last changed each, and gaps",
        f"  loaded  [2026-11-01T00:00:00Z, 2026-11-02T00:00:00Z)  {label} {ids[0]}"
        f"  invocation {first}",
        "  gap     [2026-11-02T00:00:00Z, 2026-11-03T00:00:00Z)",
        f"  loaded  [2026-11-03T00:00:00Z, 2026-11-04T00:00:00Z)  {label} {ids[1]}"
        f"  invocation {second}",
    ]
    assert current_files(spark, "lakehouse.interval_ledger", table_format) == 1
    if table_format == "iceberg":
        snapshots = spark.sql("select * from lakehouse.interval_ledger.snapshots").collect()
        assert [s.operation for s in snapshots] == ["replace"]  # the last compaction
        log = spark.sql("select file from lakehouse.interval_ledger.metadata_log_entries")
        folder = Path(urlparse(log.collect()[-1].file).path).parent
        assert len(list(folder.glob("*.metadata.json"))) == 2  # the current and one previous
    else:  # the compacting write vacuums (the table's 7-day retention: nothing old enough)
        operations = [c["operation"] for c in commits(spark, "lakehouse.interval_ledger", "delta")]
        assert operations.count("VACUUM END") >= 1
