"""`lakehouse intervals` and `lakehouse catchup` on the orders pipeline: the loaded intervals
come from the interval ledger, the missing ones are loaded oldest first, a failure stops the
catch-up at its interval, and a catch-up with nothing missing writes nothing (also once the
tables' history has been expired: tests/test_interval_sequences.py).

Days 1 to 5 are 2026-10-03 to 2026-10-07 (the pipeline's begin is October 3); every file and
every expected row below is written by hand."""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal

import pytest
from support.expected import ORDER_COLUMNS, REJECTED_COLUMNS
from support.expected import ORDER_HEADER as HEADER
from support.tables import commit_count, rows

from dbt.adapters.lakehouse.commands import cli
from retry_safe.project import PROJECT_DIR, interval_flags, run_dbt

# Each file rejects one line: every interval changes both tables.
FILES = {
    "20261003": [
        "6001,C01,placed,10.00,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00",
        "6091,C09,placed,x1,EUR,2026-10-03T08:00:00,2026-10-03T08:00:00",
    ],
    "20261004": [
        "6001,C01,shipped,10.00,EUR,2026-10-03T08:00:00,2026-10-04T08:00:00",
        "6002,C02,placed,20.00,EUR,2026-10-04T08:00:00,2026-10-04T08:00:00",
        "6092,C09,placed,x2,EUR,2026-10-04T08:00:00,2026-10-04T08:00:00",
    ],
    "20261005": [
        "6002,C02,cancelled,20.00,EUR,2026-10-04T08:00:00,2026-10-05T08:00:00",
        "6003,C03,placed,30.00,EUR,2026-10-05T08:00:00,2026-10-05T08:00:00",
        "6093,C09,placed,x3,EUR,2026-10-05T08:00:00,2026-10-05T08:00:00",
    ],
    "20261006": [
        "6003,C03,shipped,30.00,EUR,2026-10-05T08:00:00,2026-10-06T08:00:00",
        "6004,C04,placed,40.00,EUR,2026-10-06T08:00:00,2026-10-06T08:00:00",
        "6094,C09,placed,x4,EUR,2026-10-06T08:00:00,2026-10-06T08:00:00",
    ],
    "20261007": [
        "6004,C04,cancelled,40.00,EUR,2026-10-06T08:00:00,2026-10-07T08:00:00",
        "6095,C09,placed,x5,EUR,2026-10-07T08:00:00,2026-10-07T08:00:00",
    ],
}
SELECTION = "path:models/order_changes"
# the selection's interval models, as `lakehouse intervals` lists them
MODELS = ("orders", "rejected_orders", "stg_order_change_lines")


def order(order_id: int, status: str, amount: str, ordered: int, updated: int) -> tuple:
    return (
        order_id,
        f"C{order_id - 6000:02d}",
        status,
        Decimal(amount),
        "EUR",
        datetime(2026, 10, ordered, 8),
        datetime(2026, 10, updated, 8),
    )


# Days 1, 2 and 4 loaded: day 4's newer versions of 6003 and 6004, day 3's not yet.
AFTER_DAYS_1_2_4 = [
    order(6001, "shipped", "10.00", 3, 4),
    order(6002, "placed", "20.00", 4, 4),
    order(6003, "shipped", "30.00", 5, 6),
    order(6004, "placed", "40.00", 6, 6),
]
# Every day: day 3's 6003 (placed, Oct 5) is older than day 4's shipped one and changes nothing.
ALL_DAYS = [
    order(6001, "shipped", "10.00", 3, 4),
    order(6002, "cancelled", "20.00", 4, 5),
    order(6003, "shipped", "30.00", 5, 6),
    order(6004, "cancelled", "40.00", 6, 7),
]


def rejected(day: int, line_number: int, amount: str) -> tuple:
    """The rejected line of October day's file: its number (line 1 is the header) and the
    amount that is not a decimal."""
    name = f"202610{day:02d}"
    raw_line = FILES[name][line_number - 2]
    reason = f"amount '{amount}' is not a decimal(10,2)"
    return (f"order_changes_{name}.csv", date(2026, 10, day), line_number, raw_line, reason)


REJECTED_ALL_DAYS = [
    rejected(3, 3, "x1"),
    rejected(4, 4, "x2"),
    rejected(5, 4, "x3"),
    rejected(6, 4, "x4"),
    rejected(7, 3, "x5"),
]
MISSING_3_AND_5 = [
    ["2026-10-05T00:00:00Z", "2026-10-06T00:00:00Z"],
    ["2026-10-07T00:00:00Z", "2026-10-08T00:00:00Z"],
]


def write(landing, day: str) -> None:
    (landing / f"order_changes_{day}.csv").write_text("\n".join([HEADER, *FILES[day]]) + "\n")


def lakehouse(command: str, target: str, landing, *extra: str) -> int:
    """The package's command, in this process (its dbt runs share this test's Spark session)."""
    return cli.main(
        [command, "--select", SELECTION, "--since", "2026-10-03", "--until", "2026-10-08"]
        + ["--project-dir", str(PROJECT_DIR), "--target", target]
        + ["--vars", json.dumps({"orders_landing_path": str(landing)}), *extra]
    )


# The catch-up's own logic (the ledger read, the order, the stop, the no-op) is one code path;
# its format-dependent parts are other tests' on both formats: the ledger's rows
# (test_interval_ledger), a catch-up after killed runs and one finding nothing
# (test_killed_runs), and after expired history (test_interval_sequences). `make soak`: both.
@pytest.mark.one_pass_outside_soak(run_in="local")
def test_catchup_loads_exactly_the_missing_days_stops_at_a_failure_and_then_writes_nothing(
    spark, target, schema, table_format, tmp_path, capsys
):
    landing = tmp_path / "landing"
    landing.mkdir()
    for day in ("20261003", "20261004", "20261006", "20261007"):  # day 3's file is late
        write(landing, day)
    variables = {"orders_landing_path": str(landing)}
    run_dbt(
        ["run", "--select", SELECTION, *interval_flags("2026-10-03", "2026-10-05")],
        target,
        variables,
    )
    run_dbt(
        ["run", "--select", SELECTION, *interval_flags("2026-10-06", "2026-10-07")],
        target,
        variables,
    )
    capsys.readouterr()

    assert lakehouse("intervals", target, landing, "--json") == 0
    listing = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [(m["model"], m["loaded"], m["missing"]) for m in listing["models"]] == [
        (
            model,
            [
                ["2026-10-03T00:00:00Z", "2026-10-05T00:00:00Z"],
                ["2026-10-06T00:00:00Z", "2026-10-07T00:00:00Z"],
            ],
            MISSING_3_AND_5,
        )
        for model in MODELS
    ]

    # Day 3's file is still missing: the catch-up stops there; day 5 is not attempted.
    commits = {model: commit_count(spark, f"{schema}.{model}", table_format) for model in MODELS}
    assert lakehouse("catchup", target, landing, "--quiet") == 1
    err = capsys.readouterr().err
    assert "lakehouse catchup: interval [2026-10-05, 2026-10-06) failed" in err
    assert "order_changes_20261005.csv" in err
    assert "run the same command again: it starts at this interval" in err
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == AFTER_DAYS_1_2_4
    assert commits == {m: commit_count(spark, f"{schema}.{m}", table_format) for m in MODELS}

    # The file lands; the same command loads day 3, then day 5, each once.
    write(landing, "20261005")
    assert lakehouse("catchup", target, landing, "--json") == 0
    events = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert [(e["event"], e["interval"], e["number"], e["of"]) for e in events] == [
        ("loaded", MISSING_3_AND_5[0], 1, 2),
        ("loaded", MISSING_3_AND_5[1], 2, 2),
    ]
    assert rows(spark, f"{schema}.orders", ORDER_COLUMNS) == ALL_DAYS
    assert rows(spark, f"{schema}.rejected_orders", REJECTED_COLUMNS) == REJECTED_ALL_DAYS

    # Nothing missing: no dbt run, no commit on any table.
    commits = {model: commit_count(spark, f"{schema}.{model}", table_format) for model in MODELS}
    assert lakehouse("catchup", target, landing) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        "lakehouse catchup: nothing missing in [2026-10-03, 2026-10-08): no run, nothing written"
    )
    assert commits == {m: commit_count(spark, f"{schema}.{m}", table_format) for m in MODELS}
