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
        here). Every clause is keyed on dbt_im_op.
        A WHEN MATCHED clause is always present: a MERGE with only WHEN NOT MATCHED can let two
        concurrent Iceberg writers both insert (apache/iceberg issue 12653). A model with no
        column to update (only key columns, or all excluded) gets no update clause; its
        matched clause is then the delete, which only fires on delete markers.
    -#}
    {%- set scope = cfg.scope -%}
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
    merge into {{ target }} as target
    using {{ changes }} as source
        on {{ idempotent_merge_key_match(cfg.unique_key, 'target', 'source') }}
        {%- for p in scope %}
        and {{ p }}
        {%- endfor %}
    {%- if cfg.delete_missing or not update_columns %}
    when matched and source.dbt_im_op = 'delete' then delete
    {%- endif %}
    {%- if update_columns %}
    when matched and source.dbt_im_op = 'update'
        {%- if batch_mode %} and target.{{ cfg.applied_column }} <=> source.dbt_im_applied_before
        {%- elif cfg.version_column %} and source.{{ cfg.version_column }} > target.{{ cfg.version_column }}
        {%- endif %} then update set
        {%- for c in update_columns %}
        target.{{ c }} = {{ 'source.' ~ c if batch_mode else cfg.update_expressions.get(c, 'source.' ~ c) }}{{ ',' if not loop.last }}
        {%- endfor %}
    {%- endif %}
    when not matched and source.dbt_im_op = 'insert' then insert (
        {{ insert_columns | join(',\n        ') }}
    ) values (
        {%- for c in insert_columns %}
        {{ 'source.' ~ c if batch_mode else cfg.insert_expressions.get(c, 'source.' ~ c) }}{{ ',' if not loop.last }}
        {%- endfor %}
    )
{% endmacro %}
