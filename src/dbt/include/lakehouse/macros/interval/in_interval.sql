{% macro in_interval(column, data_type='timestamp', bounds=none) %}
    {#-
        Predicate: column lies in the requested half-open interval [start, end).
        data_type is the column's type, 'date' or 'timestamp', so that the comparison is on the
        column itself (no cast around it) and the engine can prune partitions and files.
        bounds: an interval_bounds() result the caller already holds (default: this run's).
    -#}
    {%- set b = bounds if bounds is not none else interval_bounds() -%}
    {%- set start = interval_literal('start', data_type, b) -%}
    {%- set end = interval_literal('end', data_type, b) -%}
    {{- return('(' ~ column ~ ' >= ' ~ start ~ ' and ' ~ column ~ ' < ' ~ end ~ ')') -}}
{% endmacro %}
