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
        {%- if c -%}{%- do order.append(c ~ ' desc') -%}{%- endif -%}
    {%- endfor -%}
    select {{ cfg.columns | join(', ') }}
    from (
        select
            {{ cfg.columns | join(', ') }},
            row_number() over (
                partition by {{ cfg.unique_key | join(', ') }}
                order by {{ (order or ['1']) | join(', ') }}
            ) as dbt_im_rank
        from {{ source }}
    ) as ranked_source
    where dbt_im_rank = 1
{% endmacro %}
