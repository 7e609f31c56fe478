{#-
    idempotent_merge, stage 4: the run. Once the model's rows are staged: the checks, then a
    first load's CREATE or the change set (computed once) and its MERGE (none when nothing changes), each
    one commit labelled with the interval ledger entry, and one report line.
-#}

{% macro idempotent_merge_run(plan, source, target, existing, on_schema_change, file_format) %}
    {#-
        The idempotent_merge strategy, run by the lakehouse incremental materialization once
        the model's rows are staged (source: a temporary view, or a Python model's table).
        plan comes from idempotent_merge_plan (interval, table columns, configs checked).
          1. an enforced contract against the staged columns (idempotent_merge_check_contract);
             the model's columns, read once; on_schema_change against the table's;
          2. the configs checked against the model's columns (first load, or when they differ
             from the table's);
          3. the data checks (idempotent_merge_check_source: one pass over the source);
          4. first load (no table, or --full-refresh): one CREATE TABLE AS of the source
             reduced to the newest row per key (batch_column: every batch folded per key),
             which replaces a table only on --full-refresh (a table another run created
             meanwhile is merged into instead: idempotent_merge_absent, idempotent_merge_create);
             otherwise the real changes (idempotent_merge_changes_sql, or
             idempotent_merge_batches_sql) computed once into a temporary view of pinned
             rows (adapter.pin_view) and, only if there are any, one MERGE: one atomic commit,
             or nothing; a commit the format refuses because another writer committed first
             is planned and merged again (adapter.commit_merge, conflicts.py);
          5. one report line (idempotent_merge_report), which names a schema change of
             step 1 too (the columns added or dropped, and Delta's version of the ALTER).
        The CREATE and the MERGE each carry the interval ledger entry (model, interval,
        invocation id) in the table format's own commit metadata (lakehouse_commit_metadata),
        in the same commit as the data; no change, no commit, no entry.
        Returns the report's figures.
    -#}
    {%- do idempotent_merge_check_contract(source) -%}
    {%- set model_columns = idempotent_merge_columns(source) -%}
    {%- set cfg = plan.cfg -%}
    {%- set column_types = model_columns.types -%}
    {%- set altered = none -%}
    {%- if existing is not none -%}
        {%- set changed = idempotent_merge_schema_changes(on_schema_change, model_columns, plan.table, existing, source) -%}
        {%- if changed.added or changed.removed -%}
            {%- set altered = changed -%}
            {%- if file_format == 'delta' -%}
                {%- do altered.update({'commit': 'delta version ' ~ lakehouse_commit_history(target, file_format, newest_only=true)[0].version}) -%}
            {%- else -%}
                {#- an Iceberg schema change writes new table metadata, not a snapshot -#}
                {%- do altered.update({'commit': 'a new iceberg schema, no snapshot'}) -%}
            {%- endif -%}
        {%- endif -%}
        {%- set table_names = plan.table.names | map('lower') | list -%}
        {%- set columns = [] -%}
        {%- for c in model_columns.names if (c | lower) in table_names or c in changed.added -%}
            {%- do columns.append(c) -%}
        {%- endfor -%}
        {%- do column_types.update(plan.table.types) -%}
        {%- if (columns | map('lower') | list) != (cfg.columns | map('lower') | list) -%}
            {#- the model's columns differ from the table's (on_schema_change other than fail) -#}
            {%- set cfg = idempotent_merge_config(columns, column_types, plan.bounds) -%}
        {%- endif -%}
    {%- else -%}
        {%- set cfg = idempotent_merge_config(model_columns.names, column_types, plan.bounds, staging=source) -%}
    {%- endif -%}
    {%- set source_stats = idempotent_merge_check_source(cfg, source, existing) -%}
    {%- set audit = plan.audit -%}
    {%- set stage = none -%}
    {%- if audit.staged or audit.publish == 'audited' -%}
        {%- do idempotent_merge_audit_leftovers(target, existing, file_format) -%}
    {%- endif -%}
    {%- set batch_mode = cfg.batch_column is not none -%}
    {%- set load = 'create' if existing is none else 'merge' -%}
    {#- what the log line adds (a commit made on a later attempt) -#}
    {%- set notes = [] -%}
    {#- the ledger orders a create's row at the moment it began (lakehouse_record_interval) -#}
    {%- set created_at = adapter.ledger_clock() if existing is none else none -%}
    {%- if existing is none -%}
        {%- if batch_mode -%}
            {%- set initial_sql -%}
                select {{ idempotent_merge_names(cfg.columns + [cfg.applied_column]) | join(', ') }}
                from (
                    {{ idempotent_merge_batches_sql(cfg, source, none) }}
                ) as folded
            {%- endset -%}
        {%- else -%}
            {%- set initial_sql = idempotent_merge_initial_sql(cfg, source) -%}
        {%- endif -%}
        {%- if not plan.rebuild and not idempotent_merge_absent(target) -%}
            {#- another run created the table after this one started (two first loads at once):
                merge into it, as this run's rerun would, never replace its rows -#}
            {%- set existing = target -%}
            {%- set load = 'merge' -%}
        {%- elif audit.staged -%}
            {#- write-audit-publish of a first load: the table is created empty under its own name
                (its folder named after it, a view downstream can name it), and its rows are
                staged as an interval's change is, below: published by the same fast-forward or
                MERGE, or held back -#}
            {%- if not idempotent_merge_create(target, 'select * from (' ~ initial_sql ~ ') as loaded where false', false, source) -%}
                {%- set load = 'merge' -%}
            {%- endif -%}
            {%- set existing = target -%}
        {%- else -%}
            {%- do lakehouse_commit_metadata(cfg, file_format, 'create') -%}
            {%- set created = idempotent_merge_create(target, initial_sql, plan.rebuild, source) -%}
            {%- do lakehouse_commit_metadata_reset(file_format) -%}
            {%- if created -%}
                {%- set planned = {'insert': source_stats.source_keys, 'applied': source_stats.source_units} -%}
            {%- else -%}
                {%- set existing = target -%}
                {%- set load = 'merge' -%}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}

    {%- if existing is not none -%}
        {#- a temporary view: the table's name (in backticks when it needs them) and a suffix -#}
        {%- set changes = adapter.quote_column(target.identifier ~ '__dbt_changes') -%}
        {#- a model allowed to be non-deterministic may return other rows on the next read: keep the newest-row window -#}
        {%- set one_row_per_key = source_stats.source_rows == source_stats.source_keys and not cfg.allow_nondeterministic -%}
        {%- if audit.staged -%}
            {#- write-audit-publish: the change staged where readers of the table cannot see it -#}
            {%- set staged = idempotent_merge_stage(cfg, source, target, changes, one_row_per_key, file_format, load, audit.branch) -%}
            {%- set counts, stage = staged.counts, staged.stage -%}
        {%- else -%}
            {%- set merged = idempotent_merge_apply(cfg, source, target, changes, one_row_per_key, file_format, load) -%}
            {%- set counts = merged.counts -%}
            {%- if merged.attempt > 1 and counts -%}
                {%- do notes.append(adapter.conflict_note(merged.attempt)) -%}
            {%- endif -%}
        {%- endif -%}
        {%- set planned = {} -%}
        {%- set applied_units = [] -%}
        {%- for row in counts -%}
            {%- do planned.update({row[0]: row[1]}) -%}
            {%- if row[0] != 'delete' -%}{%- do applied_units.append(row[2]) -%}{%- endif -%}
        {%- endfor -%}
        {%- if planned -%}
            {%- do planned.update({'applied': applied_units | sum}) -%}
        {%- endif -%}
        {%- if not stage -%}
            {#- a stage's change set is read again at the publish (a Delta stage's MERGE, a stage
                audited again); lakehouse_publish_audited drops it then -#}
            {%- do run_query('drop view if exists ' ~ changes) -%}
        {%- endif -%}
        {%- set planned = planned or none -%}
    {%- endif -%}
    {%- set outcome = idempotent_merge_report(cfg, target, file_format, source_stats, planned, altered, stage, audit.why, audit.with, notes) -%}
    {#- the interval ledger: a created table starts over, a run with nothing to change counts -#}
    {%- set recorded = load if (planned is not none or load == 'create') else 'unchanged' -%}
    {%- if stage -%}
        {%- do stage.update({
            'model': model.unique_id, 'schema': target.schema, 'identifier': target.identifier,
            'published': target | string, 'format': file_format,
            'reads': audit.with, 'audited': audit.audited, 'message': outcome.message,
            'load': recorded, 'bounds': cfg.bounds, 'version': outcome.commit_version, 'since': created_at,
        }) -%}
    {%- else -%}
        {%- do lakehouse_record_interval(target | string, model.unique_id, recorded, cfg.bounds, outcome.commit_version, since=created_at) -%}
    {%- endif -%}
    {%- do outcome.update({'stage': stage}) -%}
    {{ return(outcome) }}
{% endmacro %}

{% macro idempotent_merge_create(target, sql, replace, staging) %}
    {#-
        A first load's CREATE TABLE AS (idempotent_merge_create_sql; replace on --full-refresh
        only). Returns true once created, false when another run created the table meanwhile
        (two first loads at once: the format refuses the second CREATE): the caller then merges
        into it, as a rerun would (adapter.create_first_load tries again while the other run's
        table is not there yet). Refused when it never appears: a folder holding files but no
        table, which no run is creating.
    -#}
    {%- set happened = adapter.create_first_load(idempotent_merge_create_sql(target, sql, replace), target) -%}
    {%- if happened == 'exists' -%}
        {{ return(false) }}
    {%- elif happened -%}
        {%- set problem -%}
            the CREATE of {{ target }} failed: {{ happened }}.
        {%- endset -%}
        {%- do idempotent_merge_raise(
            'nothing of this run was committed, because',
            [problem],
            staging=staging,
            fix='Run the same interval again once the other run finished: the rerun finds the table and merges into it. If no other run writes it, remove the leftover files of its folder.',
        ) -%}
    {%- endif -%}
    {{ return(true) }}
{% endmacro %}

{% macro idempotent_merge_apply(cfg, source, target, changes, one_row_per_key, file_format, load) %}
    {#-
        The change set computed into the temporary view changes (pinned rows: adapter.pin_view)
        and, when not empty, one MERGE into target, labelled with the ledger entry: one atomic
        commit, or nothing. Planned again, up to adapter.merge_attempts() times, when another
        writer committed first: the format refused the commit (adapter.commit_merge,
        conflicts.py), or a batch_column row changed under the MERGE
        (idempotent_merge_verify_batches). Returns {'counts': [[op, rows, units], ...] of the
        attempt that ran (empty: no MERGE), 'attempt': its number}.
    -#}
    {%- set changes_sql = idempotent_merge_change_set_sql(cfg, source, target, one_row_per_key) -%}
    {%- set count_sql = idempotent_merge_count_sql(cfg, changes) -%}
    {%- set state = {'counts': [], 'attempt': 1} -%}
    {%- for attempt in range(1, adapter.merge_attempts() + 1) -%}
        {%- do state.update({'attempt': attempt}) -%}
        {%- do adapter.pin_view(changes, changes_sql) -%}
        {%- do state.update({'counts': run_query(count_sql).rows}) -%}
        {%- if not state.counts -%}
            {%- break -%}
        {%- endif -%}
        {%- do lakehouse_commit_metadata(cfg, file_format, load) -%}
        {%- set met = adapter.commit_merge(target | string, idempotent_merge_sql(cfg, changes, target), attempt) -%}
        {%- do lakehouse_commit_metadata_reset(file_format) -%}
        {%- if not met and cfg.batch_column -%}
            {%- set met = idempotent_merge_verify_batches(cfg, changes, target, attempt) -%}
        {%- endif -%}
        {%- if not met -%}
            {%- break -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(state) }}
{% endmacro %}

{% macro idempotent_merge_report(cfg, target, file_format, source_stats, planned, altered=none, stage=none, direct_why=none, stage_with=[], notes=[]) %}
    {#-
        Log one line for the model: rows inserted, updated and deleted as the table format
        recorded them (the newest commit, lakehouse_commit_history: Delta's operationMetrics,
        Iceberg's snapshot summary),
        source rows skipped as stale or unchanged, and the table version or snapshot.
        planned: {'insert': n, 'update': n, 'delete': n, 'applied': n} from the change set
        (applied: source keys, or for batch_column (key, batch) pairs, that were applied), or
        none when no MERGE ran; altered: the schema change on_schema_change made before it
        ({'added': [...], 'removed': [...], 'commit': ...}), or none. Skipped counts the source's keys (batches) left out as stale,
        unchanged or already applied; reduced the source rows beyond one per key (batch).
        Returns the figures as a dict, with a short message for dbt's result line.
    -#}
    {%- set stats = {'inserted': 0, 'updated': 0, 'deleted': 0, 'files_added': 0, 'files_removed': 0, 'version': 'unchanged', 'commit_version': none} -%}
    {%- if planned is not none and stage and stage.kind == 'merge' -%}
        {#- a Delta stage commits nothing until published: the change set's figures -#}
        {%- do stats.update({
            'inserted': planned.get('insert', 0),
            'updated': planned.get('update', 0),
            'deleted': planned.get('delete', 0),
            'version': 'version ' ~ stage.base ~ ' (the change is staged, not committed)',
        }) -%}
    {%- elif planned is not none -%}
        {%- set commit = lakehouse_commit_history(target, file_format, newest_only=true, ref=stage.branch if stage and stage.kind == 'branch' else 'main')[0] -%}
        {%- set m = commit.metrics -%}
        {%- if file_format == 'iceberg' -%}
            {#- Iceberg's summary counts an updated row as a deleted and an added record (plus the untouched rows a copy-on-write rewrite carries), so the row figures come from the change set -#}
            {%- do stats.update({
                'inserted': planned.get('insert', 0),
                'updated': planned.get('update', 0),
                'deleted': planned.get('delete', 0),
            }) -%}
        {%- else -%}
            {%- do stats.update({
                'inserted': (m.get('numTargetRowsInserted') if 'numTargetRowsInserted' in m else m.get('numOutputRows', 0)) | int,
                'updated': m.get('numTargetRowsUpdated', 0) | int,
                'deleted': m.get('numTargetRowsDeleted', 0) | int,
            }) -%}
        {%- endif -%}
        {%- do stats.update({
            'files_added': commit.files_added,
            'files_removed': commit.files_removed,
            'version': commit.label ~ ' ' ~ commit.version,
            'commit_version': commit.version,
        }) -%}
    {%- endif -%}
    {%- do stats.update({
        'skipped': source_stats.source_units - (planned or {}).get('applied', 0),
        'reduced': source_stats.source_rows - source_stats.source_units,
    }) -%}
    {%- set b = cfg.bounds -%}
    {%- set changed = stats.inserted ~ ' inserted, ' ~ stats.updated ~ ' updated, ' ~ stats.deleted ~ ' deleted' -%}
    {%- set schema_change = [] -%}
    {%- if altered -%}
        {%- if altered.added -%}{%- do schema_change.append('columns added: ' ~ (altered.added | join(', '))) -%}{%- endif -%}
        {%- if altered.removed -%}{%- do schema_change.append('columns dropped: ' ~ (altered.removed | join(', '))) -%}{%- endif -%}
        {%- set schema_change = [(schema_change | join('; ')) ~ ' (' ~ altered.commit ~ ')'] -%}
    {%- endif -%}
    {%- set line -%}
        idempotent_merge {{ target }}
        {%- if b %} [{{ b.start.isoformat() }}, {{ b.end.isoformat() }}){% endif %}:
        {{ changed }}, {{ stats.skipped }}
        {{- ' skipped as already applied, ' if cfg.batch_column else ' skipped as stale or unchanged, ' -}}
        {{ stats.reduced }} older duplicates reduced;
        {{ file_format }} {{ stats.version }} (data files +{{ stats.files_added }} -{{ stats.files_removed }})
        {%- for change in schema_change %}; {{ change }}{% endfor %}
        {%- for note in notes %}; {{ note }}{% endfor %}
        {%- if stage and stage_with %}; staged in {{ stage.staged }} with {{ stage_with | join(', ') }}, which it read: published with it, or held back with it
        {%- elif stage %}; staged for audit in {{ stage.staged }}, published once its data tests pass
        {%- elif direct_why %}; published directly: {{ direct_why }}{% endif %}
    {%- endset -%}
    {{ log(line.split() | join(' '), info=True) }}
    {%- if planned is not none -%}
        {%- set message = ([changed] + schema_change) | join('; ') -%}
    {%- elif altered -%}
        {%- set message = (['no rows changed'] + schema_change) | join('; ') -%}
    {%- else -%}
        {%- set message = 'no change, nothing committed' -%}
    {%- endif -%}
    {%- if stage -%}
        {%- set message = message ~ ' (staged for audit)' -%}
    {%- endif -%}
    {%- do stats.update({'message': message}) -%}
    {{ return(stats) }}
{% endmacro %}
