{#-
    Write-audit-publish, the staging side: what idempotent_merge_run does instead of its MERGE
    when the plan stages the change (idempotent_merge_audit_plan), the view a Delta stage is,
    and the leftovers of killed builds. The publishing side is lakehouse_publish_audited.
-#}

{% macro idempotent_merge_stage(cfg, source, target, changes, one_row_per_key, file_format, load, branch) %}
    {#-
        Stage the model's change where readers of the published table cannot see it. The
        change set reads the table pinned at its newest version (Iceberg: main's snapshot),
        where the stage starts; it is computed into the temporary view changes (adapter.pin_view)
        and, when not empty:
          Delta: nothing written; a temporary view <model>__dbt_audit of the table as the MERGE
          would leave it (idempotent_merge_staged_sql), the MERGE and its ledger entry kept for
          the publish;
          Iceberg: a branch `branch` at that snapshot, the MERGE (with its ledger entry)
          committed to it; main does not move.
        Returns {'counts': [[op, rows, units], ...], 'stage': the stage's details, or none when
        nothing changes (nothing staged, no branch, no commit), 'base': the table's newest
        commit it read (lakehouse_commit_history)}; adapter.stage_audited registers
        it at the end of the materialization. The stage keeps this macro's arguments
        ('replan'): when another writer commits to the table before the publish,
        lakehouse_publish_audited stages the change again on the table as it then is and audits
        it again (the change set view stays in the session until the publish).
    -#}
    {%- set newest = lakehouse_commit_history(target, file_format, newest_only=true)[0] -%}
    {%- set version = newest.version -%}
    {%- set base = target ~ ' version as of ' ~ version -%}
    {%- do adapter.pin_view(changes, idempotent_merge_change_set_sql(cfg, source, base, one_row_per_key)) -%}
    {%- set counts = run_query(idempotent_merge_count_sql(cfg, changes)).rows -%}
    {%- if not counts -%}
        {{ return({'counts': counts, 'stage': none, 'base': newest}) }}
    {%- endif -%}
    {%- set replan = {'cfg': cfg, 'source': source, 'one_row_per_key': one_row_per_key, 'load': load} -%}
    {%- if file_format == 'delta' -%}
        {%- set stage = {'kind': 'merge', 'staged': adapter.quote_column(target.identifier ~ '__dbt_audit'), 'base': version, 'changes': changes, 'replan': replan} -%}
        {%- call statement('idempotent_merge_stage') -%}
            create or replace temporary view {{ stage.staged }} as
            {{ idempotent_merge_staged_sql(cfg, changes, base) }}
        {%- endcall -%}
        {%- do stage.update({'merge_sql': idempotent_merge_sql(cfg, changes, target), 'ledger': lakehouse_commit_entry(cfg, load)}) -%}
        {{ return({'counts': counts, 'stage': stage, 'base': newest}) }}
    {%- endif -%}
    {%- set into = target ~ '.branch_' ~ branch -%}
    {#- other runs commit to the table meanwhile: these commits are retried (adapter.execute_retrying) -#}
    {%- do adapter.execute_retrying('alter table ' ~ target ~ ' create branch ' ~ branch ~ ' as of version ' ~ version) -%}
    {%- do lakehouse_commit_metadata(cfg, file_format, load) -%}
    {%- do adapter.execute_retrying(idempotent_merge_sql(cfg, changes, into)) -%}
    {%- do lakehouse_commit_metadata_reset(file_format) -%}
    {%- if cfg.batch_column -%}
        {%- do idempotent_merge_verify_batches(cfg, changes, into) -%}
    {%- endif -%}
    {{ return({'counts': counts, 'stage': {'kind': 'branch', 'staged': into, 'branch': branch, 'base': version, 'changes': changes, 'replan': replan}, 'base': newest}) }}
{% endmacro %}

{% macro idempotent_merge_staged_sql(cfg, changes, target) %}
    {#-
        The table as the MERGE of idempotent_merge_sql would leave it, as a query: what a
        write-audit-publish stage on Delta (no branches) shows the model's tests and downstream
        models before the MERGE is published. target is the published table pinned to the
        version the change set was computed from. Rendered from the same clauses as the MERGE
        (idempotent_merge_clauses): the target's rows, each updated where the MERGE's update
        clause fires and left out where its delete fires, then the inserts the MERGE's WHEN NOT
        MATCHED clause would add.
    -#}
    {%- set m = idempotent_merge_clauses(cfg) -%}
    select
        {%- for c in m.insert_columns %}
        {%- set qc = adapter.quote_column(c) %}
        {%- if c in m.update_columns %}
        case when {{ m.update_when }} then {{ m.update_values[c] }} else target.{{ qc }} end as {{ qc }}{{ ',' if not loop.last }}
        {%- else %}
        target.{{ qc }}{{ ',' if not loop.last }}
        {%- endif %}
        {%- endfor %}
    from {{ target }} as target
    left join {{ changes }} as source
        on {{ m.on }}
    {%- if m.delete %}
    where not coalesce(source.dbt_im_op = 'delete', false)
    {%- endif %}
    union all
    select
        {%- for c in m.insert_columns %}
        {{ m.insert_values[c] }} as {{ adapter.quote_column(c) }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ changes }} as source
    left anti join {{ target }} as target
        on {{ m.on }}
    where source.dbt_im_op = 'insert'
{% endmacro %}

{% macro idempotent_merge_audit_leftovers(target, existing, file_format) %}
    {#-
        What a killed audited build left behind, discarded at a later run of the model (readers
        of the published table never saw it): the table's audit branches of other invocations
        staged 12 hours ago or more, and their snapshots (Iceberg, adapter.audit_leftover,
        lakehouse_discard_audit_branch); a younger one may be a build running now. A Delta
        stage is temporary views only, which end with their session.
    -#}
    {%- if existing is not none and file_format == 'iceberg' -%}
        {%- for row in run_query('select name from ' ~ target ~ ".refs where type = 'BRANCH'").rows if adapter.audit_leftover(row['name']) -%}
            {%- do lakehouse_discard_audit_branch(target.schema, target.identifier, row['name']) -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}

