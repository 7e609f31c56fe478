{% materialization incremental, adapter='spark', supported_languages=['sql', 'python'] -%}
    {#-
        dbt-spark's incremental materialization with one change: for idempotent_merge the
        first run and --full-refresh also go through the strategy, so the checks (NULL keys,
        ambiguous duplicates, rows outside the interval) and the newest-row-per-key reduction
        apply to the first load too. dbt-spark would create the table straight from the model
        SQL, duplicates and all. Every other strategy behaves exactly as in dbt-spark.
        on_schema_change defaults to 'fail' for idempotent_merge: a model whose columns no
        longer match its table stops with both column lists instead of merging by position.
    -#}
    {%- set raw_file_format = config.get('file_format', default='parquet') -%}
    {%- set raw_strategy = config.get('incremental_strategy') or 'append' -%}
    {%- set grant_config = config.get('grants') -%}

    {%- set file_format = dbt_spark_validate_get_file_format(raw_file_format) -%}
    {%- set strategy = dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) -%}
    {%- set idempotent = strategy == 'idempotent_merge' -%}

    {%- set unique_key = config.get('unique_key', none) -%}
    {%- set partition_by = config.get('partition_by', none) -%}
    {%- set language = model['language'] -%}
    {#-- dbt fills on_schema_change with 'ignore' when a model leaves it out; only a value the
         user set (unrendered_config) overrides idempotent_merge's default, 'fail' --#}
    {%- set user_set_on_schema_change = 'on_schema_change' in (model.get('unrendered_config') or {}) -%}
    {%- set requested_on_schema_change = 'fail' if idempotent and not user_set_on_schema_change else config.get('on_schema_change') -%}
    {%- set on_schema_change = incremental_validate_on_schema_change(requested_on_schema_change, default='ignore') -%}
    {%- set incremental_predicates = config.get('predicates', none) or config.get('incremental_predicates', none) -%}
    {%- set target_relation = this -%}
    {%- set existing_relation = load_relation(this) -%}
    {%- set tmp_relation = this.incorporate(path = {"identifier": this.identifier ~ '__dbt_tmp'}) -%}

    {#-- for SQL models the new rows are staged in a temporary view without database and schema --#}
    {%- if language == 'sql' -%}
        {%- set tmp_relation = tmp_relation.include(database=false, schema=false) -%}
    {%- endif -%}

    {%- if strategy in ['insert_overwrite', 'microbatch'] and partition_by -%}
        {%- call statement() -%}
            set spark.sql.sources.partitionOverwriteMode = DYNAMIC
        {%- endcall -%}
    {%- endif -%}

    {{ run_hooks(pre_hooks) }}

    {%- set rebuild = existing_relation is not none and (existing_relation.is_view or should_full_refresh()) -%}
    {%- if idempotent -%}
        {%- do idempotent_merge_preflight(existing_relation, rebuild) -%}
    {%- endif -%}
    {%- if rebuild and not (file_format == 'delta' and existing_relation.is_delta) -%}
        {#-- Delta replaces the table in one commit (create or replace); others drop first, as in dbt-spark --#}
        {%- do adapter.drop_relation(existing_relation) -%}
    {%- endif -%}
    {#-- idempotent_merge: a first load and a full refresh also go through the strategy, with no table to merge into --#}
    {%- set merge_into = none if rebuild else existing_relation -%}

    {%- if not idempotent and merge_into is none -%}
        {%- call statement('main', language=language) -%}
            {{ create_table_as(False, target_relation, compiled_code, language) }}
        {%- endcall -%}
        {%- do persist_constraints(target_relation, model) -%}
    {%- else -%}
        {%- if language == 'python' -%}
            {#-- a killed or refused earlier run can leave its staging table behind, and Iceberg
                 refuses to overwrite an existing table through saveAsTable: drop it first --#}
            {%- call statement('drop_stale_tmp_relation') -%}
                drop table if exists {{ tmp_relation }}
            {%- endcall -%}
        {%- endif -%}
        {%- call statement('create_tmp_relation', language=language) -%}
            {{ create_table_as(True, tmp_relation, compiled_code, language) }}
        {%- endcall -%}
        {%- if merge_into is not none -%}
            {%- do process_schema_changes(on_schema_change, tmp_relation, merge_into) -%}
        {%- endif -%}
        {%- call statement('main') -%}
            {{ dbt_spark_get_incremental_sql(strategy, tmp_relation, target_relation, merge_into, unique_key, incremental_predicates) }}
        {%- endcall -%}
        {%- if language == 'python' -%}
            {#-- a Python model stages a real table; drop it (a SQL model's temp view ends with the session) --#}
            {%- call statement('drop_relation') -%}
                drop table if exists {{ tmp_relation }}
            {%- endcall -%}
        {%- endif -%}
    {%- endif -%}

    {%- set should_revoke = should_revoke(existing_relation, full_refresh_mode) -%}
    {%- do apply_grants(target_relation, grant_config, should_revoke) -%}
    {%- do persist_docs(target_relation, model) -%}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}
