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
    {%- set b = cfg.bounds -%}
    {%- set entry = {
        'model': cfg.model,
        'interval_start': b.start.isoformat() if b else none,
        'interval_end': b.end.isoformat() if b else none,
        'invocation_id': invocation_id,
        'load': load,
    } -%}
    {#- SET takes the rest of the statement as the value (no ';' in it: ids, ISO times and JSON punctuation only) -#}
    {%- call statement('lakehouse_commit_metadata') -%}
        set `{{ lakehouse_commit_metadata_key(file_format) }}` = {{ entry | tojson }}
    {%- endcall -%}
{% endmacro %}
