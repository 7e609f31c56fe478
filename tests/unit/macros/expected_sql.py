"""The pieces an expected idempotent_merge statement is written from, for the rendering tests.

Each test still states its whole expected statement, compared with the rendered one in full
(after base.normalize); these functions only spell out the parts every statement shares, with
the test's own columns, keys and conditions filled in. They hold none of the macros' rules:
which key, columns, conditions and clauses a statement has, and in which order, is written in
the test. Names are the ones the materialization renders (base.py's model m): the staged rows
m__dbt_tmp, the table analytics.m, the change set m__dbt_changes.

The change set is newest(...) or newest_as_staged(...), then target_in_scope(...), then
classified(...); the MERGE is merge_into(keys, clauses...): DELETE, update(...), insert(...).
"""

from __future__ import annotations

STAGED = "m__dbt_tmp"
TABLE = "analytics.m"
CHANGES = "m__dbt_changes"


def names(columns: list[str], prefix: str = "") -> str:
    """Columns as a select list: `a, b, c`, each after prefix (e.g. `source.`)."""
    return ", ".join(prefix + column for column in columns)


def key_match(keys: list[str]) -> str:
    """The null-safe key match of the change set's join and the MERGE's ON clause."""
    return " and ".join(f"target.{key} <=> source.{key}" for key in keys)


def within(column: str, start: str, end: str) -> str:
    """The table's rows of the daily interval [start, end) of a date column, parenthesized."""
    return f"(target.{column} >= date'{start}' and target.{column} < date'{end}')"


# --- the change set -------------------------------------------------------------------------


def newest(columns: list[str], keys: list[str], order_by: str = "1") -> str:
    """source_newest: the staged rows reduced to one row per key, the first by order_by."""
    return f"""
with source_newest as (
    select
        {names(columns)},
        true as dbt_im_exists
    from (
        select {names(columns)}
        from (
            select
                {names(columns)},
                row_number() over (
                    partition by {names(keys)}
                    order by {order_by}
                ) as dbt_im_rank
            from {STAGED}
        ) as ranked_source
        where dbt_im_rank = 1
    ) as newest
),
"""


def newest_as_staged(columns: list[str]) -> str:
    """source_newest when the source check found one row per key: the staged rows as they are."""
    return f"""
with source_newest as (
    select
        {names(columns)},
        true as dbt_im_exists
    from {STAGED}
),
"""


def target_in_scope(columns: list[str], where: str | None = None) -> str:
    """target_in_scope: the table's rows the change set joins, all of them or those of where."""
    return f"""
target_in_scope as (
    select
        {names(columns)},
        true as dbt_im_exists
    from {TABLE} as target
    {f"where {where}" if where else ""}
),
"""


def classified(keys: list[str], others: list[str], ops: str, join: str = "left") -> str:
    """classified and the final select: the key columns (from whichever side has the key),
    then the other columns from the source, then dbt_im_op: 'insert' for a key the table
    lacks, then the test's own ops (when ... then 'update', delete_missing(...))."""
    picked = [
        f"case when source.dbt_im_exists then source.{k} else target.{k} end as {k}" for k in keys
    ]
    return f"""
classified as (
    select
        {", ".join(picked + [f"source.{c}" for c in others])},
        case
            when target.dbt_im_exists is null then 'insert'
            {ops}
        end as dbt_im_op
    from source_newest as source
    {join} join target_in_scope as target
        on {key_match(keys)}
)

select * from classified
where dbt_im_op is not null
"""


def update_when(*conditions: str) -> str:
    """The op that makes a matched key an update."""
    return f"when {' and '.join(conditions)} then 'update'"


def newer(version: str) -> str:
    """The version guard: the source row is strictly newer."""
    return f"source.{version} > target.{version}"


def differs(columns: list[str]) -> str:
    """Some compared column differs, null-safely."""
    return f"not ({' and '.join(f'source.{c} <=> target.{c}' for c in columns)})"


def delete_missing(interval: str) -> str:
    """The ops of delete_missing_in_interval: a table key the source lacks is deleted inside
    the interval and left alone outside it."""
    return (
        f"when source.dbt_im_exists is null and {interval} then 'delete' "
        "when source.dbt_im_exists is null then null"
    )


# --- the MERGE ------------------------------------------------------------------------------

DELETE = "when matched and source.dbt_im_op = 'delete' then delete"


def update(columns: list[str], *guard: str) -> str:
    """The update clause: each column set from the change set's row, under the guard."""
    when = " and ".join(["source.dbt_im_op = 'update'", *guard])
    sets = ", ".join(f"target.{c} = source.{c}" for c in columns)
    return f"when matched and {when} then update set {sets}"


def insert(columns: list[str], values: list[str] | None = None) -> str:
    """The insert clause: the columns, from the change set's row unless values are given."""
    return (
        f"when not matched and source.dbt_im_op = 'insert' then insert ({names(columns)}) "
        f"values ({', '.join(values) if values else names(columns, 'source.')})"
    )


def merge_into(keys: list[str], *clauses: str, scope: tuple[str, ...] = ()) -> str:
    """The MERGE of the change set into the table: the key match and scope, then clauses."""
    on = " and ".join([key_match(keys), *scope])
    return f"merge into {TABLE} as target using {CHANGES} as source on {on} " + " ".join(clauses)
