{% macro lakehouse_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates) %}
    {#-
        The SQL of every strategy but idempotent_merge and microbatch (which run their own
        statements, see idempotent_merge_run): dbt-spark's own strategies render as in dbt-spark; any other
        name resolves through dbt's get_incremental_<name>_sql lookup and is called with dbt's
        strategy arguments plus existing_relation.
    -#}
    {%- if strategy in ['append', 'merge', 'insert_overwrite'] -%}
        {{ return(dbt_spark_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates)) }}
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
