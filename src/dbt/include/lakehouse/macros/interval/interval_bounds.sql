{% macro interval_bounds() %}
    {#-
        The interval this model run reconciles, half-open [start, end), from dbt's event-time
        flags --event-time-start / --event-time-end (preferred: a new interval keeps dbt's
        partial parsing) or from the vars data_interval_start / data_interval_end (both ways at
        once must agree), parsed by the adapter's one interval parser (adapter.parse_interval:
        ISO-8601 dates and timestamps, as text or as the dates YAML makes of unquoted values;
        offsets converted to UTC; parsed once per pair of values).
        Returns {'start': datetime, 'end': datetime, 'whole_days': bool}, UTC-aware.
        A missing, malformed or reversed value stops the run before any SQL with a message
        naming the model, the value and the fix. Values reach SQL only as re-formatted
        datetimes, never as text.
        Returns none when no interval is given to a command that writes nothing (compile, docs
        generate, ls, parse): the interval macros then render placeholders.
        A microbatch model run batch by batch gets its batch instead ([event_time_start,
        event_time_end) from dbt, see microbatch_bounds), parsed by the same parser.
    -#}
    {%- if model is defined and model and model.batch -%}
        {#- a microbatch model's batch: dbt's bounds, through the same parser (microbatch_bounds) -#}
        {{ return(microbatch_bounds()) }}
    {%- endif -%}
    {%- if not execute or not (interval_given() or interval_required()) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set who = model.unique_id if model is defined and model else 'this invocation' -%}
    {{ return(adapter.parse_interval(
        who,
        var('data_interval_start', none),
        var('data_interval_end', none),
        invocation_args_dict.get('event_time_start'),
        invocation_args_dict.get('event_time_end'),
    )) }}
{% endmacro %}
