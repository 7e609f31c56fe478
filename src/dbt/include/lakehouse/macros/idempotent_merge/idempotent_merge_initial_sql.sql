{% macro idempotent_merge_initial_sql(cfg, source) %}
    {#-
        The rows of a first load (or --full-refresh): the newest row per key, with
        merge_insert_expressions applied exactly as a MERGE insert would apply them, each cast
        to the model column's type so the created table has the model's schema.
    -#}
    select
        {%- for c in cfg.columns %}
        {%- if c in cfg.insert_expressions %}
        cast({{ cfg.insert_expressions[c] }} as {{ cfg.column_types[c | lower] }}) as {{ c }}{{ ',' if not loop.last }}
        {%- else %}
        source.{{ c }}{{ ',' if not loop.last }}
        {%- endif %}
        {%- endfor %}
    from (
        {{ idempotent_merge_newest_sql(cfg, source) | indent(8) }}
    ) as source
{% endmacro %}
