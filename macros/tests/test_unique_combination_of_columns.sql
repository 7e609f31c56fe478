{% test unique_combination_of_columns(model, combination_of_columns) %}
    {#-
        Fails with one row per combination of the columns that appears more than once
        (NULLs compare equal, as in the merge's null-safe key match). The project's key test:
        it must pass after every rerun.
    -#}
    {%- set columns = combination_of_columns | join(', ') -%}
    select
        {{ columns }},
        count(*) as copies
    from {{ model }}
    group by {{ columns }}
    having count(*) > 1
{% endtest %}
