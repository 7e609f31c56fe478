{% macro interval_given(way=none) %}
    {#-
        Whether this invocation was given an interval: way='flags' asks for dbt's event-time
        flags (--event-time-start / --event-time-end), way='vars' for the vars
        data_interval_start / data_interval_end, none (default) for either. The one place that
        knows where an interval can come from; interval_bounds() parses it.
    -#}
    {%- set by_flags = invocation_args_dict.get('event_time_start') is not none
        or invocation_args_dict.get('event_time_end') is not none -%}
    {%- set by_vars = var('data_interval_start', none) is not none
        or var('data_interval_end', none) is not none -%}
    {%- if way == 'flags' -%}
        {{ return(by_flags) }}
    {%- elif way == 'vars' -%}
        {{ return(by_vars) }}
    {%- endif -%}
    {{ return(by_flags or by_vars) }}
{% endmacro %}
