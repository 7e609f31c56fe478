{% macro idempotent_merge_verify_batches(cfg, changes, target) %}
    {#-
        After the MERGE of a batch_column model: every batch the change set meant to apply is
        now in the row's applied list. The MERGE updates a row only if it still holds the list
        the change was folded from, so a row another run changed in between (a concurrent run
        committing after this run computed its changes) is left as it is: no batch is ever
        applied twice. This check turns that case into a failed run, so the scheduler retries
        and the rerun applies the batches still missing.
    -#}
    {%- set applied = cfg.applied_column -%}
    {%- set check_sql -%}
        select count(*) as n
        from {{ changes }} as source
        left join {{ target }} as target
            on {{ idempotent_merge_key_match(cfg.unique_key, 'target', 'source') }}
        where
            source.dbt_im_op in ('insert', 'update')
            and (
                target.{{ applied }} is null
                or size(array_except(source.{{ applied }}, target.{{ applied }})) > 0
            )
    {%- endset -%}
    {%- set missing = run_query(check_sql).rows[0]['n'] -%}
    {%- if missing > 0 -%}
        {%- do run_query('drop view if exists ' ~ changes) -%}
        {% set msg %}
Model {{ cfg.model }} (incremental_strategy='idempotent_merge'): {{ missing }} key(s) of {{ target }} were changed by another run between this run's change set and its MERGE, so their pending batches were not applied by this run (none was applied twice). The other keys were committed.
Rerun the interval: it applies exactly the batches still missing.
        {% endset %}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
{% endmacro %}
