{#-
    Seeds: the CSV file is read strictly first (adapter.check_seed_file, seeds.py): dbt reads a
    seed leniently, and a quote never closed would load the rest of the file as one value. These
    are the first steps of dbt's seed materialization that write, so a refused seed leaves its
    table as it was.

    A seed without its table is created with its rows in one commit (CREATE TABLE AS SELECT
    over the rows): a reader meets no table or every row, never an empty table between dbt-spark's
    CREATE and INSERT, and a killed load leaves no table or all of it. Should another load of
    the seed create the table first, this one replaces its rows as below. (On Delta it is also
    the cheaper write: an INSERT OVERWRITE of a table lists its files first, 1.5-3.6 s against
    under one for the CREATE.)

    A seed that already has its table is reloaded in one commit: dbt-spark drops the table,
    creates it again and inserts the rows in batches, so a reader (or a model of a scheduler's
    other run) met no table or part of the rows, a kill in between left them so, and two loads
    at once (two DAG runs of one pipeline) could each drop the other's table and both insert:
    twice the rows. Here the table is kept and its rows are replaced by one INSERT OVERWRITE of
    every row: a reader sees the old rows or the new ones, a killed load changed nothing, and two
    loads at once leave one copy (the later overwrite wins; a commit another load beat is
    written again). A table whose columns (names or types) are no longer the file's, a
    partitioned seed (a dynamic partition overwrite would keep partitions the file no longer
    has) and --full-refresh are dropped and created again as dbt-spark does.
-#}

{% macro lakehouse__create_csv_table(model, agate_table) %}
    {%- do lakehouse_check_seed_file(model, agate_table) -%}
    {%- if agate_table.rows | length == 0 -%}
        {#- no row to create it from: the columns' types are dbt-spark's -#}
        {{ return(spark__create_csv_table(model, agate_table)) }}
    {%- endif -%}
    {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
    {%- set names = [] -%}
    {%- for col_name in agate_table.column_names -%}
        {%- do names.append(adapter.quote_seed_column(col_name | string, quote_seed_column)) -%}
    {%- endfor -%}
    {%- set rows_sql, bindings = lakehouse_seed_rows(model, agate_table) -%}
    {%- set sql -%}
        create table {{ this.render() }}
        {{ file_format_clause() }}
        {{ partition_cols(label="partitioned by") }}
        {{ clustered_cols(label="clustered by") }}
        {{ location_clause() }}
        {{ comment_clause() }}
        as select * from values
        {{ rows_sql }} as seed_rows ({{ names | join(', ') }})
    {%- endset -%}
    {%- do adapter.create_seed_table(sql, lakehouse_seed_overwrite_sql(rows_sql), bindings) -%}
    {#- dbt's seed materialization calls load_csv_rows next: the rows are in already -#}
    {%- do model.update({'lakehouse_seed_rows_loaded': true}) -%}
    {{ return(sql) }}
{% endmacro %}

{% macro lakehouse__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
    {%- do lakehouse_check_seed_file(model, agate_table) -%}
    {%- set partitioned = config.get('partition_by') -%}
    {%- if full_refresh or partitioned or not lakehouse_seed_columns_match(model, old_relation, agate_table) -%}
        {{ return(spark__reset_csv_table(model, full_refresh, old_relation, agate_table)) }}
    {%- endif -%}
    {%- if agate_table.rows | length == 0 -%}
        {#- dbt loads no row of an empty file: its rows are removed here, in one commit -#}
        {%- call statement('_') -%}
            delete from {{ old_relation.render() }}
        {%- endcall -%}
    {%- endif -%}
    {{ return('-- ' ~ old_relation.render() ~ ' kept: its rows are replaced in one commit') }}
{% endmacro %}

{% macro lakehouse__load_csv_rows(model, agate_table) %}
    {#- every row in one statement: one commit, whatever the file's length -#}
    {%- if model.get('lakehouse_seed_rows_loaded') -%}
        {{ return('') }}
    {%- endif -%}
    {%- set rows_sql, bindings = lakehouse_seed_rows(model, agate_table) -%}
    {%- set sql = lakehouse_seed_overwrite_sql(rows_sql) -%}
    {%- do adapter.load_seed_rows(sql, bindings) -%}
    {{ return(sql) }}
{% endmacro %}

{% macro lakehouse_seed_overwrite_sql(rows_sql) %}
    {{ return('insert overwrite table ' ~ this.render() ~ ' values\n' ~ rows_sql) }}
{% endmacro %}

{% macro lakehouse_seed_rows(model, agate_table) %}
    {#- the rows as a VALUES list of typed placeholders, and their values in order -#}
    {%- set casts = [] -%}
    {%- for type in lakehouse_seed_types(model, agate_table) -%}
        {%- do casts.append('cast(' ~ get_binding_char() ~ ' as ' ~ type ~ ')') -%}
    {%- endfor -%}
    {%- set row_sql = '(' ~ casts | join(', ') ~ ')' -%}
    {%- set bindings = [] -%}
    {%- set rows = [] -%}
    {%- for row in agate_table.rows -%}
        {%- do bindings.extend(row) -%}
        {%- do rows.append(row_sql) -%}
    {%- endfor -%}
    {{ return((rows | join(',\n'), bindings)) }}
{% endmacro %}

{% macro lakehouse_seed_columns_match(model, relation, agate_table) %}
    {#- whether the table's columns are the file's, by name and type, in order; by name only
        for a file without rows, whose types dbt cannot infer -#}
    {%- set typed = agate_table.rows | length > 0 -%}
    {%- set types = lakehouse_seed_types(model, agate_table) -%}
    {%- set wanted = [] -%}
    {%- for col_name in agate_table.column_names -%}
        {%- do wanted.append(((col_name | string | lower), (types[loop.index0] | lower | replace(' ', '')) if typed else '')) -%}
    {%- endfor -%}
    {%- set found = [] -%}
    {%- for column in adapter.get_columns_in_relation(relation) -%}
        {%- do found.append(((column.name | lower), (column.data_type | lower | replace(' ', '')) if typed else '')) -%}
    {%- endfor -%}
    {{ return(found == wanted) }}
{% endmacro %}

{% macro lakehouse_seed_types(model, agate_table) %}
    {#- each column's type, as dbt-spark creates the seed's table: column_types, else inferred -#}
    {%- set column_override = model['config'].get('column_types', {}) -%}
    {%- set types = [] -%}
    {%- for col_name in agate_table.column_names -%}
        {%- do types.append(column_override.get(col_name, adapter.convert_type(agate_table, loop.index0))) -%}
    {%- endfor -%}
    {{ return(types) }}
{% endmacro %}

{% macro lakehouse_check_seed_file(model, agate_table) %}
    {#- the file dbt read (load_agate_table sets original_abspath), else the node's own path -#}
    {%- set path = agate_table.original_abspath or (model.root_path ~ '/' ~ model.original_file_path) -%}
    {%- do adapter.check_seed_file(model.unique_id, model.original_file_path, path, model.config.get('delimiter', ',')) -%}
{% endmacro %}
