{#-
    interval_bounds (public) and its private helpers: the commands that need no interval
    (interval_required) and a microbatch model's batch (microbatch_bounds).
-#}

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

{% macro interval_required() %}
    {#-
        False for the dbt commands that write nothing and only render SQL (compile, docs
        generate, ls, parse): they work without the interval vars, with placeholders in the
        interval predicates. Every other command (run, build, show, retry, ...) needs them.
    -#}
    {{ return(flags.WHICH not in ['compile', 'generate', 'list', 'ls', 'parse']) }}
{% endmacro %}

{% macro microbatch_bounds() %}
    {#-
        The interval of the batch a microbatch model is running: dbt's batch
        [event_time_start, event_time_end) (from --event-time-start / --event-time-end, or from
        begin, lookback and batch_size), parsed by the adapter's one interval parser
        (adapter.parse_interval, UTC, half-open), like the vars of every other model.
        A microbatch model given the vars data_interval_start / data_interval_end without the
        event-time flags is refused: dbt would run its batches around now, not the vars'
        interval, and the vars would be silently ignored.
    -#}
    {%- set batch = model.batch -%}
    {%- if interval_given('vars') and not interval_given('flags') and flags.WHICH in ['run', 'build'] -%}
        {% set msg %}
{{ model.unique_id }} is a microbatch model: it takes its interval from dbt's batches, not from the vars data_interval_start / data_interval_end, which would be ignored (dbt would load the batches around now instead).
Pass the same interval as event-time flags, end exclusive:
  dbt run --select {{ model.name }} --event-time-start "{{ var('data_interval_start', '<start>') }}" --event-time-end "{{ var('data_interval_end', '<end>') }}"
        {% endset %}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {{ return(adapter.parse_interval(model.unique_id, batch.event_time_start, batch.event_time_end)) }}
{% endmacro %}
