{% macro idempotent_merge_columns(relation) %}
    {#-
        The relation's columns, read once: {'names': [name, ...], 'types': {lower-cased name:
        Spark type}, 'columns': [dbt Column, ...]} (the Column objects feed the schema-change
        comparison).
    -#}
    {%- set columns = adapter.get_columns_in_relation(relation) -%}
    {%- set types = {} -%}
    {%- for col in columns -%}
        {%- do types.update({col.name | lower: col.dtype}) -%}
    {%- endfor -%}
    {{ return({'names': columns | map(attribute='name') | list, 'types': types, 'columns': columns}) }}
{% endmacro %}
