{% macro lakehouse_commit_metadata_reset(file_format) %}
    {#- Unset the commit label of lakehouse_commit_metadata, so no later commit of the session carries it. -#}
    {%- call statement('lakehouse_commit_metadata_reset') -%}
        reset `{{ lakehouse_commit_metadata_key(file_format) }}`
    {%- endcall -%}
{% endmacro %}
