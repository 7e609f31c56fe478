{% macro dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) %}
    {#-
        Overrides dbt-spark's macro of the same name, which only knows append, merge,
        insert_overwrite and microbatch. Those still go through dbt-spark's own validation;
        any other name is accepted when a get_incremental_<name>_sql macro exists (dbt-core's
        lookup), and refused with the list of known strategies otherwise.
    -#}
    {%- if raw_strategy in ['append', 'merge', 'insert_overwrite', 'microbatch'] -%}
        {{ return(dbt.dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format)) }}
    {%- endif -%}
    {%- set macro_name = 'get_incremental_' ~ raw_strategy ~ '_sql' -%}
    {%- if context.get(macro_name) is none -%}
        {% set msg %}
Model {{ model.unique_id }}: unknown incremental_strategy {{ raw_strategy | tojson }}: no macro named {{ macro_name }} exists.
Known strategies: append, merge, insert_overwrite, microbatch, idempotent_merge (this project's retry-safe merge).
        {% endset %}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {%- if file_format not in ['delta', 'iceberg'] -%}
        {% set msg %}
Model {{ model.unique_id }}: incremental_strategy {{ raw_strategy | tojson }} needs a table format with MERGE, file_format 'delta' or 'iceberg', not {{ file_format | tojson }}.
        {% endset %}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {{ return(raw_strategy) }}
{% endmacro %}
