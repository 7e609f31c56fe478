{#-
    The interval ledger's writing side: each CREATE and MERGE of idempotent_merge carries a JSON
    entry (model, interval, invocation, load) in the table format's own commit metadata, set
    through a session setting before the statement and reset after it and at the start of every
    incremental model.
-#}

{% macro lakehouse_commit_metadata(cfg, file_format, load) %}
    {#-
        Label the next commit of this session with the interval ledger entry: the model, the
        interval [start, end) (UTC ISO-8601, null without an interval), dbt's invocation id and
        the kind of load ('create': first load or full refresh, the table starts over; 'merge').
        The table format stores it in the commit itself (lakehouse_commit_metadata_key), so the
        ledger can never disagree with the data: no commit, no entry. idempotent_merge_run
        sets it right before its CREATE or MERGE and resets it right after
        (lakehouse_commit_metadata_reset). The setting is session-wide: with threads > 1 another
        model's commit in between could carry it (the listing only reads the model's own table
        and entries naming the model).
    -#}
    {%- do lakehouse_commit_metadata_set(file_format, lakehouse_commit_entry(cfg, load)) -%}
{% endmacro %}

{% macro lakehouse_commit_entry(cfg, load) %}
    {#- The ledger entry of lakehouse_commit_metadata as JSON text (also kept by a write-audit-publish stage until its MERGE is published). -#}
    {%- set b = cfg.bounds -%}
    {{ return({
        'model': cfg.model,
        'interval_start': b.start.isoformat() if b else none,
        'interval_end': b.end.isoformat() if b else none,
        'invocation_id': invocation_id,
        'load': load,
    } | tojson) }}
{% endmacro %}

{% macro lakehouse_commit_metadata_set(file_format, entry) %}
    {#- Label the next commit of this session with a ledger entry (JSON text from lakehouse_commit_entry). -#}
    {#- SET takes the rest of the statement as the value (no ';' in it: ids, ISO times and JSON punctuation only) -#}
    {%- call statement('lakehouse_commit_metadata') -%}
        set `{{ lakehouse_commit_metadata_key(file_format) }}` = {{ entry }}
    {%- endcall -%}
{% endmacro %}

{% macro lakehouse_commit_metadata_reset(file_format) %}
    {#- Unset the commit label of lakehouse_commit_metadata, so no later commit of the session carries it. -#}
    {%- call statement('lakehouse_commit_metadata_reset') -%}
        reset `{{ lakehouse_commit_metadata_key(file_format) }}`
    {%- endcall -%}
{% endmacro %}

{% macro lakehouse_commit_metadata_key(file_format) %}
    {#-
        The session setting whose value the table format writes into the metadata of the next
        commit, in that same commit: Delta's commitInfo.userMetadata (DESCRIBE HISTORY
        userMetadata); for Iceberg (1.12) spark.sql.iceberg.snapshot-property.<name>, which
        SparkWriteConf adds to the snapshot summary of every Spark write, a SQL MERGE and
        CREATE TABLE AS included (summary key lakehouse.ledger).
    -#}
    {%- if file_format == 'iceberg' -%}
        {{ return('spark.sql.iceberg.snapshot-property.lakehouse.ledger') }}
    {%- endif -%}
    {{ return('spark.databricks.delta.commitInfo.userMetadata') }}
{% endmacro %}
