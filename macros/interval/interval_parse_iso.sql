{% macro interval_parse_iso(text) %}
    {#-
        Parse one ISO-8601 date or timestamp into a UTC datetime, or return none when the text
        is not one (wrong shape, or out-of-range month, day, hour, minute, second or offset).
        Only interval_bounds() calls it.
    -#}
    {%- set m = modules.re.match('^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.]([0-9]{1,6}))?)?)?(Z|([+-])([0-9]{2}):?([0-9]{2}))?$', text) -%}
    {%- if not m -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set g = m.groups() -%}
    {%- set year, month, day = g[0] | int, g[1] | int, g[2] | int -%}
    {%- set hour, minute, second = (g[3] or 0) | int, (g[4] or 0) | int, (g[5] or 0) | int -%}
    {%- set micro = ((g[6] or '0') ~ '00000')[:6] | int -%}
    {%- if month < 1 or month > 12 or day < 1 or year < 1 or hour > 23 or minute > 59 or second > 59 -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set next_month = modules.datetime.date(year + (month // 12), month % 12 + 1, 1) -%}
    {%- if day > (next_month - modules.datetime.timedelta(days=1)).day -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set utc = modules.pytz.utc -%}
    {%- set local = modules.datetime.datetime(year, month, day, hour, minute, second, micro, tzinfo=utc) -%}
    {%- if g[8] -%}
        {%- set off_h, off_m = g[9] | int, g[10] | int -%}
        {%- if off_h > 23 or off_m > 59 -%}
            {{ return(none) }}
        {%- endif -%}
        {%- set offset = modules.datetime.timedelta(hours=off_h, minutes=off_m) -%}
        {{ return(local - offset if g[8] == '+' else local + offset) }}
    {%- endif -%}
    {{ return(local) }}
{% endmacro %}
