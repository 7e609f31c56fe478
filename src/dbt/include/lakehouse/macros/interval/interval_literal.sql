{% macro interval_literal(bound, data_type='timestamp', bounds=none) %}
    {#-
        One bound of interval_bounds() ('start' or 'end') as a Spark SQL literal of data_type:
        timestamp'2026-10-03 00:00:00.000000Z' (UTC, whatever the session time zone) or
        date'2026-10-03'. A date literal needs a bound at midnight UTC; anything else is
        refused, because a date column cannot hold part of a day. Without an interval (dbt
        compile, docs generate) the literal names the var: date'<data_interval_start>'.
        bounds: an interval_bounds() result the caller already holds (the strategy passes its own).
    -#}
    {%- set b = bounds if bounds is not none else interval_bounds() -%}
    {%- set literal_type = 'date' if (data_type | lower) == 'date' else 'timestamp' -%}
    {%- if b is none -%}
        {{- return(literal_type ~ "'<data_interval_" ~ bound ~ ">'") -}}
    {%- endif -%}
    {%- if literal_type == 'date' and not b.whole_days -%}
        {{ exceptions.raise_compiler_error(model.unique_id ~ ': ' ~ interval_not_whole_days(b)) }}
    {%- endif -%}
    {%- if literal_type == 'date' -%}
        {{- return("date'" ~ b[bound].strftime('%Y-%m-%d') ~ "'") -}}
    {%- endif -%}
    {{- return("timestamp'" ~ b[bound].strftime('%Y-%m-%d %H:%M:%S.%f') ~ "Z'") -}}
{% endmacro %}


{% macro interval_not_whole_days(bounds, column=none) %}
    {#-
        The whole-day rule, in one place: the message for an interval that does not start and
        end at midnight UTC reconciled on a DATE column (interval_literal refuses the literal,
        idempotent_merge_config lists it among the model's problems).
    -#}
    {%- set where = 'the interval column ' ~ column if column else 'the interval column' -%}
    {{ return(
        'the interval [' ~ bounds.start.isoformat() ~ ', ' ~ bounds.end.isoformat() ~ ') does not'
        ~ ' start and end at midnight UTC, but ' ~ where ~ ' is a DATE. A DATE column can only be'
        ~ ' reconciled by whole days: pass dates such as 2026-10-03, or timestamps at 00:00:00Z.'
    ) }}
{% endmacro %}
