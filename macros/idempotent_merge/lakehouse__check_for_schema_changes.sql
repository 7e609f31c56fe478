{% macro lakehouse__check_for_schema_changes(source_relation, target_relation) %}
    {#-
        dbt's schema-change check (on_schema_change), minus the column idempotent_merge adds to
        the table of a batch_column model (idempotent_merge_applied_column): the model never
        returns it, so it is neither a removed column nor one to drop with sync_all_columns.
    -#}
    {%- set changes = dbt.default__check_for_schema_changes(source_relation, target_relation) -%}
    {%- set applied = idempotent_merge_applied_column() -%}
    {%- if applied and config.get('incremental_strategy') == 'idempotent_merge' -%}
        {%- set removed = [] -%}
        {%- for col in changes['target_not_in_source'] if (col.name | lower) != applied -%}
            {%- do removed.append(col) -%}
        {%- endfor -%}
        {%- do changes.update({
            'target_not_in_source': removed,
            'schema_changed': (changes['source_not_in_target'] | length > 0)
                or (removed | length > 0)
                or (changes['new_target_types'] | length > 0),
        }) -%}
    {%- endif -%}
    {{ return(changes) }}
{% endmacro %}
