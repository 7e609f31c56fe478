{% macro get_incremental_idempotent_merge_sql(arg_dict) %}
    {#-
        The idempotent_merge incremental strategy (found by dbt's get_incremental_<name>_sql
        lookup). Validates the configs, checks the model's new rows, then
          - first run (no table yet, or --full-refresh): creates the table from the source
            reduced to the newest row per key (batch_column: every batch folded per key), in
            one statement;
          - otherwise: computes the real changes (idempotent_merge_changes_sql, or
            idempotent_merge_batches_sql for batch_column) once into a cached temporary view
            and, only if there are any, applies them with one MERGE: one atomic commit, or
            nothing.
        Logs one report line and returns a final SELECT of the figures as the model's main
        statement (the work itself has been done, and committed, by then).
    -#}
    {%- set source = arg_dict['temp_relation'] -%}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set existing = arg_dict.get('existing_relation') -%}
    {%- set file_format = config.get('file_format', 'delta') -%}
    {#- the model's columns; their types are the table's where it exists (the fold and the casts must produce exactly those) -#}
    {%- set model_columns = idempotent_merge_columns(source) -%}
    {%- set column_types = model_columns.types -%}
    {%- if existing is not none -%}
        {%- do column_types.update(idempotent_merge_columns(existing).types) -%}
    {%- endif -%}
    {%- set cfg = idempotent_merge_config(model_columns.names, column_types) -%}
    {%- if cfg.interval_column and cfg.interval_type == 'date' and not interval_is_whole_days() -%}
        {%- do idempotent_merge_drop_staging(source) -%}
        {%- do in_interval(cfg.interval_column, 'date') -%}
    {%- endif -%}
    {%- if not config.get('allow_nondeterministic_model', false) -%}
        {%- do idempotent_merge_assert_deterministic('the model code', [model.compiled_code or '']) -%}
    {%- endif -%}
    {%- set source_stats = idempotent_merge_check_source(cfg, source, existing) -%}
    {%- set batch_mode = cfg.batch_column is not none -%}

    {%- if existing is none -%}
        {%- if batch_mode -%}
            {%- set initial_sql -%}
                select {{ (cfg.columns + [cfg.applied_column]) | join(', ') }}
                from (
                    {{ idempotent_merge_batches_sql(cfg, source, none, column_types) }}
                ) as folded
            {%- endset -%}
        {%- else -%}
            {%- set initial_sql = idempotent_merge_initial_sql(cfg, source, column_types) -%}
        {%- endif -%}
        {%- call statement('idempotent_merge_create') -%}
            {{ create_table_as(False, target, initial_sql) }}
        {%- endcall -%}
        {%- set planned = {'insert': source_stats.source_keys, 'applied': source_stats.source_units} -%}
        {%- set stats = idempotent_merge_report(cfg, target, file_format, source_stats, planned) -%}
    {%- else -%}
        {%- set changes = target.identifier ~ '__dbt_changes' -%}
        {#- a model allowed to be non-deterministic may return other rows on the next read: keep the newest-row window -#}
        {%- set one_row_per_key = source_stats.source_rows == source_stats.source_keys
            and not config.get('allow_nondeterministic_model', false) -%}
        {%- call statement('idempotent_merge_changes') -%}
            create or replace temporary view {{ changes }} as
            {% if batch_mode -%}
            {{ idempotent_merge_batches_sql(cfg, source, target, column_types) }}
            {%- else -%}
            {{ idempotent_merge_changes_sql(cfg, source, target, one_row_per_key) }}
            {%- endif %}
        {%- endcall -%}
        {#- computed once, here: the count and the MERGE (which may read its source twice) use these rows -#}
        {%- do run_query('cache table ' ~ changes) -%}
        {%- set planned = {} -%}
        {%- set applied_units = [] -%}
        {%- set count_sql -%}
            select dbt_im_op, count(*) as n, {{ 'sum(dbt_im_batch_count)' if batch_mode else 'count(*)' }} as units
            from {{ changes }}
            group by dbt_im_op
        {%- endset -%}
        {%- for row in run_query(count_sql).rows -%}
            {%- do planned.update({row['dbt_im_op']: row['n']}) -%}
            {%- if row['dbt_im_op'] != 'delete' -%}{%- do applied_units.append(row['units']) -%}{%- endif -%}
        {%- endfor -%}
        {%- if planned -%}
            {%- call statement('idempotent_merge') -%}
                {{ idempotent_merge_sql(cfg, changes, target) }}
            {%- endcall -%}
            {%- if batch_mode -%}
                {%- do idempotent_merge_verify_batches(cfg, changes, target) -%}
            {%- endif -%}
            {%- do planned.update({'applied': applied_units | sum}) -%}
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
