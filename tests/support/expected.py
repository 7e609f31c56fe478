"""The reference documents' tables, written out by hand once: every test that checks a
pipeline's rows (in-process, killed, concurrent, through the server) imports them from here.

- cart abandonment (document 000): worked out from seeds/cart_abandonment/retail_session_products.csv;
- F1 drivers (document 001): the public rows of reference/f1_drivers_1_20.csv, batches of
  days 1 to 3 (days 2 and 3 upper-case drivers 6-10 and 1-5);
- orders (document 002): the document's final tables after the files of October 3 and 4;
- customer balances (document 003): the versioned and the additive table after days 1 and 2.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

# -- document 000: daily cart abandonment -------------------------------------------------
CART = "retail_daily_product_cart_abandonment"
CART_MODELS = [CART, f"{CART}_df"]
CART_KEY = ["event_date", "product_id", "product_name", "category"]
CART_COLUMNS = [
    *CART_KEY,
    "cart_session_count",
    "purchased_cart_session_count",
    "abandoned_cart_session_count",
    "cart_abandonment_rate",
]
JAN_1 = [
    (date(2026, 1, 1), "P1", "Trail Shoe", "footwear", 3, 1, 2, Decimal("0.6667")),
    (date(2026, 1, 1), "P2", "Rain Jacket", "outerwear", 1, 0, 1, Decimal("1.0000")),
    (date(2026, 1, 1), "P3", "Wool Socks", "accessories", 1, 1, 0, Decimal("0.0000")),
]
JAN_2 = [
    (date(2026, 1, 2), "P1", "Trail Shoe", "footwear", 2, 1, 1, Decimal("0.5000")),
    (date(2026, 1, 2), "P2", "Rain Jacket", "outerwear", 3, 2, 1, Decimal("0.3333")),
]
JAN_3 = [
    (date(2026, 1, 3), "P1", "Trail Shoe", "footwear", 1, 1, 0, Decimal("0.0000")),
    (date(2026, 1, 3), "P3", "Wool Socks", "accessories", 3, 0, 3, Decimal("1.0000")),
]

# -- document 001: three daily F1 driver batches ------------------------------------------
F1_MODELS = ["f1_drivers_merge", "f1_drivers_merge_df"]
F1_COLUMNS = ["driver_id", "forename", "surname", "created_date", "updated_date"]
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
F1_DAY = {n: datetime(2026, 11, n) for n in (1, 2, 3)}


def f1_row(driver_id: int, created: int, updated: int | None, upper: dict[int, str] | None = None):
    """A row of f1_drivers_merge: created (and updated) on day n of November 2026."""
    _, forename, surname = DRIVERS[driver_id]
    if upper and driver_id in upper:
        forename, surname = upper[driver_id].split(" ", 1)
    return (driver_id, forename, surname, F1_DAY[created], F1_DAY[updated] if updated else None)


F1_AFTER_DAY_1 = [f1_row(i, 1, None) for i in range(1, 11)]
F1_AFTER_DAY_2 = (
    [f1_row(i, 1, None) for i in range(1, 6)]
    + [f1_row(i, 1, 2, UPPER_6_10) for i in range(6, 11)]
    + [f1_row(i, 2, None) for i in range(11, 16)]
)
F1_AFTER_DAY_3 = (
    [f1_row(i, 1, 3, UPPER_1_5) for i in range(1, 6)]
    + [f1_row(i, 1, 2, UPPER_6_10) for i in range(6, 11)]
    + [f1_row(i, 2, None) for i in range(11, 16)]
    + [f1_row(i, 3, None) for i in range(16, 21)]
)

# -- document 002: order change files ----------------------------------------------------
# a change file's header line, the orders table's columns
ORDER_HEADER = "order_id,customer_id,status,amount,currency,ordered_at,updated_at"
ORDER_COLUMNS = ORDER_HEADER.split(",")
REJECTED_COLUMNS = ["source_file", "file_date", "line_number", "raw_line", "rejection_reason"]


def _oct(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 10, day, hour, minute)


# The document's final tables.
ORDERS = [
    (1001, "C01", "shipped", Decimal("25.50"), "EUR", _oct(1, 9, 15), _oct(2, 8)),
    (1002, "C02", "cancelled", Decimal("12.00"), "EUR", _oct(1, 10, 2), _oct(3, 9)),
    (1004, "C01", "shipped", Decimal("40.00"), "EUR", _oct(2, 12, 45), _oct(4, 8, 30)),
    (1005, "C09", "cancelled", Decimal("8.75"), "EUR", _oct(3, 14, 10), _oct(4, 10)),
    (1006, "C02", "shipped", Decimal("19.90"), "EUR", _oct(4, 11, 20), _oct(4, 16, 45)),
]
# The orders table after the file of October 3 alone, worked out by hand from
# landing/orders/order_changes_20261003.csv: 1001 shipped, 1002 cancelled, 1004 and 1005 placed
# (1003's amount is rejected).
ORDERS_AFTER_OCT_3 = [
    *ORDERS[:2],
    (1004, "C01", "placed", Decimal("40.00"), "EUR", _oct(2, 12, 45), _oct(2, 12, 45)),
    (1005, "C09", "placed", Decimal("8.75"), "EUR", _oct(3, 14, 10), _oct(3, 14, 10)),
]
REJECTED = [
    (
        "order_changes_20261003.csv",
        date(2026, 10, 3),
        5,
        "1003,C03,placed,abc,EUR,2026-10-02T11:30:00,2026-10-02T11:30:00",
        "amount 'abc' is not a decimal(10,2)",
    )
]

# -- document 003: version-guarded and additive merges ------------------------------------
BALANCE_COLUMNS = ["id", "name", "balance", "version", "is_deleted"]
BALANCES_START = [
    (1, "Ada", 100, 1, False),
    (2, "Ben", 200, 2, False),
    (3, "Cyd", 300, 1, False),
]
# The versioned table after day 2: Ben's version 3 with 250, Dan new.
VERSIONED_AFTER_DAY_2 = [
    (1, "Ada", 100, 1, False),
    (2, "Ben", 250, 3, False),
    (3, "Cyd", 300, 1, False),
    (4, "Dan", 400, 1, False),
]
# Every column of the additive table: applied_batches lists the batches applied to the row.
ADDITIVE_COLUMNS = [*BALANCE_COLUMNS, "batch_id", "applied_batches"]
# The document's result (Ben 200 + 25): each batch once.
ADDITIVE_RESULT = [
    (1, "Ada", 100, 1, False, 1, [1]),
    (2, "Ben", 225, 2, False, 2, [1, 2]),
    (3, "Cyd", 300, 1, False, 1, [1]),
]


def as_text(rows: list[tuple[Any, ...]]) -> list[list[str]]:
    """Rows in the form a process of its own prints them (str of each value), sorted."""
    return sorted([str(value) for value in row] for row in rows)
