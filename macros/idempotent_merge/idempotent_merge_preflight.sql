{% macro idempotent_merge_preflight(existing, rebuild) %}
    {#-
        Checks that need no data, run by the materialization before anything is written (not
        even the staging relation): the interval vars; for a --full-refresh of an existing
        table, that the interval covers the model's whole history; and, when the table is
        merged into, every config against its columns and the interval against the interval
        column's type.
    -#}
    {%- if config.get('interval_column') -%}
        {%- do interval_bounds() -%}
    {%- endif -%}
    {%- if existing is not none and rebuild -%}
        {%- do idempotent_merge_full_refresh_check(existing) -%}
    {%- elif existing is not none -%}
        {%- set table_columns = idempotent_merge_columns(existing) -%}
        {%- set applied = idempotent_merge_applied_column() -%}
        {%- if applied and applied not in (table_columns.names | map('lower') | list) -%}
            {% set msg %}
Model {{ model.unique_id }} (incremental_strategy='idempotent_merge'): {{ existing }} has no {{ applied }} column, so it cannot tell which batches were applied to each row (it was built before idempotent_merge recorded them). Nothing was written.
Rebuild it once over its whole history: set the model's begin config to its first day and run it with --full-refresh over [begin, end).
            {% endset %}
            {{ exceptions.raise_compiler_error(msg) }}
        {%- endif -%}
        {%- set cfg = idempotent_merge_config(table_columns.names | reject('equalto', applied) | list, table_columns.types) -%}
        {%- if cfg.interval_column -%}
            {%- do in_interval(cfg.interval_column, cfg.interval_type) -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
