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
        {%- do conditions.append('source.' ~ cfg.version_column ~ ' > target.' ~ cfg.version_column) -%}
    {%- endif -%}
    {%- if cfg.skip_unchanged -%}
        {%- set same = [] -%}
        {%- for c in cfg.compare_columns -%}{%- do same.append('source.' ~ c ~ ' <=> target.' ~ c) -%}{%- endfor -%}
        {%- do conditions.append(('not (' ~ (same | join(' and ')) ~ ')') if same else 'false') -%}
    {%- endif -%}
    {%- if not cfg.update_columns -%}
        {#- nothing an update could set (only key columns, or all excluded): no update ops -#}
        {%- set conditions = ['false'] -%}
    {%- endif -%}
    {%- set key_set = keys | map('lower') | list -%}
    with source_newest as (
        select
            {{ cfg.columns | join(', ') }},
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
            {{ cfg.columns | join(', ') }},
            true as dbt_im_exists
        from {{ target }} as target
        {%- if scope %}
        where {{ scope | join(' and ') }}
        {%- endif %}
    ),

    classified as (
        select
            {%- for c in cfg.columns %}
            {%- if (c | lower) in key_set %}
            case when source.dbt_im_exists then source.{{ c }} else target.{{ c }} end as {{ c }},
            {%- else %}
            source.{{ c }},
            {%- endif %}
            {%- endfor %}
            case
                when target.dbt_im_exists is null then 'insert'
                {%- if cfg.delete_missing %}
                when source.dbt_im_exists is null
                    and {{ in_interval('target.' ~ cfg.interval_column, cfg.interval_type, cfg.bounds) }}
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
