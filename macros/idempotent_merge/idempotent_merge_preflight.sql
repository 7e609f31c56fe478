{% macro idempotent_merge_preflight(existing) %}
    {#-
        Checks that need no data, run by the materialization before anything is written (not
        even the staging relation): the interval vars, and, when the table exists, every
        config against its columns and the interval against the interval column's type.
    -#}
    {%- if config.get('interval_column') -%}
        {%- do interval_bounds() -%}
    {%- endif -%}
    {%- if existing is not none -%}
        {%- set table_columns = idempotent_merge_columns(existing) -%}
        {%- set cfg = idempotent_merge_config(table_columns.names, table_columns.types) -%}
        {%- if cfg.interval_column -%}
            {%- do in_interval(cfg.interval_column, cfg.interval_type) -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
