{% test same_rows_as(model, compare_model, interval_column=none, interval_data_type='date') %}
    {#-
        Fails with every row that one of the two relations holds and the other does not (none
        when they hold the same rows), each labelled with where it was found. Both must have
        the same columns in the same order. The project applies it to each SQL model with its
        DataFrame twin (compare_model): a reference document's two versions must agree.
        With interval_column, an invocation given an interval compares the rows of that
        interval only: each twin reconciles exactly its interval, and the rest of each table
        is what other runs published, one twin possibly before the other (parallel runs of a
        scheduler). Without an interval it compares the whole tables.
    -#}
    {%- set scope = ('where ' ~ in_interval(interval_column, interval_data_type)) if interval_column is not none and interval_given() else '' -%}
    with

    model_rows as (

        select * from {{ model }} {{ scope }}

    ),

    compare_model_rows as (

        select * from {{ compare_model }} {{ scope }}

    ),

    only_in_model as (

        select * from model_rows
        except
        select * from compare_model_rows

    ),

    only_in_compare_model as (

        select * from compare_model_rows
        except
        select * from model_rows

    ),

    final as (

        select 'only in the model' as difference, * from only_in_model
        union all
        select 'only in {{ compare_model.identifier }}' as difference, * from only_in_compare_model

    )

    select * from final
{% endtest %}
