"""idempotent_merge_config on its own: what it derives from a model's configs (the guard
column, the target scope, dbt's merge aliases, the update and compare columns) and the one
error that lists every problem of a misconfigured model. No Spark, no dbt run (base.py).
The same refusals on real runs, table unchanged, are in tests/test_idempotent_merge.py and
tests/test_determinism.py."""

from __future__ import annotations

from typing import Any

import pytest
from dbt_common.exceptions import CompilationError
from unit.macros.base import MODEL_ID, Macros, interval

TYPES = {
    "id": "int",
    "name": "string",
    "balance": "decimal(12,2)",
    "version": "int",
    "batch_id": "int",
    "order_date": "date",
    "loaded_at": "timestamp",
}


def config_of(
    config: dict[str, Any],
    columns: list[str],
    bounds: dict[str, Any] | None = None,
    problems: list[str] | None = None,
    compiled_code: str = "select 1 as id",
) -> dict[str, Any]:
    macros = Macros(config, compiled_code=compiled_code)
    return macros.idempotent_merge_config(columns, TYPES, bounds, problems)


def refusal(*args: Any, **kwargs: Any) -> str:
    """The text of the error idempotent_merge_config raises."""
    with pytest.raises(CompilationError) as raised:
        config_of(*args, **kwargs)
    return raised.value.msg.strip()


@pytest.mark.parametrize(
    ("config", "guard", "applied_column"),
    [
        ({"unique_key": "id", "version_column": "version"}, "version", None),
        ({"unique_key": "id", "batch_column": "batch_id"}, "batch_id", "applied_batches"),
        ({"unique_key": "id"}, None, None),
    ],
)
def test_the_guard_column_is_the_version_or_the_batch(config, guard, applied_column):
    cfg = config_of(config, ["id", "name", "balance", "version", "batch_id"])
    assert (cfg["guard"], cfg["applied_column"]) == (guard, applied_column)


@pytest.mark.parametrize(
    "predicates",
    [
        ["DBT_INTERNAL_DEST.id != 2", "dbt_internal_dest.version > 1"],
        ["target.id != 2", "target.version > 1"],
    ],
)
def test_dbt_merge_aliases_in_predicates_become_target(predicates):
    cfg = config_of(
        {"unique_key": "id", "incremental_predicates": predicates}, ["id", "name", "version"]
    )
    assert cfg["predicates"] == ["target.id != 2", "target.version > 1"]
    assert cfg["scope"] == ["target.id != 2", "target.version > 1"]


def test_one_predicate_as_text_under_the_older_name_predicates():
    cfg = config_of({"unique_key": "id", "predicates": "DBT_INTERNAL_DEST.id != 2"}, ["id"])
    assert cfg["scope"] == ["target.id != 2"]


def test_the_interval_bounds_the_scope_only_when_its_column_is_part_of_the_key():
    bounds = interval("2026-10-03", "2026-10-04")
    in_key = config_of(
        {
            "unique_key": ["order_date", "id"],
            "interval_column": "order_date",
            "incremental_predicates": ["target.id > 0"],
        },
        ["order_date", "id", "name"],
        bounds,
    )
    assert in_key["interval_type"] == "date"
    assert in_key["scope"] == [
        "target.id > 0",
        "(target.order_date >= date'2026-10-03' and target.order_date < date'2026-10-04')",
    ]
    outside = config_of(
        {"unique_key": "id", "interval_column": "loaded_at"}, ["id", "loaded_at"], bounds
    )
    assert outside["interval_type"] == "timestamp"
    assert outside["scope"] == []


@pytest.mark.parametrize(
    ("config", "update_columns", "compare_columns"),
    [
        ({}, ["name", "balance", "version"], ["name", "balance", "version"]),
        (
            {"merge_update_columns": ["balance", "version"]},
            ["balance", "version"],
            ["balance", "version"],
        ),
        ({"merge_exclude_columns": ["name"]}, ["balance", "version"], ["balance", "version"]),
        (
            {"unchanged_ignore_columns": ["version"]},
            ["name", "balance", "version"],
            ["name", "balance"],
        ),
        ({"merge_exclude_columns": ["name", "balance", "version"]}, [], []),
    ],
)
def test_update_and_compare_columns(config, update_columns, compare_columns):
    """The key is never updated; merge_update_columns / merge_exclude_columns choose the
    updated columns, unchanged_ignore_columns which of them count as a change."""
    cfg = config_of({"unique_key": "id", **config}, ["id", "name", "balance", "version"])
    assert (cfg["update_columns"], cfg["compare_columns"]) == (update_columns, compare_columns)


def test_every_problem_of_a_model_is_listed_in_one_error():
    message = refusal(
        {
            "unique_key": ["id", "uuid()"],
            "version_column": "updated",
            "batch_column": "batch_id",
            "delete_missing_in_interval": True,
            "incremental_predicates": ["DBT_INTERNAL_SOURCE.id = 0"],
            "merge_insert_expressions": {"name": "target.name"},
        },
        ["id", "name", "batch_id"],
    )
    assert message == (
        f"Model {MODEL_ID} (incremental_strategy='idempotent_merge'): its configuration has problems, so nothing was written:\n"
        '  - unique_key uses the non-deterministic function uuid() in "uuid()". A retry would'
        " evaluate it again, match no existing row and insert duplicates. Use stable columns"
        " (a natural or composite business key) or deterministic functions such as lower(),"
        " coalesce() or sha2().\n"
        '  - unique_key entry "uuid()" is not a column name. Compute the key as a column in the'
        " model and name that column.\n"
        '  - version_column names the column "updated", which the model does not have. Its'
        " columns are: id, name, batch_id.\n"
        "  - delete_missing_in_interval: true needs interval_column. Without it the delete of"
        " target rows missing from the source is unbounded and would empty the rest of the"
        " table. Set interval_column to the column the model filters on the interval.\n"
        "  - batch_column and delete_missing_in_interval are both set. A key missing from an"
        " interval's batches has simply received no movement: additive batches never delete."
        " Remove delete_missing_in_interval.\n"
        "  - batch_column and version_column are both set. Use batch_column for additive updates"
        " (each batch applied once per key) or version_column for replacing updates, not both.\n"
        '  - merge_insert_expressions.name = "target.name" reads target., but an inserted row'
        " has no target row. Use source. columns and constants only.\n"
        '  - incremental_predicates entry "source.id = 0" reads the source. Predicates bound the'
        " table's side only (target. or DBT_INTERNAL_DEST.); filter the model's rows in the"
        " model."
    )


def test_the_callers_problems_the_model_code_and_a_missing_interval_in_one_error():
    message = refusal(
        {"unique_key": "id", "interval_column": "order_date"},
        ["id", "order_date", "loaded_at"],
        problems=["analytics.m has no applied_batches column."],
        compiled_code="select id, order_date, current_timestamp() as loaded_at from orders",
    )
    assert message == (
        f"Model {MODEL_ID} (incremental_strategy='idempotent_merge'): its configuration has problems, so nothing was written:\n"
        "  - analytics.m has no applied_batches column.\n"
        "  - the model code uses the non-deterministic function current_timestamp() in"
        ' "select id, order_date, current_timestamp() as loaded_at from orders". A retry would'
        " compute it again and get another value: a key built from it matches no existing row"
        " and inserts the rows a second time. Take times from the interval"
        " (interval_bounds() / in_interval(); dbt.interval in Python models) or from the"
        " source rows, and keys from stable columns. If only non-key columns may change on a"
        " rerun, set allow_nondeterministic_model=true.\n"
        "  - interval_column is set, but no interval was given. Pass the interval to reconcile,"
        " e.g. --event-time-start 2026-10-03 --event-time-end 2026-10-04, or"
        ' --vars \'{data_interval_start: "2026-10-03", data_interval_end:'
        ' "2026-10-04"}\'.'
    )


def test_a_date_interval_column_and_a_tie_break_without_version_in_one_error():
    message = refusal(
        {"unique_key": "id", "interval_column": "order_date", "tie_break_column": "loaded_at"},
        ["id", "order_date", "loaded_at"],
        interval("2026-10-03T06:00:00Z", "2026-10-04"),
    )
    assert message == (
        f"Model {MODEL_ID} (incremental_strategy='idempotent_merge'): its configuration has problems, so nothing was written:\n"
        "  - the interval [2026-10-03T06:00:00+00:00, 2026-10-04T00:00:00+00:00) does not start"
        " and end at midnight UTC, but the interval column order_date is a DATE. A DATE column"
        " can only be reconciled by whole days: pass dates such as 2026-10-03, or timestamps at"
        " 00:00:00Z.\n"
        "  - tie_break_column needs version_column: it only orders rows of one key that share"
        " a version."
    )


def test_quoted_values_appear_as_written():
    message = refusal(
        {"unique_key": "id", "incremental_predicates": ["source.day >= date'2026-01-01'"]},
        ["id", "day"],
    )
    assert "incremental_predicates entry \"source.day >= date'2026-01-01'\" reads" in message
