{% macro lakehouse_validate_incremental_strategy(raw_strategy, file_format) %}
    {#-
        The incremental strategy a model asks for, checked: one of the adapter's
        (adapter.valid_incremental_strategies(): dbt-spark's append, merge, insert_overwrite,
        microbatch, and idempotent_merge), or a custom one the project defines as a
        get_incremental_<name>_sql macro (dbt's lookup). dbt-spark's own strategies keep
        dbt-spark's checks; the others need a table format with MERGE.
    -#}
    {#- microbatch is not dbt-spark's (insert_overwrite by partition_by): each batch runs through idempotent_merge -#}
    {%- if raw_strategy in ['append', 'merge', 'insert_overwrite'] -%}
        {{ return(dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format)) }}
    {%- endif -%}
    {%- set macro_name = 'get_incremental_' ~ raw_strategy ~ '_sql' -%}
    {%- if raw_strategy not in adapter.valid_incremental_strategies() and context.get(macro_name) is none -%}
        {% set msg %}
Model {{ model.unique_id }}: unknown incremental_strategy {{ '"' ~ raw_strategy ~ '"' }}: no macro named {{ macro_name }} exists.
Known strategies: {{ adapter.valid_incremental_strategies() | join(', ') }}, or a get_incremental_<name>_sql macro of your project.
        {% endset %}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {%- if file_format not in ['delta', 'iceberg'] -%}
        {% set msg %}
Model {{ model.unique_id }}: incremental_strategy {{ '"' ~ raw_strategy ~ '"' }} needs a table format with MERGE, file_format 'delta' or 'iceberg', not {{ '"' ~ file_format ~ '"' }}.
        {% endset %}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {{ return(raw_strategy) }}
{% endmacro %}
