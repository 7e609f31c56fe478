{% macro f1_drivers_merge_select(driver_batches) %}
    {#-
        The select of reference document 001's SQL version: the drivers of driver_batches (the
        seed f1_driver_batches) whose batch_date is in the interval, with created_date and
        updated_date the interval's start. The models f1_drivers_merge (idempotent_merge, the
        interval flags) and f1_drivers_merge_microbatch (dbt's microbatch, one day a batch)
        both select it: in_interval and interval_literal read the run's interval or the
        batch's bounds (interval_bounds), so each gives the same rows for the same day.
    -#}
with

driver_batches as (

    select * from {{ driver_batches }}

),

batch_in_interval as (

    select
        driver_id,
        dob,
        forename,
        surname,
        batch_date
    from driver_batches
    where {{ in_interval('batch_date', 'date') }}

),

final as (

    select
        driver_id,
        dob,
        forename,
        surname,
        batch_date,
        -- the batch's interval, not the wall clock: a rerun writes the same values
        {{ interval_literal('start') }} as created_date,
        {{ interval_literal('start') }} as updated_date
    from batch_in_interval

)

select * from final
{% endmacro %}
