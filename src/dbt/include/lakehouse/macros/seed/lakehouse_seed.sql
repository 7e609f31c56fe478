{#-
    Seeds: dbt-spark's, after the seed's CSV file is read strictly (adapter.check_seed_file,
    seeds.py). dbt reads a seed leniently: a quote never closed would load the rest of the file
    as one value. These are the first steps of dbt's seed materialization that write (creating
    the table, or dropping and creating it again), so a refused seed leaves its table as it was.
-#}

{% macro lakehouse__create_csv_table(model, agate_table) %}
    {%- do lakehouse_check_seed_file(model, agate_table) -%}
    {{ return(spark__create_csv_table(model, agate_table)) }}
{% endmacro %}

{% macro lakehouse__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
    {%- do lakehouse_check_seed_file(model, agate_table) -%}
    {{ return(spark__reset_csv_table(model, full_refresh, old_relation, agate_table)) }}
{% endmacro %}

{% macro lakehouse_check_seed_file(model, agate_table) %}
    {#- the file dbt read (load_agate_table sets original_abspath), else the node's own path -#}
    {%- set path = agate_table.original_abspath or (model.root_path ~ '/' ~ model.original_file_path) -%}
    {%- do adapter.check_seed_file(model.unique_id, model.original_file_path, path, model.config.get('delimiter', ',')) -%}
{% endmacro %}
