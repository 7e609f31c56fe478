"""Many interval runs in shuffled order with repeats, against a plain-Python reference.

Generated order change files (late rows, repeated rows, several versions of one order in one
file, bad lines) are loaded by a seeded random sequence of intervals of one to three days, out
of order and with repeats, with routine maintenance between them: `lakehouse maintain` halfway,
and the tables' history expired down to their newest commit two runs later (a platform team's
retention). After every run the tables must equal what the reference below computes from the
files loaded so far: for each order the newest valid version, and every bad line of every loaded
file with its reason. At the end every day is listed loaded, once, and a catch-up runs nothing.
`make test` runs 10 intervals over 6 days; `SOAK_RUNS` makes the sequence longer (`make soak`:
200).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from support import processes
from support.expected import ORDER_COLUMNS, REJECTED_COLUMNS, as_text
from support.expected import ORDER_HEADER as HEADER
from support.passes import SOAK
from support.processes import step_env
from support.tables import duplicate_keys, expire_history, leftover_folders, rows

from dbt.adapters.lakehouse.commands import cli
from retry_safe.project import PROJECT_DIR, interval_flags, run_dbt
from retry_safe.scenario import command

FIRST_DAY = date(2026, 10, 1)
DAYS = 6
ORDER_IDS = range(3001, 3013)
STATUSES = ["placed", "shipped", "cancelled"]  # the accepted set (var orders_accepted_statuses)
RUNS = int(os.environ.get("SOAK_RUNS", "10"))
SELECTION = "path:models/order_changes"
# the selection's interval models, as `lakehouse intervals` lists them
MODELS = ("orders", "rejected_orders", "stg_order_change_lines")
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


def generate_files(rng: random.Random, days: int = DAYS) -> list[ChangeFile]:
    """One file a day: mostly the day's new versions, plus late, repeated and bad lines."""
    files = []
    for index in range(days):
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


def test_shuffled_repeated_intervals_match_the_reference(
    spark, target, schema, table_format, tmp_path, capsys
):
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

    def lakehouse(command: str, *options: str) -> int:
        """The package's command, in this process (its dbt shares this test's session)."""
        return cli.main(
            [command, "--select", SELECTION, *options, "--project-dir", str(PROJECT_DIR)]
            + ["--target", target, "--vars", json.dumps({"orders_landing_path": str(landing)})]
        )

    loaded: set[int] = set()
    for number, (start, length) in enumerate(runs, 1):
        first = FIRST_DAY + timedelta(days=start)
        interval = interval_flags(first.isoformat(), (first + timedelta(days=length)).isoformat())
        run_dbt(
            ["run", "--select", SELECTION, *interval],
            target,
            {"orders_landing_path": str(landing)},
        )
        if number == len(runs) // 2:
            assert lakehouse("maintain") == 0
        if number == len(runs) // 2 + 2:
            for model in MODELS:
                expire_history(spark, f"{schema}.{model}", table_format)
        loaded |= set(range(start, start + length))
        where = f"run {number} of {len(runs)} ({first.isoformat()}, {length} days)"
        assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == reference_orders(files, loaded), (
            where
        )
        assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == reference_rejected(
            files, loaded
        ), where
    assert duplicate_keys(spark, f"{schema}.orders", ["order_id"]) == []

    # every day listed loaded, once, whatever the maintenance and the expired history; a
    # catch-up runs nothing
    window = ["--since", FIRST_DAY.isoformat(), "--until", str(FIRST_DAY + timedelta(days=DAYS))]
    capsys.readouterr()
    assert lakehouse("intervals", *window, "--json") == 0
    listing = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    whole = [f"{FIRST_DAY}T00:00:00Z", f"{FIRST_DAY + timedelta(days=DAYS)}T00:00:00Z"]
    assert [(m["model"], m["loaded"], m["missing"]) for m in listing["models"]] == [
        (model, [whole], []) for model in MODELS
    ]
    assert lakehouse("catchup", *window) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        f"lakehouse catchup: nothing missing in [{FIRST_DAY}, {FIRST_DAY + timedelta(days=DAYS)})"
        ": no run, nothing written"
    )
    # every run's staging tables (the Python model's, the change sets') left no files behind
    assert leftover_folders(spark, schema) == []


# `make soak`: a year of daily intervals (SOAK_DAYS) as a scheduler runs them, in processes of
# their own: every day once and a tenth of them again, shuffled, `lakehouse maintain` after
# every 7th, the process SIGKILLed at three random moments and the rest run again.
YEAR = int(os.environ.get("SOAK_DAYS", "365"))
# the files of the current version of a table: compacted to one every 7 runs, and a run adds at
# most one file per shuffle task (4 in the project's profile) to an unpartitioned table
FILES_BOUND = 7 * 4 + 1


@pytest.mark.slow
@pytest.mark.skipif(not SOAK, reason="make soak: a year of intervals, maintained and killed")
def test_a_year_of_daily_intervals_maintained_and_killed_ends_exact(tmp_path, target, table_format):
    rng = random.Random(SEED)
    files = generate_files(rng, YEAR)
    landing = tmp_path / "landing"
    write_files(files, landing)
    days = list(range(YEAR)) + rng.sample(range(YEAR), YEAR // 10)
    rng.shuffle(days)
    plan: list[list[str]] = []
    for number, index in enumerate(days, 1):
        first = FIRST_DAY + timedelta(days=index)
        plan.append([SELECTION, str(first), str(first + timedelta(days=1))])
        if number % 7 == 0:
            plan.append(["maintain", SELECTION])
    env = step_env(
        LAKEHOUSE_HOME=str(tmp_path / "lakehouse"),
        LAKEHOUSE_SCHEMA="analytics",
        DBT_TARGET=target,
        DBT_LOG_PATH=str(tmp_path / "logs"),
        SCENARIO_VARS=json.dumps({"orders_landing_path": str(landing)}),
    )
    kills = sorted(rng.sample(range(10, len(plan) - 10), 3))
    done = 0
    for kill in [*kills, None]:
        done += run_steps(plan[done:], env, tmp_path, None if kill is None else kill - done, rng)

    result = run_steps([], env, tmp_path, None, rng, dump=list(MODELS))
    every_day = set(range(YEAR))
    assert sorted(result["orders"]["rows"]) == as_text(reference_orders(files, every_day))
    assert sorted(result["rejected_orders"]["rows"]) == as_text(
        reference_rejected(files, every_day)
    )
    until = str(FIRST_DAY + timedelta(days=YEAR))
    window = ["--since", str(FIRST_DAY), "--until", until, "--vars", env["SCENARIO_VARS"]]
    listing = json.loads(lakehouse_process(["intervals", *window, "--json"], env).splitlines()[-1])
    whole = [f"{FIRST_DAY}T00:00:00Z", f"{until}T00:00:00Z"]
    assert [(m["loaded"], m["missing"]) for m in listing["models"]] == [([whole], [])] * len(MODELS)
    assert lakehouse_process(["catchup", *window], env).splitlines()[-1] == (
        f"lakehouse catchup: nothing missing in [{FIRST_DAY}, {until}): no run, nothing written"
    )
    for model in MODELS:
        assert result[model]["files"] <= FILES_BOUND, (model, result[model]["files"])


def run_steps(
    plan: list, env: dict, tmp_path: Path, kill_after: int | None, rng, dump: list[str] = ()
) -> int | dict:
    """Run the steps in a process of its own. kill_after: SIGKILL its group at a random moment
    of the step after that many steps ended, and return how many ended; else wait, and return
    the dump (dump given) or the number of steps."""
    out = tmp_path / "steps.out"
    with out.open("w") as stdout:
        process = subprocess.Popen(
            command(plan, dump),
            cwd=PROJECT_DIR,
            env=env,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        if kill_after is not None:
            while ended(out) < kill_after and process.poll() is None:
                time.sleep(0.05)
            time.sleep(rng.uniform(0.5, 4.0))  # somewhere in the next step
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return ended(out)
        process.wait(timeout=7200)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 0, out.read_text()[-3000:]
    if dump:
        line = next(x for x in out.read_text().splitlines() if x.startswith("DUMP "))
        return json.loads(line.removeprefix("DUMP "))
    return ended(out)


def ended(out: Path) -> int:
    return sum(1 for line in out.read_text().splitlines() if line.startswith("STEP "))


def lakehouse_process(args: list[str], env: dict) -> str:
    """The package's command on the soak's selection, as a scheduler starts it."""
    return processes.lakehouse([*args, "--select", SELECTION], env, PROJECT_DIR).strip()
