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
        {%- set columns = [] -%}
        {%- set column_types = {} -%}
        {%- for col in adapter.get_columns_in_relation(existing) -%}
            {%- do columns.append(col.name) -%}
            {%- do column_types.update({col.name | lower: col.dtype}) -%}
        {%- endfor -%}
        {%- set cfg = idempotent_merge_config(columns, column_types) -%}
        {%- if cfg.interval_column -%}
            {%- do in_interval(cfg.interval_column, cfg.interval_type) -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
