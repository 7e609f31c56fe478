"""Many interval runs in shuffled order with repeats, against a plain-Python reference.

Generated order change files (late rows, repeated rows, several versions of one order in one
file, bad lines) are loaded by a seeded random sequence of intervals of one to three days, out
of order and with repeats. After every run the tables must equal what the reference below
computes from the files loaded so far: for each order the newest valid version, and every bad
line of every loaded file with its reason. `make test` runs 10 intervals over 6 days; `SOAK_RUNS` makes the
sequence longer (`make soak`: 200).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from support.tables import duplicate_keys, rows

from retry_safe.project import interval_flags, run_dbt

HEADER = "order_id,customer_id,status,amount,currency,ordered_at,updated_at"
ORDER_COLUMNS = HEADER.split(",")
REJECTED_COLUMNS = ["source_file", "file_date", "line_number", "raw_line", "rejection_reason"]
FIRST_DAY = date(2026, 10, 1)
DAYS = 6
ORDER_IDS = range(3001, 3013)
STATUSES = ["placed", "shipped", "cancelled"]  # the accepted set (var orders_accepted_statuses)
RUNS = int(os.environ.get("SOAK_RUNS", "10"))
SEED = int(os.environ.get("SOAK_SEED", "20261130"))


@dataclass(frozen=True)
class Version:
    """Version k of an order: one content per (order_id, updated_at), as a real feed has."""

    order_id: int
    k: int

    @property
    def updated_at(self) -> datetime:
        return datetime(2026, 9, 30, 8) + timedelta(hours=7 * self.k, minutes=self.order_id % 60)

    def row(self) -> tuple:
        return (
            self.order_id,
            f"C{self.order_id % 7:02d}",
            STATUSES[self.k % len(STATUSES)],
            Decimal(f"{10 + self.order_id % 90}.{self.k % 100:02d}"),
            "EUR",
            datetime(2026, 9, 30, 7, self.order_id % 60),
            self.updated_at,
        )

    def line(self) -> str:
        order_id, customer, status, amount, currency, ordered_at, updated_at = self.row()
        return (
            f"{order_id},{customer},{status},{amount},{currency},"
            f"{ordered_at:%Y-%m-%dT%H:%M:%S},{updated_at:%Y-%m-%dT%H:%M:%S}"
        )


@dataclass
class ChangeFile:
    day: date
    lines: list[str]  # data lines, without the header
    valid: list[Version]
    rejected: list[tuple]  # (line_number, raw_line, reason)

    @property
    def name(self) -> str:
        return f"order_changes_{self.day:%Y%m%d}.csv"


def generate_files(rng: random.Random) -> list[ChangeFile]:
    """One file a day: mostly the day's new versions, plus late, repeated and bad lines."""
    files = []
    for index in range(DAYS):
        day = FIRST_DAY + timedelta(days=index)
        change = ChangeFile(day, [], [], [])
        for order_id in rng.sample(list(ORDER_IDS), 6):
            picks = [Version(order_id, 3 * index + rng.randrange(3))]
            if rng.random() < 0.4:  # a second version of the same order in the same file
                picks.append(Version(order_id, 3 * index + rng.randrange(3)))
            if index and rng.random() < 0.3:  # a late row: an older version
                picks.append(Version(order_id, rng.randrange(3 * index)))
            if rng.random() < 0.2:  # the same line twice
                picks.append(picks[0])
            for version in picks:
                change.lines.append(version.line())
                change.valid.append(version)
        if rng.random() < 0.5:
            bad_id = rng.choice(list(ORDER_IDS))
            change.lines.append(
                f"{bad_id},C01,paid,x{index},EUR,2026-09-30T07:00:00,2026-10-01T00:00:00"
            )
            change.rejected.append(
                (
                    len(change.lines) + 1,
                    change.lines[-1],
                    f"amount 'x{index}' is not a decimal(10,2)",
                )
            )
        if rng.random() < 0.3:
            change.lines.append(
                f"{rng.choice(list(ORDER_IDS))},C02,paid,1.00,EUR,2026-09-30T07:00:00,soon"
            )
            change.rejected.append(
                (len(change.lines) + 1, change.lines[-1], "updated_at 'soon' is not a timestamp")
            )
        files.append(change)
    return files


def write_files(files: list[ChangeFile], landing: Path) -> None:
    landing.mkdir(parents=True, exist_ok=True)
    for change in files:
        (landing / change.name).write_text("\n".join([HEADER, *change.lines]) + "\n")


def generate_runs(rng: random.Random) -> list[tuple[int, int]]:
    """(first day index, number of days) per run: every day once, random intervals of one to
    three days (days loaded again, overlapping intervals) and one run repeated exactly, shuffled."""
    runs = [(index, 1) for index in range(DAYS)]
    while len(runs) < RUNS - 1:
        start = rng.randrange(DAYS)
        runs.append((start, rng.randint(1, min(3, DAYS - start))))
    runs.append(rng.choice(runs))
    rng.shuffle(runs)
    return runs


def reference_orders(files: list[ChangeFile], loaded: set[int]) -> list[tuple]:
    """The intended semantics: per order, its newest valid version among the loaded files."""
    newest: dict[int, Version] = {}
    for index in sorted(loaded):
        for version in files[index].valid:
            current = newest.get(version.order_id)
            if current is None or version.updated_at > current.updated_at:
                newest[version.order_id] = version
    return sorted(version.row() for version in newest.values())


def reference_rejected(files: list[ChangeFile], loaded: set[int]) -> list[tuple]:
    return sorted(
        (files[index].name, files[index].day, number, raw, reason)
        for index in loaded
        for number, raw, reason in files[index].rejected
    )


def test_shuffled_repeated_intervals_match_the_reference(spark, target, schema, tmp_path):
    rng = random.Random(SEED)
    files = generate_files(rng)
    runs = generate_runs(rng)
    landing = tmp_path / "landing"
    write_files(files, landing)
    # The sequence really is out of order, repeated and overlapping, and the files hold every
    # hazard.
    assert len(runs) == RUNS >= 10 and len(set(runs)) < len(runs)
    assert any(b[0] < a[0] for a, b in zip(runs, runs[1:], strict=False))
    assert any(length > 1 for _, length in runs), "no interval of several days"
    assert sum(length for _, length in runs) > DAYS + 4, "few days loaded twice"
    assert any(len(f.valid) > len(set(f.valid)) for f in files), "no repeated line"
    assert any(f.rejected for f in files), "no bad line"

    loaded: set[int] = set()
    for number, (start, length) in enumerate(runs, 1):
        first = FIRST_DAY + timedelta(days=start)
        interval = interval_flags(first.isoformat(), (first + timedelta(days=length)).isoformat())
        run_dbt(
            ["run", "--select", "path:models/order_changes", *interval],
            target,
            {"orders_landing_path": str(landing)},
        )
        loaded |= set(range(start, start + length))
        where = f"run {number} of {len(runs)} ({first.isoformat()}, {length} days)"
        assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == reference_orders(files, loaded), (
            where
        )
        assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == reference_rejected(
            files, loaded
        ), where
    assert duplicate_keys(spark, f"{schema}.orders", ["order_id"]) == []
