{% macro interval_literal(bound, data_type='timestamp') %}
    {#-
        One bound of interval_bounds() ('start' or 'end') as a Spark SQL literal of data_type:
        timestamp'2026-10-03 00:00:00Z' (UTC, whatever the session time zone) or date'2026-10-03'.
        A date literal needs a bound at midnight UTC; anything else is refused, because a date
        column cannot hold part of a day.
    -#}
    {%- set value = interval_bounds()[bound] -%}
    {%- if data_type | lower == 'date' -%}
        {%- if not interval_is_whole_days() -%}
            {% set msg %}
{{ model.unique_id }}: the interval [{{ interval_bounds().start.isoformat() }}, {{ interval_bounds().end.isoformat() }}) does not start and end at midnight UTC, but the interval column is a DATE.
A DATE column can only be reconciled by whole days: pass dates such as 2026-10-03, or timestamps at 00:00:00Z.
            {% endset %}
            {{ exceptions.raise_compiler_error(msg) }}
        {%- endif -%}
        {{- return("date'" ~ value.strftime('%Y-%m-%d') ~ "'") -}}
    {%- endif -%}
    {{- return("timestamp'" ~ value.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "Z'") -}}
{% endmacro %}
