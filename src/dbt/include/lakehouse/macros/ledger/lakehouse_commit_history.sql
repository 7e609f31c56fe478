{% macro lakehouse_commit_history(relation, file_format, newest_only=false, ref='main') %}
    {#-
        A table's commits, oldest first (or only the newest), the same way on both formats:
        [{'version': the Delta version or Iceberg snapshot id (text), 'label': 'version' or
        'snapshot', 'ledger': the interval ledger entry (text, or none), 'files_added',
        'files_removed': data files, 'metrics': Delta's operationMetrics (a dict; empty on
        Iceberg, whose row counts are not comparable)}], read from DESCRIBE HISTORY (Delta) or
        the <table>.snapshots metadata table (Iceberg): only main's ancestry (a write-audit-publish
        branch's commits count once fast-forwarded), or with newest_only the commit the branch
        ref (default main) points at.
    -#}
    {%- set commits = [] -%}
    {%- if file_format == 'iceberg' -%}
        {%- set rows = run_query(
            "select cast(s.snapshot_id as string) as version,"
            ~ " s.summary['lakehouse.ledger'] as ledger,"
            ~ " coalesce(s.summary['added-data-files'], '0') as files_added,"
            ~ " coalesce(s.summary['deleted-data-files'], '0') as files_removed"
            ~ " from " ~ relation ~ ".snapshots as s"
            ~ ((" join " ~ relation ~ ".refs as r on r.snapshot_id = s.snapshot_id where r.name = '" ~ ref ~ "'") if newest_only
               else (" join " ~ relation ~ ".history as h on h.snapshot_id = s.snapshot_id where h.is_current_ancestor"
                     ~ " order by h.made_current_at, s.snapshot_id"))
        ).rows -%}
        {%- for row in rows -%}
            {%- do commits.append({
                'version': row['version'], 'label': 'snapshot', 'ledger': row['ledger'],
                'files_added': row['files_added'] | int, 'files_removed': row['files_removed'] | int,
                'metrics': {},
            }) -%}
        {%- endfor -%}
    {%- else -%}
        {%- set rows = run_query('describe history ' ~ relation ~ (' limit 1' if newest_only else '')).rows -%}
        {%- for row in rows | sort(attribute='version') -%}
            {%- set metrics = fromjson(row['operationMetrics']) if row['operationMetrics'] is string else (row['operationMetrics'] or {}) -%}
            {%- do commits.append({
                'version': row['version'] | string, 'label': 'version', 'ledger': row['userMetadata'],
                'files_added': (metrics.get('numTargetFilesAdded') or metrics.get('numFiles', 0)) | int,
                'files_removed': metrics.get('numTargetFilesRemoved', 0) | int,
                'metrics': metrics,
            }) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(commits) }}
{% endmacro %}
