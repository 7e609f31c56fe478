{% macro interval_required() %}
    {#-
        False for the dbt commands that write nothing and only render SQL (compile, docs
        generate, ls, parse): they work without the interval vars, with placeholders in the
        interval predicates. Every other command (run, build, show, retry, ...) needs them.
    -#}
    {{ return(flags.WHICH not in ['compile', 'generate', 'list', 'ls', 'parse']) }}
{% endmacro %}
