{% macro get_incremental_idempotent_merge_sql(arg_dict) %}
    {#-
        The idempotent_merge incremental strategy (found by dbt's get_incremental_<name>_sql
        lookup). Validates the configs, checks the model's new rows, then
          - first run (no table yet, or --full-refresh): creates the table from the source
            reduced to the newest row per key, in one statement;
          - otherwise: computes the real changes (idempotent_merge_changes_sql) once into a
            cached temporary view and, only if there are any, applies them with one MERGE:
            one atomic commit, or nothing.
        Logs one report line and returns a final SELECT of the figures as the model's main
        statement (the work itself has been done, and committed, by then).
    -#}
    {%- set source = arg_dict['temp_relation'] -%}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set existing = arg_dict.get('existing_relation') -%}
    {%- set file_format = config.get('file_format', 'delta') -%}
    {%- set model_columns = idempotent_merge_columns(existing if existing is not none else source) -%}
    {%- set column_types = model_columns.types -%}
    {%- set cfg = idempotent_merge_config(model_columns.names, column_types) -%}
    {%- if cfg.interval_column and cfg.interval_type == 'date' and not interval_is_whole_days() -%}
        {%- do idempotent_merge_drop_staging(source) -%}
        {%- do in_interval(cfg.interval_column, 'date') -%}
    {%- endif -%}
    {%- if not config.get('allow_nondeterministic_model', false) -%}
        {%- do idempotent_merge_assert_deterministic('the model code', [model.compiled_code or '']) -%}
    {%- endif -%}
    {%- set source_stats = idempotent_merge_check_source(cfg, source, existing) -%}

    {%- if existing is none -%}
        {%- call statement('idempotent_merge_create') -%}
            {{ create_table_as(False, target, idempotent_merge_initial_sql(cfg, source, column_types)) }}
        {%- endcall -%}
        {%- set stats = idempotent_merge_report(cfg, target, file_format, source_stats, {'insert': source_stats.source_keys}) -%}
    {%- else -%}
        {%- set changes = target.identifier ~ '__dbt_changes' -%}
        {#- a model allowed to be non-deterministic may return other rows on the next read: keep the newest-row window -#}
        {%- set one_row_per_key = source_stats.source_rows == source_stats.source_keys
            and not config.get('allow_nondeterministic_model', false) -%}
        {%- call statement('idempotent_merge_changes') -%}
            create or replace temporary view {{ changes }} as
            {{ idempotent_merge_changes_sql(cfg, source, target, one_row_per_key) }}
        {%- endcall -%}
        {#- computed once, here: the count and the MERGE (which may read its source twice) use these rows -#}
        {%- do run_query('cache table ' ~ changes) -%}
        {%- set planned = {} -%}
        {%- for row in run_query('select dbt_im_op, count(*) as n from ' ~ changes ~ ' group by dbt_im_op').rows -%}
            {%- do planned.update({row['dbt_im_op']: row['n']}) -%}
        {%- endfor -%}
        {%- if planned -%}
            {%- call statement('idempotent_merge') -%}
                {{ idempotent_merge_sql(cfg, changes, target) }}
            {%- endcall -%}
        {%- endif -%}
        {%- do run_query('uncache table if exists ' ~ changes) -%}
        {%- do run_query('drop view if exists ' ~ changes) -%}
        {%- set stats = idempotent_merge_report(cfg, target, file_format, source_stats, planned or none) -%}
    {%- endif -%}
    select
        {{ stats.inserted }} as rows_inserted,
        {{ stats.updated }} as rows_updated,
        {{ stats.deleted }} as rows_deleted,
        {{ stats.skipped }} as rows_skipped
{% endmacro %}
