"""Reference document 001: three daily F1 driver batches, SQL and DataFrame models."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from support.tables import rows

from retry_safe.project import interval_vars, run_dbt

# driverId -> (dob, forename, surname), reference/f1_drivers_1_20.csv
DRIVERS = {
    1: (date(1985, 1, 7), "Lewis", "Hamilton"),
    2: (date(1977, 5, 10), "Nick", "Heidfeld"),
    3: (date(1985, 6, 27), "Nico", "Rosberg"),
    4: (date(1981, 7, 29), "Fernando", "Alonso"),
    5: (date(1981, 10, 19), "Heikki", "Kovalainen"),
    6: (date(1985, 1, 11), "Kazuki", "Nakajima"),
    7: (date(1979, 2, 28), "Sébastien", "Bourdais"),
    8: (date(1979, 10, 17), "Kimi", "Räikkönen"),
    9: (date(1984, 12, 7), "Robert", "Kubica"),
    10: (date(1982, 3, 18), "Timo", "Glock"),
    11: (date(1977, 1, 28), "TAKUMA", "SATO"),
    12: (date(1985, 7, 25), "NELSON", "PIQUET JR."),
    13: (date(1981, 4, 25), "FELIPE", "MASSA"),
    14: (date(1971, 3, 27), "DAVID", "COULTHARD"),
    15: (date(1974, 7, 13), "JARNO", "TRULLI"),
    16: (date(1983, 1, 11), "ADRIAN", "SUTIL"),
    17: (date(1976, 8, 27), "MARK", "WEBBER"),
    18: (date(1980, 1, 19), "JENSON", "BUTTON"),
    19: (date(1979, 4, 18), "ANTHONY", "DAVIDSON"),
    20: (date(1987, 7, 3), "SEBASTIAN", "VETTEL"),
}
UPPER_6_10 = {
    6: "KAZUKI NAKAJIMA",
    7: "SÉBASTIEN BOURDAIS",
    8: "KIMI RÄIKKÖNEN",
    9: "ROBERT KUBICA",
    10: "TIMO GLOCK",
}
UPPER_1_5 = {
    1: "LEWIS HAMILTON",
    2: "NICK HEIDFELD",
    3: "NICO ROSBERG",
    4: "FERNANDO ALONSO",
    5: "HEIKKI KOVALAINEN",
}
DAY = {n: datetime(2026, 11, n) for n in (1, 2, 3)}
COLUMNS = ["driver_id", "forename", "surname", "created_date", "updated_date"]
MODELS = ["f1_drivers_merge", "f1_drivers_merge_df"]


def row(driver_id: int, created: int, updated: int | None, upper: dict[int, str] | None = None):
    _, forename, surname = DRIVERS[driver_id]
    if upper and driver_id in upper:
        forename, surname = upper[driver_id].split(" ", 1)
    return (driver_id, forename, surname, DAY[created], DAY[updated] if updated else None)


AFTER_DAY_1 = [row(i, 1, None) for i in range(1, 11)]
AFTER_DAY_2 = (
    [row(i, 1, None) for i in range(1, 6)]
    + [row(i, 1, 2, UPPER_6_10) for i in range(6, 11)]
    + [row(i, 2, None) for i in range(11, 16)]
)
AFTER_DAY_3 = (
    [row(i, 1, 3, UPPER_1_5) for i in range(1, 6)]
    + [row(i, 1, 2, UPPER_6_10) for i in range(6, 11)]
    + [row(i, 2, None) for i in range(11, 16)]
    + [row(i, 3, None) for i in range(16, 21)]
)


def load(target: str, day: int) -> None:
    variables = interval_vars(f"2026-11-0{day}", f"2026-11-0{day + 1}")
    run_dbt(["run", "--select", "f1_drivers"], target, variables)


@pytest.fixture
def seeded(target, schema):
    run_dbt(["seed", "--select", "f1_drivers"], target)
    return schema


def test_three_batches_give_the_documents_tables_in_sql_and_python(spark, target, seeded):
    for day, expected in ((1, AFTER_DAY_1), (2, AFTER_DAY_2), (3, AFTER_DAY_3)):
        load(target, day)
        for model in MODELS:
            assert rows(spark, f"{seeded}.{model}", COLUMNS) == expected, (model, day)
    sql = rows(spark, f"{seeded}.f1_drivers_merge", ["*"], ["driver_id"])
    python = rows(spark, f"{seeded}.f1_drivers_merge_df", ["*"], ["driver_id"])
    assert sql == python


def test_reruns_in_any_order_keep_dates_and_names(spark, target, seeded):
    for day in (1, 2, 3, 3, 2, 1, 2):
        load(target, day)
    for model in MODELS:
        assert rows(spark, f"{seeded}.{model}", COLUMNS) == AFTER_DAY_3, model
    run_dbt(["test", "--select", "f1_drivers"], target, interval_vars("2026-11-01", "2026-11-04"))
