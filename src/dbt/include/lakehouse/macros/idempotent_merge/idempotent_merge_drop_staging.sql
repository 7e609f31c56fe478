{% macro idempotent_merge_drop_staging(source) %}
    {#-
        Drop a Python model's staging table (<model>__dbt_tmp) before a refusal, so a refused
        run leaves nothing behind. A SQL model stages a temporary view (no schema), which ends
        with the session and is left alone.
    -#}
    {%- if source.schema -%}
        {%- do run_query('drop table if exists ' ~ source) -%}
    {%- endif -%}
{% endmacro %}
