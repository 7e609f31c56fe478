{% macro idempotent_merge_full_refresh_check(existing) %}
    {#-
        A --full-refresh replaces the whole table with what the model returns for the requested
        interval. For a model run on an interval (the interval vars are set) that is its whole
        history only when the interval starts at the model's begin config (its first day);
        otherwise every row of the other intervals would be dropped and older versions could
        come back. Refused before anything is written, saying how to rebuild. A model run
        without the interval vars reads its whole source, and is rebuilt from it as usual.
    -#}
    {%- if var('data_interval_start', none) is none and var('data_interval_end', none) is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set b = interval_bounds() -%}
    {%- set raw_begin = config.get('begin') -%}
    {%- set begin = interval_parse_iso(raw_begin | string | trim) if raw_begin is not none else none -%}
    {%- if begin is not none and b.start <= begin -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set example_begin = begin.strftime('%Y-%m-%d') if begin is not none else '<first day>' -%}
    {%- set example_end = b.end.strftime('%Y-%m-%d') if interval_is_whole_days() else b.end.isoformat() -%}
    {% set msg %}
Model {{ model.unique_id }}: --full-refresh would rebuild {{ existing }} from the interval [{{ b.start.isoformat() }}, {{ b.end.isoformat() }}) only, dropping the rows every other interval loaded. Nothing was written.
{%- if raw_begin is none %}
The model has no begin config (the first day of its history). Set it, e.g. begin: '2026-10-03' in the model's config, then rebuild over [begin, end):
{%- elif begin is none %}
Its begin config {{ (raw_begin | string) | tojson }} is not an ISO-8601 date or timestamp. Fix it, then rebuild over [begin, end):
{%- else %}
A full refresh must start at the model's begin ({{ begin.isoformat() }}) to rebuild the whole history:
{%- endif %}
  dbt run --select +{{ model.name }} --full-refresh --vars '{data_interval_start: "{{ example_begin }}", data_interval_end: "{{ example_end }}"}'
To reload one interval, run it again without --full-refresh: that is always safe.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg) }}
{% endmacro %}
