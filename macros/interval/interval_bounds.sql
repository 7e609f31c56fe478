{% macro interval_bounds() %}
    {#-
        The one parser of the interval vars. Returns {'start': datetime, 'end': datetime} in UTC
        (timezone-aware), for the half-open interval [data_interval_start, data_interval_end).

        Accepts an ISO-8601 date (2026-10-03) or timestamp (2026-10-03T00:00:00Z,
        2026-10-03 02:00:00+02:00, 2026-10-03T00:00:00 read as UTC). Anything else, a missing
        var, or end <= start stops the run before any SQL with a message that names the model,
        the value and the fix. Values reach SQL only as re-formatted datetimes, never as text.
    -#}
    {%- if not execute -%}
        {#- parsing the project: the vars are not needed yet -#}
        {%- set epoch = modules.datetime.datetime(1970, 1, 1, tzinfo=modules.pytz.utc) -%}
        {{ return({'start': epoch, 'end': epoch + modules.datetime.timedelta(days=1)}) }}
    {%- endif -%}
    {%- set who = model.unique_id if model is defined and model else 'this invocation' -%}
    {%- set bounds = {} -%}
    {%- for name in ['data_interval_start', 'data_interval_end'] -%}
        {%- set raw = var(name, none) -%}
        {%- if raw is none or (raw | string | trim) == '' -%}
            {% set msg %}
{{ who }}: the var {{ name }} is missing.
Pass the interval to reconcile, half-open [start, end), e.g.
  dbt run --vars '{data_interval_start: "2026-10-03", data_interval_end: "2026-10-04"}'
            {% endset %}
            {{ exceptions.raise_compiler_error(msg) }}
        {%- endif -%}
        {%- set text = raw | string | trim -%}
        {%- set ns = namespace(value=interval_parse_iso(text)) -%}
        {%- if ns.value is none -%}
            {% set msg %}
{{ who }}: the var {{ name }} = {{ text | tojson }} is not an ISO-8601 date or timestamp.
Use a date such as 2026-10-03 or a timestamp such as 2026-10-03T00:00:00Z (an offset such as +02:00 is converted to UTC).
            {% endset %}
            {{ exceptions.raise_compiler_error(msg) }}
        {%- endif -%}
        {%- do bounds.update({name: ns.value}) -%}
    {%- endfor -%}
    {%- if bounds['data_interval_end'] <= bounds['data_interval_start'] -%}
        {% set msg %}
{{ who }}: data_interval_end ({{ bounds['data_interval_end'].isoformat() }}) must be after data_interval_start ({{ bounds['data_interval_start'].isoformat() }}): the interval is half-open, [start, end).
Swap the two values, or widen the interval.
        {% endset %}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {{ return({'start': bounds['data_interval_start'], 'end': bounds['data_interval_end']}) }}
{% endmacro %}
