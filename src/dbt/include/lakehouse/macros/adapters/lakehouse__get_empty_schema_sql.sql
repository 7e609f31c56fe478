{% macro lakehouse__get_empty_schema_sql(columns) %}
    {#-
        dbt's contract check selects one typed NULL per yml column and compares the schema
        Spark returns with the model's. dbt's own version writes a name as it is unless the
        column sets quote: true, so `customer name` or `order` broke the check with a raw
        PARSE_SYNTAX_ERROR. Here a name is written as the strategy writes every name
        (adapter.quote_column: in backticks when Spark needs them), or in backticks when the
        column asks for quote: true. Otherwise the same as dbt's default__get_empty_schema_sql:
        a column without data_type is refused, a bare numeric type warns.
    -#}
    {%- set col_err = [] -%}
    {%- set col_naked_numeric = [] -%}
    select
    {% for i in columns %}
        {%- set col = columns[i] -%}
        {%- if col['data_type'] is not defined -%}
            {%- do col_err.append(col['name']) -%}
        {%- elif col['data_type'].strip().lower() in ('numeric', 'decimal', 'number') -%}
            {%- do col_naked_numeric.append(col['name']) -%}
        {%- endif -%}
        {%- set col_name = adapter.quote(col['name']) if col.get('quote') else adapter.quote_column(col['name']) %}
        {{ cast('null', col['data_type']) }} as {{ col_name }}{{ ", " if not loop.last }}
    {%- endfor -%}
    {%- if (col_err | length) > 0 -%}
        {{ exceptions.column_type_missing(column_names=col_err) }}
    {%- elif (col_naked_numeric | length) > 0 -%}
        {{ exceptions.warn("Detected columns with numeric type and unspecified precision/scale, this can lead to unintended rounding: " ~ col_naked_numeric ~ "`") }}
    {%- endif -%}
{% endmacro %}
