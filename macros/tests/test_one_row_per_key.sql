{% test one_row_per_key(model, key_columns) %}
    {#-
        Fails with one row per combination of key_columns that appears more than once (NULLs
        compare equal, as in the merge's null-safe key match). The project's key test: it must
        pass after every rerun.
    -#}
    {%- set columns = key_columns | join(', ') -%}
    select
        {{ columns }},
        count(*) as copies
    from {{ model }}
    group by {{ columns }}
    having count(*) > 1
{% endtest %}
