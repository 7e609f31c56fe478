{% macro idempotent_merge_report(cfg, target, file_format, source_stats, planned) %}
    {#-
        Log one line for the model: rows inserted, updated and deleted as the table format
        recorded them (Delta DESCRIBE HISTORY operationMetrics, Iceberg snapshot summary),
        source rows skipped as stale or unchanged, and the table version or snapshot.
        planned: {'insert': n, 'update': n, 'delete': n, 'applied': n} from the change set
        (applied: source keys, or for batch_column (key, batch) pairs, that were applied), or
        none when no MERGE ran. Skipped counts the source's keys (batches) left out as stale,
        unchanged or already applied; reduced the source rows beyond one per key (batch).
        Returns the figures as a dict, with a short message for dbt's result line.
    -#}
    {%- set stats = {'inserted': 0, 'updated': 0, 'deleted': 0, 'files_added': 0, 'files_removed': 0, 'version': 'unchanged'} -%}
    {%- if planned is not none -%}
        {%- if file_format == 'iceberg' -%}
            {%- set snap = run_query(
                "select cast(snapshot_id as string) as snapshot_id,"
                ~ " coalesce(summary['added-data-files'], '0') as files_added,"
                ~ " coalesce(summary['deleted-data-files'], '0') as files_removed"
                ~ " from " ~ target ~ ".snapshots order by committed_at desc limit 1").rows[0] -%}
            {#- Iceberg's summary counts an updated row as a deleted and an added record (plus the untouched rows a copy-on-write rewrite carries), so the row figures come from the change set and the files from the summary -#}
            {%- do stats.update({
                'inserted': planned.get('insert', 0),
                'updated': planned.get('update', 0),
                'deleted': planned.get('delete', 0),
                'files_added': snap['files_added'] | int,
                'files_removed': snap['files_removed'] | int,
                'version': 'snapshot ' ~ snap['snapshot_id'],
            }) -%}
        {%- else -%}
            {%- set h = run_query('describe history ' ~ target ~ ' limit 1').rows[0] -%}
            {%- set m = fromjson(h['operationMetrics']) if h['operationMetrics'] is string else h['operationMetrics'] -%}
            {%- set merged = 'numTargetRowsInserted' in m -%}
            {%- do stats.update({
                'inserted': (m.get('numTargetRowsInserted') if merged else m.get('numOutputRows', 0)) | int,
                'updated': m.get('numTargetRowsUpdated', 0) | int,
                'deleted': m.get('numTargetRowsDeleted', 0) | int,
                'files_added': (m.get('numTargetFilesAdded') if merged else m.get('numFiles', 0)) | int,
                'files_removed': m.get('numTargetFilesRemoved', 0) | int,
                'version': 'version ' ~ h['version'],
            }) -%}
        {%- endif -%}
    {%- endif -%}
    {%- do stats.update({
        'skipped': source_stats.source_units - (planned or {}).get('applied', 0),
        'reduced': source_stats.source_rows - source_stats.source_units,
    }) -%}
    {%- set b = cfg.bounds -%}
    {%- set changed = stats.inserted ~ ' inserted, ' ~ stats.updated ~ ' updated, ' ~ stats.deleted ~ ' deleted' -%}
    {%- set line -%}
        idempotent_merge {{ target }}
        {%- if b %} [{{ b.start.isoformat() }}, {{ b.end.isoformat() }}){% endif %}:
        {{ changed }}, {{ stats.skipped }}
        {{- ' skipped as already applied, ' if cfg.batch_column else ' skipped as stale or unchanged, ' -}}
        {{ stats.reduced }} older duplicates reduced;
        {{ file_format }} {{ stats.version }} (data files +{{ stats.files_added }} -{{ stats.files_removed }})
    {%- endset -%}
    {{ log(line.split() | join(' '), info=True) }}
    {%- do stats.update({'message': changed if planned is not none else 'no change, nothing committed'}) -%}
    {{ return(stats) }}
{% endmacro %}
