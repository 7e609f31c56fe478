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
