{% macro lakehouse__get_column_names() %}
    {#-
        The yml's column names, for the select dbt wraps around a contracted model's query
        before creating its table (get_select_subquery). As lakehouse__get_empty_schema_sql:
        each name written as the strategy writes it (adapter.quote_column), or in backticks
        when the column sets quote: true; dbt's default writes `customer name` bare.
    -#}
    {%- set user_provided_columns = model['columns'] -%}
    {%- for i in user_provided_columns %}
        {%- set col = user_provided_columns[i] -%}
        {%- set col_name = adapter.quote(col['name']) if col.get('quote') else adapter.quote_column(col['name']) -%}
        {{ col_name }}{{ ", " if not loop.last }}
    {%- endfor -%}
{% endmacro %}
