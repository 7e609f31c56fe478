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
    {%- set batch = cfg.batch_column -%}
    {%- set applied = cfg.applied_column -%}
    {%- set update_set = cfg.update_columns | map('lower') | list -%}
    {#- the batch id comes first in the row struct, so array_sort orders a key's batches by it -#}
    {%- set batch_type = column_types[batch | lower] -%}
    {%- set row_columns = [batch] -%}
    {%- for c in cfg.columns if (c | lower) != (batch | lower) -%}
        {%- do row_columns.append(c) -%}
    {%- endfor -%}
    {%- set scope = cfg.scope -%}
    with source_rows as (
        {#- identical rows of one (key, batch) are one application; differing ones were refused -#}
        select distinct {{ cfg.columns | join(', ') }}
        from {{ source }}
    ),

    {%- if target is not none %}

    target_in_scope as (
        select
            {{ cfg.columns | join(', ') }},
            {{ applied }}
        from {{ target }} as target
        {%- if scope %}
        where {{ scope | join(' and ') }}
        {%- endif %}
    ),
    {%- endif %}

    pending as (
        select
            {%- for k in keys %}
            source.{{ k }},
            {%- endfor %}
            struct(
                {%- for c in row_columns %}
                source.{{ c }}{{ ',' if not loop.last }}
                {%- endfor %}
            ) as dbt_im_batch,
            {%- if target is not none %}
            case when target.{{ applied }} is not null then named_struct(
                {%- for c in cfg.columns %}
                '{{ c }}', target.{{ c }},
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
            {%- for k in keys %}
            {{ k }},
            {%- endfor %}
            array_sort(collect_list(dbt_im_batch)) as dbt_im_batches,
            any_value(dbt_im_target) as dbt_im_target,
            any_value(dbt_im_applied_before) as dbt_im_applied_before
        from pending
        group by {{ keys | join(', ') }}
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
                            '{{ c }}', cast({{ cfg.insert_expressions.get(c, 'source.' ~ c) }} as {{ column_types[c | lower] }}),
                            {%- endfor %}
                            'dbt_im_first', cast(source.{{ batch }} as {{ batch_type }})
                        )
                    )[0]
                    else dbt_im_target
                end,
                (target, source) -> named_struct(
                    {%- for c in cfg.columns %}
                    {%- set lc = c | lower %}
                    {%- if lc in key_set %}
                    '{{ c }}', target.{{ c }}
                    {%- elif lc == (batch | lower) %}
                    '{{ c }}', cast(greatest(target.{{ c }}, source.{{ c }}) as {{ batch_type }})
                    {%- elif lc in update_set and c in cfg.update_expressions %}
                    '{{ c }}', cast({{ cfg.update_expressions[c] }} as {{ column_types[lc] }})
                    {%- elif lc in update_set %}
                    '{{ c }}', cast(
                        case when source.{{ batch }} > target.{{ batch }} then source.{{ c }} else target.{{ c }} end
                        as {{ column_types[lc] }}
                    )
                    {%- else %}
                    '{{ c }}', case
                        when source.{{ batch }} < target.dbt_im_first
                            then cast({{ cfg.insert_expressions.get(c, 'source.' ~ c) }} as {{ column_types[lc] }})
                        else target.{{ c }}
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
        {%- for c in cfg.columns %}
        dbt_im_row.{{ c }} as {{ c }},
        {%- endfor %}
        {{ applied }},
        dbt_im_applied_before,
        dbt_im_batch_count,
        dbt_im_op
    from folded
{% endmacro %}
