{% macro lakehouse_drop_table(relation) %}
    {#-
        Drop a table and its files (adapter.drop_table). A plain DROP of an Iceberg table of
        the session catalog (Hive) keeps its data and metadata files, so every Python model's
        <model>__dbt_tmp staging table and every dropped table stayed on disk for good: it is
        dropped with PURGE, and its emptied folder removed. A Delta table of the session
        catalog is managed: DROP deletes its folder.
    -#}
    {%- do adapter.drop_table(relation) -%}
{% endmacro %}
