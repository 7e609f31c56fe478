{% macro idempotent_merge_columns(relation) %}
    {#- The relation's columns: {'names': [name, ...], 'types': {lower-cased name: Spark type}}. -#}
    {%- set names = [] -%}
    {%- set types = {} -%}
    {%- for col in adapter.get_columns_in_relation(relation) -%}
        {%- do names.append(col.name) -%}
        {%- do types.update({col.name | lower: col.dtype}) -%}
    {%- endfor -%}
    {{ return({'names': names, 'types': types}) }}
{% endmacro %}
