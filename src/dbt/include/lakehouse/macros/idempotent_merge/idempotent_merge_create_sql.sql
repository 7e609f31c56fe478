{% macro idempotent_merge_create_sql(target, sql, replace) %}
    {#-
        The CREATE TABLE AS of a first load (replace false) or a full refresh (replace true):
        dbt-spark's create_table_as (file format, options, properties, partitioning, location,
        comment), which always says `create or replace table` for Delta and Iceberg. A first
        load must never replace a table another run created meanwhile (it would lose that run's
        rows): it says `create table`, which fails if the table exists.
    -#}
    {%- set create = create_table_as(False, target, sql) -%}
    {%- if replace -%}
        {{ return(create) }}
    {%- endif -%}
    {%- set first_load = create | replace('create or replace table', 'create table', 1) -%}
    {%- if not first_load.strip().startswith('create table') -%}
        {{ exceptions.raise_compiler_error('idempotent_merge_create_sql: create_table_as rendered no CREATE TABLE statement for ' ~ target ~ ':\n' ~ create) }}
    {%- endif -%}
    {{ return(first_load) }}
{% endmacro %}
