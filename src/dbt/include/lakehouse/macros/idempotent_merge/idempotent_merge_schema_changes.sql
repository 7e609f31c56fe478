{% macro idempotent_merge_schema_changes(on_schema_change, source_columns, table, target, staging) %}
    {#-
        dbt's on_schema_change for idempotent_merge, from the column lists already read (no
        describe again): the model's columns (source_columns) against the table's (table),
        leaving out the applied-batches column the strategy adds itself. fail (this project's
        folder default) refuses with both lists; ignore changes nothing; append_new_columns /
        sync_all_columns alter the table through dbt's sync_column_schemas. Returns the names
        the table gained and lost: {'added': [...], 'removed': [...]}.
    -#}
    {%- set applied = idempotent_merge_applied_column() -%}
    {%- set target_columns = table.columns | rejectattr('name', 'equalto', applied) | list -%}
    {%- set added = diff_columns(source_columns.columns, target_columns) -%}
    {%- set removed = diff_columns(target_columns, source_columns.columns) -%}
    {%- set retyped = diff_column_data_types(source_columns.columns, target_columns) -%}
    {%- if not (added or removed or retyped) or on_schema_change == 'ignore' -%}
        {{ return({'added': [], 'removed': []}) }}
    {%- endif -%}
    {%- if on_schema_change == 'fail' -%}
        {%- set problems = [] -%}
        {%- if added -%}
            {%- do problems.append('in the model, not in the table: ' ~ (added | map(attribute='name') | join(', '))) -%}
        {%- endif -%}
        {%- if removed -%}
            {%- do problems.append('in the table, not in the model: ' ~ (removed | map(attribute='name') | join(', '))) -%}
        {%- endif -%}
        {%- for change in retyped -%}
            {%- do problems.append('column ' ~ change.column_name ~ ' would become ' ~ change.new_type) -%}
        {%- endfor -%}
        {%- set fix -%}
Set on_schema_change to append_new_columns or sync_all_columns, or rebuild the table with --full-refresh over [begin, end), or alter the table yourself and rerun.
        {%- endset -%}
        {%- do idempotent_merge_raise("the model's columns and the table's are out of sync (on_schema_change: fail), so nothing was written:", problems, staging=staging, fix=fix) -%}
    {%- endif -%}
    {%- do sync_column_schemas(on_schema_change, target, {
        'schema_changed': true,
        'source_not_in_target': added,
        'target_not_in_source': removed,
        'source_columns': source_columns.columns,
        'target_columns': target_columns,
        'new_target_types': retyped,
    }) -%}
    {{ return({
        'added': added | map(attribute='name') | list,
        'removed': (removed | map(attribute='name') | list) if on_schema_change == 'sync_all_columns' else [],
    }) }}
{% endmacro %}
