{% test same_rows_as(model, compare_model) %}
    {#-
        Fails with every row that one of the two relations holds and the other does not (none
        when they hold the same rows), each labelled with where it was found. Both must have
        the same columns in the same order. The project applies it to each SQL model with its
        DataFrame twin (compare_model): a reference document's two versions must agree.
    -#}
    with

    model_rows as (

        select * from {{ model }}

    ),

    compare_model_rows as (

        select * from {{ compare_model }}

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
