{% macro idempotent_merge_nondeterministic(setting, expressions) %}
    {#-
        The problems (a list of texts, empty when there are none) of a key, merge condition,
        expression or model code that calls a non-deterministic function: a retry would
        compute other keys and insert its rows a second time. setting names where the
        expressions come from; 'the model code' is read in the model's language (Spark SQL or
        Python), every other setting as Spark SQL. The spellings (with or without
        parentheses, any case; not inside string literals or comments) are found by
        adapter.find_nondeterministic (src/dbt/adapters/lakehouse/determinism.py).
    -#}
    {%- set language = (model.language or 'sql') if setting == 'the model code' else 'sql' -%}
    {%- set problems = [] -%}
    {%- for expression in expressions -%}
        {%- set code = expression | string -%}
        {%- set found = adapter.find_nondeterministic(code, language) -%}
        {%- if found -%}
            {%- set where = ('line ' ~ found.line ~ ': "' ~ found.text ~ '"') if '\n' in code else ('"' ~ code ~ '"') -%}
            {%- set problem -%}
                {{ setting }} uses the non-deterministic {{ found.what }} in {{ where }}.
                {%- if setting == 'the model code' %}
                A retry would compute it again and get another value: a key built from it
                matches no existing row and inserts the rows a second time. Take times from
                the interval (interval_bounds() / in_interval(); dbt.interval in Python
                models) or from the source rows, and keys from stable columns. If only
                non-key columns may change on a rerun, set allow_nondeterministic_model=true.
                {%- else %}
                A retry would evaluate it again, match no existing row and insert duplicates.
                Use stable columns (a natural or composite business key) or deterministic
                functions such as lower(), coalesce() or sha2().
                {%- endif %}
            {%- endset -%}
            {%- do problems.append(problem) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{% endmacro %}
