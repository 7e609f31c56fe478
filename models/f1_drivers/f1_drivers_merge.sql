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
