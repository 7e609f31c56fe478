-- The microbatch twin of f1_drivers_merge: the same SQL, run by dbt one day (batch) at a time.
-- in_interval / interval_literal read the batch's bounds here (interval_bounds), so each batch
-- gives exactly the rows and created_date the idempotent_merge twin gets for that day.
with

driver_batches as (

    select * from {{ ref('f1_driver_batches') }}

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
