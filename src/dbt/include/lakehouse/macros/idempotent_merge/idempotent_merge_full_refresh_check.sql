{% macro idempotent_merge_full_refresh_check(existing, bounds) %}
    {#-
        A --full-refresh replaces the whole table with what the model returns for the requested
        interval (bounds, or none when the run has no interval). For a model run on an
        interval that is its whole history only when the interval starts at the model's begin
        config (its first day); otherwise every row of the other intervals would be dropped
        and older versions could come back. Refused before anything is written, saying how to
        rebuild. A model run without the interval vars reads its whole source, and is rebuilt
        from it as usual.
    -#}
    {%- if bounds is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set raw_begin = config.get('begin') -%}
    {%- set begin = adapter.parse_instant(raw_begin) if raw_begin is not none else none -%}
    {%- if begin is not none and bounds.start <= begin -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set problem -%}
        {%- if raw_begin is none -%}
            the model has no begin config (the first day of its history). Set it, e.g.
            begin: '2026-10-03' in the model's config, then rebuild over [begin, end).
        {%- elif begin is none -%}
            its begin config {{ '"' ~ (raw_begin | string) ~ '"' }} is not an ISO-8601 date or
            timestamp. Fix it, then rebuild over [begin, end).
        {%- else -%}
            a full refresh must start at the model's begin ({{ begin.isoformat() }}) to rebuild
            the whole history.
        {%- endif -%}
    {%- endset -%}
    {%- set example_begin = begin.strftime('%Y-%m-%d') if begin is not none else '<first day>' -%}
    {%- set example_end = bounds.end.strftime('%Y-%m-%d') if bounds.whole_days else bounds.end.strftime('%Y-%m-%dT%H:%M:%S') -%}
    {%- set headline -%}
        --full-refresh would rebuild {{ existing }} from the interval
        [{{ bounds.start.isoformat() }}, {{ bounds.end.isoformat() }}) only, dropping the rows
        every other interval loaded. Nothing was written, because
    {%- endset -%}
    {%- set fix -%}
Rebuild the whole history:
  dbt run --select +{{ model.name }} --full-refresh --event-time-start {{ example_begin }} --event-time-end {{ example_end }}
To reload one interval, run it again without --full-refresh: that is always safe.
    {%- endset -%}
    {%- do idempotent_merge_raise(headline.split() | join(' '), [problem], fix=fix) -%}
{% endmacro %}
