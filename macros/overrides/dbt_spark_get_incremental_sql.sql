{% macro dbt_spark_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates) %}
    {#-
        Overrides dbt-spark's macro of the same name. Its own strategies render as before;
        any other name resolves through dbt-core's get_incremental_<name>_sql lookup and is
        called with dbt-core's strategy arguments plus existing_relation.
    -#}
    {%- if strategy in ['append', 'merge', 'insert_overwrite', 'microbatch'] -%}
        {{ return(dbt.dbt_spark_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates)) }}
    {%- endif -%}
    {%- set strategy_macro = adapter.get_incremental_strategy_macro(context, strategy) -%}
    {{ return(strategy_macro({
        'target_relation': target,
        'temp_relation': source,
        'existing_relation': existing,
        'unique_key': unique_key,
        'dest_columns': none,
        'incremental_predicates': incremental_predicates,
    })) }}
{% endmacro %}
