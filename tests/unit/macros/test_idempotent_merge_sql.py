"""The change set and the MERGE idempotent_merge renders, as exact SQL, for each kind of model.

No Spark and no dbt run: the adapter's macros rendered with Jinja and a stub context
(base.py). Each case goes the way the materialization goes: idempotent_merge_config reads the
model's configs and derives the guard, the scope and the update columns, then
idempotent_merge_changes_sql (or idempotent_merge_batches_sql for batch_column) renders the
change set and idempotent_merge_sql the one MERGE. The models are this project's own
(customer_balances, f1_drivers, cart_abandonment), cut to a few columns. Behaviour on real
Delta and Iceberg tables is proved in tests/test_idempotent_merge.py and the pipeline tests.

Names as the materialization renders them: the model's staged rows m__dbt_tmp, the table
analytics.m, the change set m__dbt_changes. Expected SQL is compared with whitespace
normalized (base.normalize).
"""

from __future__ import annotations

from typing import Any

from unit.macros.base import Macros, interval, normalize

STAGED = "m__dbt_tmp"
TABLE = "analytics.m"
CHANGES = "m__dbt_changes"

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


VERSIONED_NEWEST = """
with source_newest as (
    select
        id, name, balance, version, is_deleted,
        true as dbt_im_exists
    from (
        select id, name, balance, version, is_deleted
        from (
            select
                id, name, balance, version, is_deleted,
                row_number() over (
                    partition by id
                    order by version desc
                ) as dbt_im_rank
            from m__dbt_tmp
        ) as ranked_source
        where dbt_im_rank = 1
    ) as newest
),
"""
VERSIONED_CLASSIFIED = """
target_in_scope as (
    select
        id, name, balance, version, is_deleted,
        true as dbt_im_exists
    from analytics.m as target
),

classified as (
    select
        case when source.dbt_im_exists then source.id else target.id end as id,
        source.name,
        source.balance,
        source.version,
        source.is_deleted,
        case
            when target.dbt_im_exists is null then 'insert'
            when source.version > target.version
                and not (
                    source.name <=> target.name
                    and source.balance <=> target.balance
                    and source.version <=> target.version
                    and source.is_deleted <=> target.is_deleted
                ) then 'update'
        end as dbt_im_op
    from source_newest as source
    left join target_in_scope as target
        on target.id <=> source.id
)

select * from classified
where dbt_im_op is not null
"""
VERSIONED_MERGE = """
merge into analytics.m as target
using m__dbt_changes as source
    on target.id <=> source.id
when matched and source.dbt_im_op = 'update' and source.version > target.version
    then update set
        target.name = source.name,
        target.balance = source.balance,
        target.version = source.version,
        target.is_deleted = source.is_deleted
when not matched and source.dbt_im_op = 'insert' then insert (
    id, name, balance, version, is_deleted
) values (
    source.id, source.name, source.balance, source.version, source.is_deleted
)
"""


def test_versioned_model_updates_only_strictly_newer_changed_rows():
    """customer_balances_versioned: the newest row per key by version; an existing key is an
    update only when its version is strictly newer and some column differs (null-safely),
    and the MERGE repeats the version guard."""
    changes, merge = render(
        {"unique_key": "id", "version_column": "version"}, VERSIONED_COLUMNS, BALANCE_TYPES
    )
    assert changes == normalize(VERSIONED_NEWEST + VERSIONED_CLASSIFIED)
    assert merge == normalize(VERSIONED_MERGE)


def test_one_row_per_key_reads_the_staged_rows_without_the_newest_row_window():
    changes, merge = render(
        {"unique_key": "id", "version_column": "version"},
        VERSIONED_COLUMNS,
        BALANCE_TYPES,
        one_row_per_key=True,
    )
    newest = """
    with source_newest as (
        select
            id, name, balance, version, is_deleted,
            true as dbt_im_exists
        from m__dbt_tmp
    ),
    """
    assert changes == normalize(newest + VERSIONED_CLASSIFIED)
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
BATCH_MERGE = """
merge into analytics.m as target
using m__dbt_changes as source
    on target.id <=> source.id
when matched and source.dbt_im_op = 'update'
    and target.applied_batches <=> source.dbt_im_applied_before
    then update set
        target.name = source.name,
        target.balance = source.balance,
        target.version = source.version,
        target.is_deleted = source.is_deleted,
        target.batch_id = source.batch_id,
        target.applied_batches = source.applied_batches
when not matched and source.dbt_im_op = 'insert' then insert (
    id, name, balance, version, is_deleted, batch_id, applied_batches
) values (
    source.id, source.name, source.balance, source.version, source.is_deleted,
    source.batch_id, source.applied_batches
)
"""


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
    changes, merge = render(
        {"unique_key": ["customer_id", "segment"]},
        ["customer_id", "segment"],
        {"customer_id": "int", "segment": "string"},
    )
    assert changes == normalize(
        """
        with source_newest as (
            select
                customer_id, segment,
                true as dbt_im_exists
            from (
                select customer_id, segment
                from (
                    select
                        customer_id, segment,
                        row_number() over (
                            partition by customer_id, segment
                            order by 1
                        ) as dbt_im_rank
                    from m__dbt_tmp
                ) as ranked_source
                where dbt_im_rank = 1
            ) as newest
        ),

        target_in_scope as (
            select
                customer_id, segment,
                true as dbt_im_exists
            from analytics.m as target
        ),

        classified as (
            select
                case when source.dbt_im_exists then source.customer_id else target.customer_id end
                    as customer_id,
                case when source.dbt_im_exists then source.segment else target.segment end
                    as segment,
                case
                    when target.dbt_im_exists is null then 'insert'
                    when false then 'update'
                end as dbt_im_op
            from source_newest as source
            left join target_in_scope as target
                on target.customer_id <=> source.customer_id and target.segment <=> source.segment
        )

        select * from classified
        where dbt_im_op is not null
        """
    )
    assert merge == normalize(
        """
        merge into analytics.m as target
        using m__dbt_changes as source
            on target.customer_id <=> source.customer_id and target.segment <=> source.segment
        when matched and source.dbt_im_op = 'delete' then delete
        when not matched and source.dbt_im_op = 'insert' then insert (
            customer_id, segment
        ) values (
            source.customer_id, source.segment
        )
        """
    )


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
    assert changes == normalize(
        """
        with source_newest as (
            select
                driver_id, dob, forename, surname, batch_date, created_date, updated_date,
                true as dbt_im_exists
            from (
                select driver_id, dob, forename, surname, batch_date, created_date, updated_date
                from (
                    select
                        driver_id, dob, forename, surname, batch_date, created_date,
                        updated_date,
                        row_number() over (
                            partition by driver_id
                            order by batch_date desc
                        ) as dbt_im_rank
                    from m__dbt_tmp
                ) as ranked_source
                where dbt_im_rank = 1
            ) as newest
        ),

        target_in_scope as (
            select
                driver_id, dob, forename, surname, batch_date, created_date, updated_date,
                true as dbt_im_exists
            from analytics.m as target
        ),

        classified as (
            select
                case when source.dbt_im_exists then source.driver_id else target.driver_id end
                    as driver_id,
                source.dob,
                source.forename,
                source.surname,
                source.batch_date,
                source.created_date,
                source.updated_date,
                case
                    when target.dbt_im_exists is null then 'insert'
                    when source.batch_date > target.batch_date
                        and not (
                            source.dob <=> target.dob
                            and source.forename <=> target.forename
                            and source.surname <=> target.surname
                        ) then 'update'
                end as dbt_im_op
            from source_newest as source
            left join target_in_scope as target
                on target.driver_id <=> source.driver_id
        )

        select * from classified
        where dbt_im_op is not null
        """
    )
    assert merge == normalize(
        """
        merge into analytics.m as target
        using m__dbt_changes as source
            on target.driver_id <=> source.driver_id
        when matched and source.dbt_im_op = 'update' and source.batch_date > target.batch_date
            then update set
                target.dob = source.dob,
                target.forename = source.forename,
                target.surname = source.surname,
                target.batch_date = source.batch_date,
                target.updated_date = source.updated_date
        when not matched and source.dbt_im_op = 'insert' then insert (
            driver_id, dob, forename, surname, batch_date, created_date, updated_date
        ) values (
            source.driver_id, source.dob, source.forename, source.surname, source.batch_date,
            source.created_date, null
        )
        """
    )


def test_merge_update_columns_are_the_only_columns_updated_and_compared():
    config = {
        "unique_key": "id",
        "version_column": "version",
        "merge_update_columns": ["balance", "version"],
    }
    changes, merge = render(config, VERSIONED_COLUMNS, BALANCE_TYPES)
    assert changes == normalize(
        VERSIONED_NEWEST
        + """
        target_in_scope as (
            select
                id, name, balance, version, is_deleted,
                true as dbt_im_exists
            from analytics.m as target
        ),

        classified as (
            select
                case when source.dbt_im_exists then source.id else target.id end as id,
                source.name,
                source.balance,
                source.version,
                source.is_deleted,
                case
                    when target.dbt_im_exists is null then 'insert'
                    when source.version > target.version
                        and not (
                            source.balance <=> target.balance
                            and source.version <=> target.version
                        ) then 'update'
                end as dbt_im_op
            from source_newest as source
            left join target_in_scope as target
                on target.id <=> source.id
        )

        select * from classified
        where dbt_im_op is not null
        """
    )
    assert merge == normalize(
        """
        merge into analytics.m as target
        using m__dbt_changes as source
            on target.id <=> source.id
        when matched and source.dbt_im_op = 'update' and source.version > target.version
            then update set
                target.balance = source.balance,
                target.version = source.version
        when not matched and source.dbt_im_op = 'insert' then insert (
            id, name, balance, version, is_deleted
        ) values (
            source.id, source.name, source.balance, source.version, source.is_deleted
        )
        """
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
        VERSIONED_NEWEST
        + VERSIONED_CLASSIFIED.replace(
            "from analytics.m as target\n",
            "from analytics.m as target\nwhere target.id != 2 and target.is_deleted = false\n",
        )
    )
    assert merge == normalize(
        """
        merge into analytics.m as target
        using m__dbt_changes as source
            on target.id <=> source.id
            and target.id != 2
            and target.is_deleted = false
        when matched and source.dbt_im_op = 'update' and source.version > target.version
            then update set
                target.name = source.name,
                target.balance = source.balance,
                target.version = source.version,
                target.is_deleted = source.is_deleted
        when not matched and source.dbt_im_op = 'insert' then insert (
            id, name, balance, version, is_deleted
        ) values (
            source.id, source.name, source.balance, source.version, source.is_deleted
        )
        """
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
    changes, merge = render(
        config,
        ["event_date", "product_id", "cart_session_count"],
        {"event_date": "date", "product_id": "string", "cart_session_count": "bigint"},
        bounds=interval("2026-01-01", "2026-01-03"),
    )
    assert changes == normalize(
        """
        with source_newest as (
            select
                event_date, product_id, cart_session_count,
                true as dbt_im_exists
            from (
                select event_date, product_id, cart_session_count
                from (
                    select
                        event_date, product_id, cart_session_count,
                        row_number() over (
                            partition by event_date, product_id
                            order by 1
                        ) as dbt_im_rank
                    from m__dbt_tmp
                ) as ranked_source
                where dbt_im_rank = 1
            ) as newest
        ),

        target_in_scope as (
            select
                event_date, product_id, cart_session_count,
                true as dbt_im_exists
            from analytics.m as target
            where (target.event_date >= date'2026-01-01' and target.event_date < date'2026-01-03')
        ),

        classified as (
            select
                case when source.dbt_im_exists then source.event_date else target.event_date end
                    as event_date,
                case when source.dbt_im_exists then source.product_id else target.product_id end
                    as product_id,
                source.cart_session_count,
                case
                    when target.dbt_im_exists is null then 'insert'
                    when source.dbt_im_exists is null
                        and (
                            target.event_date >= date'2026-01-01'
                            and target.event_date < date'2026-01-03'
                        )
                        then 'delete'
                    when source.dbt_im_exists is null then null
                    when not (source.cart_session_count <=> target.cart_session_count)
                        then 'update'
                end as dbt_im_op
            from source_newest as source
            full outer join target_in_scope as target
                on target.event_date <=> source.event_date
                and target.product_id <=> source.product_id
        )

        select * from classified
        where dbt_im_op is not null
        """
    )
    assert merge == normalize(
        """
        merge into analytics.m as target
        using m__dbt_changes as source
            on target.event_date <=> source.event_date
            and target.product_id <=> source.product_id
            and (target.event_date >= date'2026-01-01' and target.event_date < date'2026-01-03')
        when matched and source.dbt_im_op = 'delete' then delete
        when matched and source.dbt_im_op = 'update' then update set
            target.cart_session_count = source.cart_session_count
        when not matched and source.dbt_im_op = 'insert' then insert (
            event_date, product_id, cart_session_count
        ) values (
            source.event_date, source.product_id, source.cart_session_count
        )
        """
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
    changes, merge = render(
        config,
        ["order_id", "file_date", "status", "updated_at"],
        {"order_id": "int", "file_date": "date", "status": "string", "updated_at": "timestamp"},
        bounds=interval("2026-10-03", "2026-10-04"),
    )
    assert changes == normalize(
        """
        with source_newest as (
            select
                order_id, file_date, status, updated_at,
                true as dbt_im_exists
            from (
                select order_id, file_date, status, updated_at
                from (
                    select
                        order_id, file_date, status, updated_at,
                        row_number() over (
                            partition by order_id
                            order by updated_at desc
                        ) as dbt_im_rank
                    from m__dbt_tmp
                ) as ranked_source
                where dbt_im_rank = 1
            ) as newest
        ),

        target_in_scope as (
            select
                order_id, file_date, status, updated_at,
                true as dbt_im_exists
            from analytics.m as target
        ),

        classified as (
            select
                case when source.dbt_im_exists then source.order_id else target.order_id end
                    as order_id,
                source.file_date,
                source.status,
                source.updated_at,
                case
                    when target.dbt_im_exists is null then 'insert'
                    when source.dbt_im_exists is null
                        and (
                            target.file_date >= date'2026-10-03'
                            and target.file_date < date'2026-10-04'
                        )
                        then 'delete'
                    when source.dbt_im_exists is null then null
                    when source.updated_at > target.updated_at
                        and not (
                            source.file_date <=> target.file_date
                            and source.status <=> target.status
                            and source.updated_at <=> target.updated_at
                        )
                        then 'update'
                end as dbt_im_op
            from source_newest as source
            full outer join target_in_scope as target
                on target.order_id <=> source.order_id
        )

        select * from classified
        where dbt_im_op is not null
        """
    )
    assert merge == normalize(
        """
        merge into analytics.m as target
        using m__dbt_changes as source
            on target.order_id <=> source.order_id
        when matched and source.dbt_im_op = 'delete' then delete
        when matched and source.dbt_im_op = 'update' and source.updated_at > target.updated_at
            then update set
                target.file_date = source.file_date,
                target.status = source.status,
                target.updated_at = source.updated_at
        when not matched and source.dbt_im_op = 'insert' then insert (
            order_id, file_date, status, updated_at
        ) values (
            source.order_id, source.file_date, source.status, source.updated_at
        )
        """
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
        """
        with source_newest as (
            select
                id, name,
                true as dbt_im_exists
            from (
                select id, name
                from (
                    select
                        id, name,
                        row_number() over (
                            partition by id
                            order by 1
                        ) as dbt_im_rank
                    from m__dbt_tmp
                ) as ranked_source
                where dbt_im_rank = 1
            ) as newest
        ),

        target_in_scope as (
            select
                id, name,
                true as dbt_im_exists
            from analytics.m as target
        ),

        classified as (
            select
                case when source.dbt_im_exists then source.id else target.id end as id,
                source.name,
                case
                    when target.dbt_im_exists is null then 'insert'
                    when true then 'update'
                end as dbt_im_op
            from source_newest as source
            left join target_in_scope as target
                on target.id <=> source.id
        )

        select * from classified
        where dbt_im_op is not null
        """
    )
    assert merge == normalize(
        """
        merge into analytics.m as target
        using m__dbt_changes as source
            on target.id <=> source.id
        when matched and source.dbt_im_op = 'update' then update set target.name = source.name
        when not matched and source.dbt_im_op = 'insert' then insert (id, name)
            values (source.id, source.name)
        """
    )


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
    assert normalize(staged) == normalize("""
select
    target.id,
    case when source.dbt_im_op = 'update' and source.version > target.version
        then source.name else target.name end as name,
    case when source.dbt_im_op = 'update' and source.version > target.version
        then source.balance else target.balance end as balance,
    case when source.dbt_im_op = 'update' and source.version > target.version
        then source.version else target.version end as version,
    case when source.dbt_im_op = 'update' and source.version > target.version
        then source.is_deleted else target.is_deleted end as is_deleted,
    case when source.dbt_im_op = 'update' and source.version > target.version
        then source.batch_date else target.batch_date end as batch_date
from analytics.m version as of 7 as target
left join m__dbt_changes as source
    on target.id <=> source.id
where not coalesce(source.dbt_im_op = 'delete', false)
union all
select
    source.id as id, source.name as name, source.balance as balance,
    source.version as version, source.is_deleted as is_deleted, source.batch_date as batch_date
from m__dbt_changes as source
left anti join analytics.m version as of 7 as target
    on target.id <=> source.id
where source.dbt_im_op = 'insert'
""")
