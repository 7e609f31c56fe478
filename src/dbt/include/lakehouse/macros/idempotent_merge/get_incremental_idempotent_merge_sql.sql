{% macro get_incremental_idempotent_merge_sql(arg_dict) %}
    {#-
        dbt's name for the strategy (found by adapter.get_incremental_strategy_macro). The
        strategy decides from query results whether to MERGE at all, so it cannot be one
        returned SQL string: the lakehouse incremental materialization runs it
        (idempotent_merge_plan, idempotent_merge_run). Reaching this macro means another
        materialization asked for the SQL.
    -#}
    {% set msg %}
Model {{ model.unique_id }}: incremental_strategy 'idempotent_merge' runs inside the lakehouse adapter's incremental materialization (materialized='incremental', adapter type lakehouse); it cannot be rendered as one SQL statement for another materialization.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg) }}
{% endmacro %}
