"""Every pipeline of the project over its documents' intervals, as a scheduler runs it: the plan
of steps the scenario tests run in processes of their own (killed runs, the lakehouse server),
and every table after it, from the reference documents (support/expected.py)."""

from __future__ import annotations

from support.expected import (
    ADDITIVE_COLUMNS,
    ADDITIVE_RESULT,
    BALANCE_COLUMNS,
    CART,
    CART_COLUMNS,
    CART_KEY,
    F1_AFTER_DAY_3,
    F1_COLUMNS,
    JAN_1,
    JAN_2,
    JAN_3,
    ORDER_COLUMNS,
    ORDERS,
    REJECTED,
    REJECTED_COLUMNS,
    VERSIONED_AFTER_DAY_2,
)

ORDERS_STEP = "path:models/order_changes"
F1_STEP = "path:models/f1_drivers"
# (selector, start, end) for retry_safe.scenario steps: each model's table created by an earlier
# step, then changed by a later one.
PLAN: list[list[str]] = [
    ["seed"],
    [CART, "2026-01-01", "2026-01-02"],
    [f"{CART}_df", "2026-01-01", "2026-01-02"],
    [CART, "2026-01-02", "2026-01-04"],
    [f"{CART}_df", "2026-01-02", "2026-01-04"],
    [ORDERS_STEP, "2026-10-03", "2026-10-04"],
    [ORDERS_STEP, "2026-10-04", "2026-10-05"],
    [F1_STEP, "2026-11-01", "2026-11-02"],
    [F1_STEP, "2026-11-02", "2026-11-03"],
    [F1_STEP, "2026-11-03", "2026-11-04"],
    ["customer_balances_versioned", "2026-11-01", "2026-11-02"],
    ["customer_balances_additive", "2026-11-01", "2026-11-02"],
    ["customer_balances_versioned", "2026-11-02", "2026-11-03"],
    ["customer_balances_additive", "2026-11-02", "2026-11-03"],
]
# Each table after the plan (columns, rows, key): the cart days 1 to 3, the order files of
# October 3 and 4, the F1 batches of days 1 to 3, customer versions and balance batches of
# November 1 and 2 (Ben's new version 3 with 250; Ben's 200 plus batch 2's 25).
TABLES: dict[str, tuple[list[str], list[tuple], list[str]]] = {
    CART: (CART_COLUMNS, JAN_1 + JAN_2 + JAN_3, CART_KEY),
    f"{CART}_df": (CART_COLUMNS, JAN_1 + JAN_2 + JAN_3, CART_KEY),
    "orders": (ORDER_COLUMNS, ORDERS, ["order_id"]),
    "rejected_orders": (REJECTED_COLUMNS, REJECTED, ["source_file", "line_number"]),
    "f1_drivers_merge": (F1_COLUMNS, F1_AFTER_DAY_3, ["driver_id"]),
    "f1_drivers_merge_df": (F1_COLUMNS, F1_AFTER_DAY_3, ["driver_id"]),
    "customer_balances_versioned": (BALANCE_COLUMNS, VERSIONED_AFTER_DAY_2, ["id"]),
    "customer_balances_additive": (ADDITIVE_COLUMNS, ADDITIVE_RESULT, ["id"]),
}
SEEDS = ["customer_balance_batches", "customer_versions", "f1_driver_batches"]


def columns_of(dumped: dict, columns: list[str]) -> list[list[str]]:
    """A table as retry_safe.scenario dumps it (text rows), only the given columns, sorted."""
    positions = [dumped["columns"].index(column) for column in columns]
    return sorted([row[p] for p in positions] for row in dumped["rows"])
