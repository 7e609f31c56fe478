{% macro idempotent_merge_sql(cfg, changes, target) %}
    {#-
        The one MERGE renderer. changes is the relation built from idempotent_merge_changes_sql:
        one row per key, already reduced to real changes and delete markers. The ON clause
        carries the target-side scope (incremental_predicates, and the interval when the
        interval column is part of the key) so the engine prunes files; the WHEN conditions
        repeat the version / batch guard so that even a stale change set can never overwrite a
        newer row. Every clause is keyed on dbt_im_op, and WHEN MATCHED clauses are always
        present (a MERGE with only WHEN NOT MATCHED can let two concurrent Iceberg writers both
        insert, apache/iceberg issue 12653).
    -#}
    {%- set scope = cfg.predicates | list -%}
    {%- if cfg.interval_in_key -%}
        {%- do scope.append(in_interval('target.' ~ cfg.interval_column, cfg.interval_type)) -%}
    {%- endif -%}
    {%- set guard = cfg.batch_column or cfg.version_column -%}
    {%- set update_columns = cfg.update_columns + ([cfg.batch_column] if cfg.batch_column and cfg.batch_column not in cfg.update_columns else []) -%}
    merge into {{ target }} as target
    using {{ changes }} as source
        on {{ idempotent_merge_key_match(cfg.unique_key, 'target', 'source') }}
        {%- for p in scope %}
        and {{ p }}
        {%- endfor %}
    {%- if cfg.delete_missing %}
    when matched and source.dbt_im_op = 'delete' then delete
    {%- endif %}
    when matched and source.dbt_im_op = 'update'
        {%- if guard %} and source.{{ guard }} > target.{{ guard }}{% endif %} then update set
        {%- for c in update_columns %}
        target.{{ c }} = {{ cfg.update_expressions.get(c, 'source.' ~ c) }}{{ ',' if not loop.last }}
        {%- endfor %}
    when not matched and source.dbt_im_op = 'insert' then insert (
        {{ cfg.columns | join(',\n        ') }}
    ) values (
        {%- for c in cfg.columns %}
        {{ cfg.insert_expressions.get(c, 'source.' ~ c) }}{{ ',' if not loop.last }}
        {%- endfor %}
    )
{% endmacro %}
