"""The change set and the MERGE idempotent_merge renders, as exact SQL, for each kind of model.

No Spark and no dbt run: the adapter's macros rendered with Jinja and a stub context
(base.py). Each case goes the way the materialization goes: idempotent_merge_config reads the
model's configs and derives the guard, the scope and the update columns, then
idempotent_merge_changes_sql (or idempotent_merge_batches_sql for batch_column) renders the
change set and idempotent_merge_sql the one MERGE. The models are this project's own
(customer_balances, f1_drivers, cart_abandonment), cut to a few columns. Behaviour on real
Delta and Iceberg tables is proved in tests/test_idempotent_merge.py and the pipeline tests.

Names as the materialization renders them: the model's staged rows m__dbt_tmp, the table
analytics.m, the change set m__dbt_changes. Each test pins its whole expected statement,
written from the pieces all of them share (expected_sql.py) and compared with whitespace
normalized (base.normalize).
"""

from __future__ import annotations

from typing import Any

from unit.macros.base import Macros, interval, normalize
from unit.macros.expected_sql import (
    CHANGES,
    DELETE,
    STAGED,
    TABLE,
    classified,
    delete_missing,
    differs,
    insert,
    merge_into,
    newer,
    newest,
    newest_as_staged,
    target_in_scope,
    update,
    update_when,
    within,
)

# customer_balances_versioned and _additive
BALANCE_TYPES = {
    "id": "int",
    "name": "string",
    "balance": "decimal(12,2)",
    "version": "int",
    "is_deleted": "boolean",
    "batch_id": "int",
}
VERSIONED_COLUMNS = ["id", "name", "balance", "version", "is_deleted"]
VERSIONED_VALUES = ["name", "balance", "version", "is_deleted"]


def render(
    config: dict[str, Any],
    columns: list[str],
    types: dict[str, str],
    bounds: dict[str, Any] | None = None,
    one_row_per_key: bool = False,
) -> tuple[str, str]:
    """(change set, MERGE) of a model with these configs and columns, normalized."""
    macros = Macros(config)
    cfg = macros.idempotent_merge_config(columns, types, bounds)
    if cfg["batch_column"]:
        changes = macros.idempotent_merge_batches_sql(cfg, STAGED, TABLE)
    else:
        changes = macros.idempotent_merge_changes_sql(cfg, STAGED, TABLE, one_row_per_key)
    return normalize(changes), normalize(macros.idempotent_merge_sql(cfg, CHANGES, TABLE))


# customer_balances_versioned: the table's rows joined and classified, and its MERGE
VERSIONED_CLASSIFIED = target_in_scope(VERSIONED_COLUMNS) + classified(
    ["id"], VERSIONED_VALUES, update_when(newer("version"), differs(VERSIONED_VALUES))
)
VERSIONED_MERGE = merge_into(
    ["id"], update(VERSIONED_VALUES, newer("version")), insert(VERSIONED_COLUMNS)
)


def test_versioned_model_updates_only_strictly_newer_changed_rows():
    """customer_balances_versioned: the newest row per key by version; an existing key is an
    update only when its version is strictly newer and some column differs (null-safely),
    and the MERGE repeats the version guard."""
    changes, merge = render(
        {"unique_key": "id", "version_column": "version"}, VERSIONED_COLUMNS, BALANCE_TYPES
    )
    assert changes == normalize(
        newest(VERSIONED_COLUMNS, ["id"], "version desc") + VERSIONED_CLASSIFIED
    )
    assert merge == normalize(VERSIONED_MERGE)


def test_one_row_per_key_reads_the_staged_rows_without_the_newest_row_window():
    changes, merge = render(
        {"unique_key": "id", "version_column": "version"},
        VERSIONED_COLUMNS,
        BALANCE_TYPES,
        one_row_per_key=True,
    )
    assert changes == normalize(newest_as_staged(VERSIONED_COLUMNS) + VERSIONED_CLASSIFIED)
    assert merge == normalize(VERSIONED_MERGE)


BATCH_CHANGES = """
with source_rows as (
    select distinct id, name, balance, version, is_deleted, batch_id
    from m__dbt_tmp
),

target_in_scope as (
    select
        id, name, balance, version, is_deleted, batch_id,
        applied_batches
    from analytics.m as target
),

pending as (
    select
        source.id,
        struct(
            source.batch_id,
            source.id,
            source.name,
            source.balance,
            source.version,
            source.is_deleted
        ) as dbt_im_batch,
        case when target.applied_batches is not null then named_struct(
            'id', target.id,
            'name', target.name,
            'balance', target.balance,
            'version', target.version,
            'is_deleted', target.is_deleted,
            'batch_id', target.batch_id,
            'dbt_im_first', element_at(target.applied_batches, 1)
        ) end as dbt_im_target,
        target.applied_batches as dbt_im_applied_before
    from source_rows as source
    left join target_in_scope as target
        on target.id <=> source.id
    where
        target.applied_batches is null
        or not array_contains(target.applied_batches, source.batch_id)
),

pending_per_key as (
    select
        id,
        array_sort(collect_list(dbt_im_batch)) as dbt_im_batches,
        any_value(dbt_im_target) as dbt_im_target,
        any_value(dbt_im_applied_before) as dbt_im_applied_before
    from pending
    group by id
),

folded as (
    select
        case when dbt_im_target is null then 'insert' else 'update' end as dbt_im_op,
        aggregate(
            case
                when dbt_im_target is null then slice(dbt_im_batches, 2, size(dbt_im_batches))
                else dbt_im_batches
            end,
            case
                when dbt_im_target is null then transform(
                    slice(dbt_im_batches, 1, 1),
                    source -> named_struct(
                        'id', cast(source.id as int),
                        'name', cast(source.name as string),
                        'balance', cast(source.balance as decimal(12,2)),
                        'version', cast(source.version as int),
                        'is_deleted', cast(source.is_deleted as boolean),
                        'batch_id', cast(source.batch_id as int),
                        'dbt_im_first', cast(source.batch_id as int)
                    )
                )[0]
                else dbt_im_target
            end,
            (target, source) -> named_struct(
                'id', target.id,
                'name', case
                    when source.batch_id < target.dbt_im_first
                        then cast(source.name as string)
                    else target.name
                end,
                'balance', cast(target.balance + source.balance as decimal(12,2)),
                'version', case
                    when source.batch_id < target.dbt_im_first
                        then cast(source.version as int)
                    else target.version
                end,
                'is_deleted', case
                    when source.batch_id < target.dbt_im_first
                        then cast(source.is_deleted as boolean)
                    else target.is_deleted
                end,
                'batch_id', cast(greatest(target.batch_id, source.batch_id) as int),
                'dbt_im_first', cast(least(target.dbt_im_first, source.batch_id) as int)
            )
        ) as dbt_im_row,
        array_sort(array_union(
            coalesce(dbt_im_applied_before, cast(array() as array<int>)),
            transform(dbt_im_batches, pending_batch -> cast(pending_batch.batch_id as int))
        )) as applied_batches,
        dbt_im_applied_before,
        size(dbt_im_batches) as dbt_im_batch_count
    from pending_per_key
)

select
    dbt_im_row.id as id,
    dbt_im_row.name as name,
    dbt_im_row.balance as balance,
    dbt_im_row.version as version,
    dbt_im_row.is_deleted as is_deleted,
    dbt_im_row.batch_id as batch_id,
    applied_batches,
    dbt_im_applied_before,
    dbt_im_batch_count,
    dbt_im_op
from folded
"""
BATCH_MERGE = merge_into(
    ["id"],
    update(
        [*VERSIONED_VALUES, "batch_id", "applied_batches"],
        "target.applied_batches <=> source.dbt_im_applied_before",
    ),
    insert([*VERSIONED_COLUMNS, "batch_id", "applied_batches"]),
)


def test_batch_column_model_folds_pending_batches_and_records_them_in_applied_batches():
    """customer_balances_additive: a source row whose batch is in the row's applied_batches is
    left out; the others are folded per key in batch order (the update expression once per
    batch, balance and batch_id updated, the other columns from the oldest batch); the MERGE
    writes the folded row, no expression applied again, only if the row still holds the
    applied_batches list the fold started from."""
    config = {
        "unique_key": "id",
        "batch_column": "batch_id",
        "merge_update_columns": ["balance", "batch_id"],
        "merge_update_expressions": {"balance": "target.balance + source.balance"},
    }
    changes, merge = render(config, [*VERSIONED_COLUMNS, "batch_id"], BALANCE_TYPES)
    assert changes == normalize(BATCH_CHANGES)
    assert merge == normalize(BATCH_MERGE)


def test_key_only_model_has_no_update_clause():
    """Every column is part of the key: nothing an update could set, so no key is ever an
    update and the MERGE has no update clause. A WHEN MATCHED clause stays (the delete, which
    only fires on delete markers): with only WHEN NOT MATCHED two concurrent Iceberg writers
    could both insert (apache/iceberg issue 12653)."""
    keys = ["customer_id", "segment"]
    changes, merge = render({"unique_key": keys}, keys, {"customer_id": "int", "segment": "string"})
    assert changes == normalize(
        newest(keys, keys) + target_in_scope(keys) + classified(keys, [], update_when("false"))
    )
    assert merge == normalize(merge_into(keys, DELETE, insert(keys)))


F1_COLUMNS = [
    "driver_id",
    "dob",
    "forename",
    "surname",
    "batch_date",
    "created_date",
    "updated_date",
]
F1_TYPES = {
    "driver_id": "int",
    "dob": "date",
    "forename": "string",
    "surname": "string",
    "batch_date": "date",
    "created_date": "date",
    "updated_date": "date",
}


def test_merge_exclude_columns_are_never_updated_and_ignored_columns_never_compared():
    """f1_drivers_merge: created_date is excluded from the update (set once, on insert);
    batch_date and updated_date are updated but a difference in them alone is no change;
    updated_date is inserted as NULL (merge_insert_expressions)."""
    config = {
        "unique_key": "driver_id",
        "version_column": "batch_date",
        "merge_exclude_columns": ["created_date"],
        "unchanged_ignore_columns": ["batch_date", "updated_date"],
        "merge_insert_expressions": {"updated_date": "null"},
    }
    changes, merge = render(config, F1_COLUMNS, F1_TYPES)
    values = F1_COLUMNS[1:]
    assert changes == normalize(
        newest(F1_COLUMNS, ["driver_id"], "batch_date desc")
        + target_in_scope(F1_COLUMNS)
        + classified(
            ["driver_id"],
            values,
            update_when(newer("batch_date"), differs(["dob", "forename", "surname"])),
        )
    )
    assert merge == normalize(
        merge_into(
            ["driver_id"],
            update(
                ["dob", "forename", "surname", "batch_date", "updated_date"],
                newer("batch_date"),
            ),
            insert(
                F1_COLUMNS,
                [f"source.{c}" for c in F1_COLUMNS[:-1]] + ["null"],
            ),
        )
    )


def test_merge_update_columns_are_the_only_columns_updated_and_compared():
    config = {
        "unique_key": "id",
        "version_column": "version",
        "merge_update_columns": ["balance", "version"],
    }
    changes, merge = render(config, VERSIONED_COLUMNS, BALANCE_TYPES)
    assert changes == normalize(
        newest(VERSIONED_COLUMNS, ["id"], "version desc")
        + target_in_scope(VERSIONED_COLUMNS)
        + classified(
            ["id"],
            VERSIONED_VALUES,
            update_when(newer("version"), differs(["balance", "version"])),
        )
    )
    assert merge == normalize(
        merge_into(
            ["id"],
            update(["balance", "version"], newer("version")),
            insert(VERSIONED_COLUMNS),
        )
    )


def test_incremental_predicates_with_dbt_aliases_bound_the_table_side():
    """dbt's standard alias DBT_INTERNAL_DEST (any case) becomes target: the predicates bound
    the ON clause (file pruning) and the table rows the change set joins."""
    config = {
        "unique_key": "id",
        "version_column": "version",
        "incremental_predicates": [
            "DBT_INTERNAL_DEST.id != 2",
            "dbt_internal_dest.is_deleted = false",
        ],
    }
    changes, merge = render(config, VERSIONED_COLUMNS, BALANCE_TYPES)
    assert changes == normalize(
        newest(VERSIONED_COLUMNS, ["id"], "version desc")
        + target_in_scope(VERSIONED_COLUMNS, "target.id != 2 and target.is_deleted = false")
        + classified(
            ["id"],
            VERSIONED_VALUES,
            update_when(newer("version"), differs(VERSIONED_VALUES)),
        )
    )
    assert merge == normalize(
        merge_into(
            ["id"],
            update(VERSIONED_VALUES, newer("version")),
            insert(VERSIONED_COLUMNS),
            scope=("target.id != 2", "target.is_deleted = false"),
        )
    )


def test_composite_key_matches_null_safely_and_the_interval_in_the_key_bounds_the_merge():
    """retail_daily_product_cart_abandonment, cut to three columns: every key column matched
    with <=> (a NULL part matches its own earlier row instead of being inserted again); the
    interval column is part of the key, so the interval bounds the ON clause and the table
    rows joined; delete_missing_in_interval deletes the interval's rows the source lacks, and
    only those (full outer join, delete markers)."""
    config = {
        "unique_key": ["event_date", "product_id"],
        "interval_column": "event_date",
        "delete_missing_in_interval": True,
    }
    keys = ["event_date", "product_id"]
    columns = [*keys, "cart_session_count"]
    changes, merge = render(
        config,
        columns,
        {"event_date": "date", "product_id": "string", "cart_session_count": "bigint"},
        bounds=interval("2026-01-01", "2026-01-03"),
    )
    day = within("event_date", "2026-01-01", "2026-01-03")
    assert changes == normalize(
        newest(columns, keys)
        + target_in_scope(columns, day)
        + classified(
            keys,
            ["cart_session_count"],
            delete_missing(day) + " " + update_when(differs(["cart_session_count"])),
            join="full outer",
        )
    )
    assert merge == normalize(
        merge_into(
            keys,
            DELETE,
            update(["cart_session_count"]),
            insert(columns),
            scope=(day,),
        )
    )


def test_an_interval_outside_the_key_bounds_only_the_deletes():
    """An orders-like model keyed by order_id whose interval column (file_date) is not part of
    the key: a key whose row moved to another interval must still match, so neither the ON
    clause nor the target rows joined are bounded by the interval (the whole table is joined);
    only the delete markers are, so rows of other intervals are never deleted."""
    config = {
        "unique_key": "order_id",
        "version_column": "updated_at",
        "interval_column": "file_date",
        "delete_missing_in_interval": True,
    }
    columns = ["order_id", "file_date", "status", "updated_at"]
    changes, merge = render(
        config,
        columns,
        {"order_id": "int", "file_date": "date", "status": "string", "updated_at": "timestamp"},
        bounds=interval("2026-10-03", "2026-10-04"),
    )
    values = columns[1:]
    assert changes == normalize(
        newest(columns, ["order_id"], "updated_at desc")
        + target_in_scope(columns)
        + classified(
            ["order_id"],
            values,
            delete_missing(within("file_date", "2026-10-03", "2026-10-04"))
            + " "
            + update_when(newer("updated_at"), differs(values)),
            join="full outer",
        )
    )
    assert merge == normalize(
        merge_into(["order_id"], DELETE, update(values, newer("updated_at")), insert(columns))
    )


def test_skip_unchanged_false_updates_every_matched_key():
    """skip_unchanged: false, no version: every key the source holds is an update, changed or
    not (the row is rewritten on every run, as dbt-spark's merge does)."""
    changes, merge = render(
        {"unique_key": "id", "skip_unchanged": False},
        ["id", "name"],
        {"id": "int", "name": "string"},
    )
    assert changes == normalize(
        newest(["id", "name"], ["id"])
        + target_in_scope(["id", "name"])
        + classified(["id"], ["name"], update_when("true"))
    )
    assert merge == normalize(merge_into(["id"], update(["name"]), insert(["id", "name"])))


def test_a_delta_audit_stage_is_the_merge_as_a_query_over_the_pinned_table():
    """Write-audit-publish on Delta: the staged state the model's tests read is the table at the
    version the change set was computed from, with the MERGE's own clauses applied: updates
    under the same version guard, delete markers left out (delete_missing_in_interval), the
    inserts the WHEN NOT MATCHED clause would add."""
    macros = Macros(
        {
            "unique_key": "id",
            "version_column": "version",
            "delete_missing_in_interval": True,
            "interval_column": "batch_date",
        }
    )
    bounds = interval("2026-11-01", "2026-11-02")
    cfg = macros.idempotent_merge_config(
        VERSIONED_COLUMNS + ["batch_date"], {**BALANCE_TYPES, "batch_date": "date"}, bounds
    )
    staged = macros.idempotent_merge_staged_sql(cfg, CHANGES, TABLE + " version as of 7")
    updated = "source.dbt_im_op = 'update' and source.version > target.version"
    values = [*VERSIONED_VALUES, "batch_date"]
    assert normalize(staged) == normalize(
        f"""
select
    target.id,
    {", ".join(f"case when {updated} then source.{c} else target.{c} end as {c}" for c in values)}
from analytics.m version as of 7 as target
left join m__dbt_changes as source
    on target.id <=> source.id
where not coalesce(source.dbt_im_op = 'delete', false)
union all
select
    {", ".join(f"source.{c} as {c}" for c in ["id", *values])}
from m__dbt_changes as source
left anti join analytics.m version as of 7 as target
    on target.id <=> source.id
where source.dbt_im_op = 'insert'
"""
    )
