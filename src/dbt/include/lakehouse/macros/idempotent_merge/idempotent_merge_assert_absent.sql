{% macro idempotent_merge_assert_absent(target, staging) %}
    {#-
        A first load decides "no table yet" from dbt's relation cache, filled when the run
        started. Another run (of the same model, for another interval) may have created the
        table since; creating it again would replace that run's rows. Ask the metastore again
        (show tables: names only) right before the CREATE, and refuse with the fix if the table
        is there now. The CREATE itself never replaces (idempotent_merge_create_sql), so a table
        created between this check and the CREATE fails the CREATE instead.
    -#}
    {%- set found = run_query("show tables in " ~ target.schema ~ " like '" ~ target.identifier ~ "'") -%}
    {%- set tables = found.rows | rejectattr(2) | list -%}
    {%- if tables -%}
        {%- set problem -%}
            {{ target }} exists now, but did not when this run started: another run created it
            meanwhile, and a first load would replace that run's rows.
        {%- endset -%}
        {%- do idempotent_merge_raise(
            'nothing was written, because',
            [problem],
            staging=staging,
            fix='Run the same interval again: the rerun finds the table and merges into it.',
        ) -%}
    {%- endif -%}
{% endmacro %}
