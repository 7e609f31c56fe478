{% macro lakehouse__drop_relation(relation) %}
    {#-
        dbt's drop_relation (dbt-spark's, which says `drop <type> if exists`), with a table's
        files dropped too on Iceberg (lakehouse_drop_table): a --full-refresh of an Iceberg
        model drops the old table first, and without PURGE its files stayed in the warehouse.
    -#}
    {%- if relation.type == 'view' -%}
        {%- call statement('drop_relation', auto_begin=False) -%}
            drop view if exists {{ relation }}
        {%- endcall -%}
    {%- else -%}
        {%- do lakehouse_drop_table(relation) -%}
    {%- endif -%}
{% endmacro %}
