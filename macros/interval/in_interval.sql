{% macro in_interval(column, data_type='timestamp') %}
    {#-
        Predicate: column lies in the requested half-open interval [start, end).
        data_type is the column's type, 'date' or 'timestamp', so that the comparison is on the
        column itself (no cast around it) and the engine can prune partitions and files.
    -#}
    {{- return('(' ~ column ~ ' >= ' ~ interval_literal('start', data_type) ~ ' and ' ~ column ~ ' < ' ~ interval_literal('end', data_type) ~ ')') -}}
{% endmacro %}
