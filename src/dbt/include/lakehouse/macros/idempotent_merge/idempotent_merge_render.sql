{#-
    idempotent_merge, stage 3: the SQL. The change set (only the rows that change the table: an
    insert, a strictly newer or changed update, a delete marker per key of the interval the
    source lacks; or the folded batches of a batch_column model), the one MERGE renderer, and a
    first load's CREATE. Pure renderers: no query runs here (tests/unit/macros render them).
-#}

{% macro idempotent_merge_changes_sql(cfg, source, target, one_row_per_key=false) %}
    {#-
        The real changes the merge must apply, one row per key, with dbt_im_op:
          'insert'  the key is not in the table;
          'update'  the key is in the table and the source row wins: strictly newer
                    version_column, and (skip_unchanged) some compared column differs,
                    null-safely; never when the model has no column to update;
          'delete'  delete_missing_in_interval: a table row inside the interval whose key the
                    source lacks (a delete marker carrying only the key).
        Source rows that are stale or unchanged are left out. This is why a retry costs
        nothing: when the result is empty no MERGE runs at all, and otherwise the MERGE only
        matches the target rows that really change, so copy-on-write rewrites only their files.
        A bare WHEN NOT MATCHED BY SOURCE clause would instead make Delta and Iceberg scan and
        rewrite every file of the table on every run, a no-op retry included.
        One join classifies every key: a left join, or a full outer join when deletes are on
        (the table's keys the source lacks come out of the same join).
        one_row_per_key: the source check found exactly one row per key, so the newest-row
        window (a sort of the whole source) is skipped.
        Models with batch_column use idempotent_merge_batches_sql instead.
    -#}
    {%- set keys = cfg.unique_key -%}
    {%- set scope = cfg.scope -%}
    {%- set conditions = [] -%}
    {%- if cfg.version_column -%}
        {%- set v = adapter.quote_column(cfg.version_column) -%}
        {%- do conditions.append('source.' ~ v ~ ' > target.' ~ v) -%}
    {%- endif -%}
    {%- if cfg.skip_unchanged -%}
        {%- set same = [] -%}
        {%- for c in idempotent_merge_names(cfg.compare_columns) -%}{%- do same.append('source.' ~ c ~ ' <=> target.' ~ c) -%}{%- endfor -%}
        {%- do conditions.append(('not (' ~ (same | join(' and ')) ~ ')') if same else 'false') -%}
    {%- endif -%}
    {%- if not cfg.update_columns -%}
        {#- nothing an update could set (only key columns, or all excluded): no update ops -#}
        {%- set conditions = ['false'] -%}
    {%- endif -%}
    {%- set key_set = keys | map('lower') | list -%}
    with source_newest as (
        select
            {{ idempotent_merge_names(cfg.columns) | join(', ') }},
            true as dbt_im_exists
        {%- if one_row_per_key %}
        from {{ source }}
        {%- else %}
        from (
            {{ idempotent_merge_newest_sql(cfg, source) | indent(12) }}
        ) as newest
        {%- endif %}
    ),

    target_in_scope as (
        select
            {{ idempotent_merge_names(cfg.columns) | join(', ') }},
            true as dbt_im_exists
        from {{ target }} as target
        {%- if scope %}
        where {{ scope | join(' and ') }}
        {%- endif %}
    ),

    classified as (
        select
            {%- for c in cfg.columns %}
            {%- set qc = adapter.quote_column(c) %}
            {%- if (c | lower) in key_set %}
            case when source.dbt_im_exists then source.{{ qc }} else target.{{ qc }} end as {{ qc }},
            {%- else %}
            source.{{ qc }},
            {%- endif %}
            {%- endfor %}
            case
                when target.dbt_im_exists is null then 'insert'
                {%- if cfg.delete_missing %}
                when source.dbt_im_exists is null
                    and {{ in_interval('target.' ~ adapter.quote_column(cfg.interval_column), cfg.interval_type, cfg.bounds) }}
                    then 'delete'
                when source.dbt_im_exists is null then null
                {%- endif %}
                when {{ (conditions | join(' and ')) if conditions else 'true' }} then 'update'
            end as dbt_im_op
        from source_newest as source
        {{ 'full outer' if cfg.delete_missing else 'left' }} join target_in_scope as target
            on {{ idempotent_merge_key_match(keys, 'target', 'source') }}
    )

    select * from classified
    where dbt_im_op is not null
{% endmacro %}

{% macro idempotent_merge_change_set_sql(cfg, source, target, one_row_per_key=false) %}
    {#- The change set of the model's rows against target (a table, or a table at a version): batch_column's fold, or the versioned one. -#}
    {%- if cfg.batch_column -%}
        {{ return(idempotent_merge_batches_sql(cfg, source, target)) }}
    {%- endif -%}
    {{ return(idempotent_merge_changes_sql(cfg, source, target, one_row_per_key)) }}
{% endmacro %}

{% macro idempotent_merge_count_sql(cfg, changes) %}
    {#- The change set's rows per operation, and the units it applies (source keys, or for batch_column (key, batch) pairs). -#}
    {%- set sql -%}
        select
            dbt_im_op,
            count(*) as n,
            {{ 'sum(dbt_im_batch_count)' if cfg.batch_column else 'count(*)' }} as units
        from {{ changes }}
        group by dbt_im_op
    {%- endset -%}
    {{ return(sql) }}
{% endmacro %}

{% macro idempotent_merge_newest_sql(cfg, source) %}
    {#-
        The source reduced to one row per key: the newest by version_column (then
        tie_break_column). MERGE then never sees two source rows for one target row. Without
        a version, idempotent_merge_check_source has already refused keys with differing rows,
        so any row of a key will do (they are all identical). A model with batch_column folds
        every batch instead (idempotent_merge_batches_sql).
    -#}
    {%- set order = [] -%}
    {%- for c in [cfg.version_column, cfg.tie_break_column] -%}
        {%- if c -%}{%- do order.append(adapter.quote_column(c) ~ ' desc') -%}{%- endif -%}
    {%- endfor -%}
    select {{ idempotent_merge_names(cfg.columns) | join(', ') }}
    from (
        select
            {{ idempotent_merge_names(cfg.columns) | join(', ') }},
            row_number() over (
                partition by {{ idempotent_merge_names(cfg.unique_key) | join(', ') }}
                order by {{ (order or ['1']) | join(', ') }}
            ) as dbt_im_rank
        from {{ source }}
    ) as ranked_source
    where dbt_im_rank = 1
{% endmacro %}

{% macro idempotent_merge_batches_sql(cfg, source, target) %}
    {#-
        The change set of a model with batch_column: one row per key that has at least one
        batch not yet applied to it, with dbt_im_op 'insert' (the key is new) or 'update'.
        target is the existing table, or none on a first load (every key is then an insert).

        Each (key, batch) is applied exactly once, whatever the grouping of batches into
        intervals and their order: the table keeps, in the column cfg.applied_column, every
        batch id applied to the row, written in the same commit as the row. A source row whose
        batch is in that list is left out; the others are folded into the row in batch order
        (Spark's aggregate() over the key's pending batches, sorted by batch id):
          - merge_update_expressions are applied once per batch, with target. the row so far
            and source. the batch (lambda variables of those names shadow the table aliases);
          - other update columns take the value of the newest batch (a late older batch never
            overwrites them);
          - columns that are not updated keep the values of the oldest batch, with
            merge_insert_expressions applied, as if the batches had arrived in order;
          - batch_column holds the newest batch id applied.
        So the row does not depend on the order in which the batches arrive, as long as the
        update expressions do not (sums, counts, greatest/least).
        A new key starts from its oldest pending batch, with merge_insert_expressions applied.
        Columns carried: the model's columns, cfg.applied_column (the new list),
        dbt_im_applied_before (the list the fold started from: the MERGE updates a row only if
        it still holds exactly that list), dbt_im_batch_count and dbt_im_op.
    -#}
    {%- set keys = cfg.unique_key -%}
    {%- set column_types = cfg.column_types -%}
    {%- set key_set = keys | map('lower') | list -%}
    {%- set batch = adapter.quote_column(cfg.batch_column) -%}
    {%- set applied = adapter.quote_column(cfg.applied_column) -%}
    {%- set update_set = cfg.update_columns | map('lower') | list -%}
    {#- the batch id comes first in the row struct, so array_sort orders a key's batches by it -#}
    {%- set batch_type = column_types[cfg.batch_column | lower] -%}
    {%- set row_columns = [batch] -%}
    {%- for c in cfg.columns if (c | lower) != (cfg.batch_column | lower) -%}
        {%- do row_columns.append(adapter.quote_column(c)) -%}
    {%- endfor -%}
    {%- set scope = cfg.scope -%}
    with source_rows as (
        {#- identical rows of one (key, batch) are one application; differing ones were refused -#}
        select distinct {{ idempotent_merge_names(cfg.columns) | join(', ') }}
        from {{ source }}
    ),

    {%- if target is not none %}

    target_in_scope as (
        select
            {{ idempotent_merge_names(cfg.columns) | join(', ') }},
            {{ applied }}
        from {{ target }} as target
        {%- if scope %}
        where {{ scope | join(' and ') }}
        {%- endif %}
    ),
    {%- endif %}

    pending as (
        select
            {%- for k in idempotent_merge_names(keys, 'source.') %}
            {{ k }},
            {%- endfor %}
            struct(
                {%- for c in row_columns %}
                source.{{ c }}{{ ',' if not loop.last }}
                {%- endfor %}
            ) as dbt_im_batch,
            {%- if target is not none %}
            case when target.{{ applied }} is not null then named_struct(
                {%- for c in cfg.columns %}
                {{ idempotent_merge_field(c) }}, target.{{ adapter.quote_column(c) }},
                {%- endfor %}
                'dbt_im_first', element_at(target.{{ applied }}, 1)
            ) end as dbt_im_target,
            target.{{ applied }} as dbt_im_applied_before
        from source_rows as source
        left join target_in_scope as target
            on {{ idempotent_merge_key_match(keys, 'target', 'source') }}
        where
            target.{{ applied }} is null
            or not array_contains(target.{{ applied }}, source.{{ batch }})
            {%- else %}
            null as dbt_im_target,
            cast(null as array<{{ batch_type }}>) as dbt_im_applied_before
        from source_rows as source
            {%- endif %}
    ),

    pending_per_key as (
        select
            {%- for k in idempotent_merge_names(keys) %}
            {{ k }},
            {%- endfor %}
            array_sort(collect_list(dbt_im_batch)) as dbt_im_batches,
            any_value(dbt_im_target) as dbt_im_target,
            any_value(dbt_im_applied_before) as dbt_im_applied_before
        from pending
        group by {{ idempotent_merge_names(keys) | join(', ') }}
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
                            {%- for c in cfg.columns %}
                            {{ idempotent_merge_field(c) }}, cast({{ cfg.insert_expressions.get(c, 'source.' ~ adapter.quote_column(c)) }} as {{ column_types[c | lower] }}),
                            {%- endfor %}
                            'dbt_im_first', cast(source.{{ batch }} as {{ batch_type }})
                        )
                    )[0]
                    else dbt_im_target
                end,
                (target, source) -> named_struct(
                    {%- for c in cfg.columns %}
                    {%- set lc = c | lower %}
                    {%- set qc = adapter.quote_column(c) %}
                    {%- if lc in key_set %}
                    {{ idempotent_merge_field(c) }}, target.{{ qc }}
                    {%- elif lc == (cfg.batch_column | lower) %}
                    {{ idempotent_merge_field(c) }}, cast(greatest(target.{{ qc }}, source.{{ qc }}) as {{ batch_type }})
                    {%- elif lc in update_set and c in cfg.update_expressions %}
                    {{ idempotent_merge_field(c) }}, cast({{ cfg.update_expressions[c] }} as {{ column_types[lc] }})
                    {%- elif lc in update_set %}
                    {{ idempotent_merge_field(c) }}, cast(
                        case when source.{{ batch }} > target.{{ batch }} then source.{{ qc }} else target.{{ qc }} end
                        as {{ column_types[lc] }}
                    )
                    {%- else %}
                    {{ idempotent_merge_field(c) }}, case
                        when source.{{ batch }} < target.dbt_im_first
                            then cast({{ cfg.insert_expressions.get(c, 'source.' ~ qc) }} as {{ column_types[lc] }})
                        else target.{{ qc }}
                    end
                    {%- endif %},
                    {%- endfor %}
                    'dbt_im_first', cast(least(target.dbt_im_first, source.{{ batch }}) as {{ batch_type }})
                )
            ) as dbt_im_row,
            array_sort(array_union(
                coalesce(dbt_im_applied_before, cast(array() as array<{{ batch_type }}>)),
                transform(dbt_im_batches, pending_batch -> cast(pending_batch.{{ batch }} as {{ batch_type }}))
            )) as {{ applied }},
            dbt_im_applied_before,
            size(dbt_im_batches) as dbt_im_batch_count
        from pending_per_key
    )

    select
        {%- for c in idempotent_merge_names(cfg.columns) %}
        dbt_im_row.{{ c }} as {{ c }},
        {%- endfor %}
        {{ applied }},
        dbt_im_applied_before,
        dbt_im_batch_count,
        dbt_im_op
    from folded
{% endmacro %}

{% macro idempotent_merge_names(names, prefix='') %}
    {#-
        Column names as the SQL writes them (adapter.quote_column: as they are when plain,
        otherwise in backticks), each after prefix (e.g. 'source.'): a list to join.
    -#}
    {%- set written = [] -%}
    {%- for name in names -%}
        {%- do written.append(prefix ~ adapter.quote_column(name)) -%}
    {%- endfor -%}
    {{ return(written) }}
{% endmacro %}

{% macro idempotent_merge_field(name) %}
    {#- A column name as a named_struct field name: a string literal holding the name itself. -#}
    {{- return("'" ~ (name | replace('\\', '\\\\') | replace("'", "\\'")) ~ "'") -}}
{% endmacro %}

{% macro idempotent_merge_key_match(keys, left, right) %}
    {#-
        Null-safe equality of every key column between two aliases: left.k <=> right.k and ...
        A key with a NULL part then matches its own earlier row instead of being inserted again.
    -#}
    {%- set parts = [] -%}
    {%- for k in idempotent_merge_names(keys) -%}
        {%- do parts.append(left ~ '.' ~ k ~ ' <=> ' ~ right ~ '.' ~ k) -%}
    {%- endfor -%}
    {{- return(parts | join(' and ')) -}}
{% endmacro %}

{% macro idempotent_merge_sql(cfg, changes, target) %}
    {#-
        The one MERGE renderer. changes is the relation built from idempotent_merge_changes_sql
        (or idempotent_merge_batches_sql for batch_column): one row per key, already reduced to
        real changes and delete markers. The ON clause carries the target-side scope
        (incremental_predicates, and the interval when the interval column is part of the key)
        so the engine prunes files. The WHEN conditions repeat the guard, so that even a change
        set computed from an older snapshot can never overwrite a newer row: a strictly newer
        version_column, or, for batch_column, a row still holding exactly the applied batches
        the change was folded from (whose values are then final: no expression is applied
        here). Every clause is keyed on dbt_im_op (idempotent_merge_clauses).
        A WHEN MATCHED clause is always present: a MERGE with only WHEN NOT MATCHED can let two
        concurrent Iceberg writers both insert (apache/iceberg issue 12653). A model with no
        column to update (only key columns, or all excluded) gets no update clause; its
        matched clause is then the delete, which only fires on delete markers.
    -#}
    {%- set m = idempotent_merge_clauses(cfg) -%}
    merge into {{ target }} as target
    using {{ changes }} as source
        on {{ m.on }}
    {%- if m.delete %}
    when matched and source.dbt_im_op = 'delete' then delete
    {%- endif %}
    {%- if m.update_columns %}
    when matched and {{ m.update_when }} then update set
        {%- for c in m.update_columns %}
        target.{{ adapter.quote_column(c) }} = {{ m.update_values[c] }}{{ ',' if not loop.last }}
        {%- endfor %}
    {%- endif %}
    when not matched and source.dbt_im_op = 'insert' then insert (
        {{ idempotent_merge_names(m.insert_columns) | join(',\n        ') }}
    ) values (
        {%- for c in m.insert_columns %}
        {{ m.insert_values[c] }}{{ ',' if not loop.last }}
        {%- endfor %}
    )
{% endmacro %}

{% macro idempotent_merge_clauses(cfg) %}
    {#-
        What the MERGE does, once, for both its renderers (idempotent_merge_sql, the MERGE;
        idempotent_merge_staged_sql, the same change as a query): {'on': the key match plus the
        target-side scope, 'delete': whether a matched delete marker deletes, 'update_columns',
        'update_when': the update clause's condition (the guard), 'update_values' and
        'insert_values': column -> expression (target. and source. as in the MERGE),
        'insert_columns'}.
    -#}
    {%- set batch_mode = cfg.batch_column is not none -%}
    {%- if batch_mode -%}
        {#- the fold computed the whole row (a late older batch can change any non-key column) -#}
        {%- set update_columns = [] -%}
        {%- for c in cfg.columns if (c | lower) not in (cfg.unique_key | map('lower') | list) -%}
            {%- do update_columns.append(c) -%}
        {%- endfor -%}
        {%- do update_columns.append(cfg.applied_column) -%}
    {%- else -%}
        {%- set update_columns = cfg.update_columns | list -%}
    {%- endif -%}
    {%- set insert_columns = cfg.columns + ([cfg.applied_column] if batch_mode else []) -%}
    {%- set on = [idempotent_merge_key_match(cfg.unique_key, 'target', 'source')] + (cfg.scope | list) -%}
    {%- set update_when = ["source.dbt_im_op = 'update'"] -%}
    {%- if batch_mode -%}
        {%- do update_when.append('target.' ~ adapter.quote_column(cfg.applied_column) ~ ' <=> source.dbt_im_applied_before') -%}
    {%- elif cfg.version_column -%}
        {%- set v = adapter.quote_column(cfg.version_column) -%}
        {%- do update_when.append('source.' ~ v ~ ' > target.' ~ v) -%}
    {%- endif -%}
    {%- set update_values = {} -%}
    {%- for c in update_columns -%}
        {%- set qc = adapter.quote_column(c) -%}
        {%- do update_values.update({c: 'source.' ~ qc if batch_mode else cfg.update_expressions.get(c, 'source.' ~ qc)}) -%}
    {%- endfor -%}
    {%- set insert_values = {} -%}
    {%- for c in insert_columns -%}
        {%- set qc = adapter.quote_column(c) -%}
        {%- do insert_values.update({c: 'source.' ~ qc if batch_mode else cfg.insert_expressions.get(c, 'source.' ~ qc)}) -%}
    {%- endfor -%}
    {{ return({
        'on': on | join('\n        and '),
        'delete': cfg.delete_missing or not update_columns,
        'update_columns': update_columns,
        'update_when': update_when | join(' and '),
        'update_values': update_values,
        'insert_values': insert_values,
        'insert_columns': insert_columns,
    }) }}
{% endmacro %}

{% macro idempotent_merge_initial_sql(cfg, source) %}
    {#-
        The rows of a first load (or --full-refresh): the newest row per key, with
        merge_insert_expressions applied exactly as a MERGE insert would apply them, each cast
        to the model column's type so the created table has the model's schema.
    -#}
    select
        {%- for c in cfg.columns %}
        {%- if c in cfg.insert_expressions %}
        cast({{ cfg.insert_expressions[c] }} as {{ cfg.column_types[c | lower] }}) as {{ adapter.quote_column(c) }}{{ ',' if not loop.last }}
        {%- else %}
        source.{{ adapter.quote_column(c) }}{{ ',' if not loop.last }}
        {%- endif %}
        {%- endfor %}
    from (
        {{ idempotent_merge_newest_sql(cfg, source) | indent(8) }}
    ) as source
{% endmacro %}

{% macro idempotent_merge_create_sql(target, sql, replace) %}
    {#-
        The CREATE TABLE AS of a first load (replace false) or a full refresh (replace true):
        dbt-spark's create_table_as (file format, options, properties, partitioning, location,
        comment), which always says `create or replace table` for Delta and Iceberg. A first
        load must never replace a table another run created meanwhile (it would lose that run's
        rows): it says `create table`, which fails if the table exists.
    -#}
    {%- set create = create_table_as(False, target, sql) -%}
    {%- if replace -%}
        {{ return(create) }}
    {%- endif -%}
    {%- set first_load = create | replace('create or replace table', 'create table', 1) -%}
    {%- if not first_load.strip().startswith('create table') -%}
        {{ exceptions.raise_compiler_error('idempotent_merge_create_sql: create_table_as rendered no CREATE TABLE statement for ' ~ target ~ ':\n' ~ create) }}
    {%- endif -%}
    {{ return(first_load) }}
{% endmacro %}
