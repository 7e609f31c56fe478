with

balance_batches as (

    select * from {{ ref('customer_balance_batches') }}

),

batch_in_interval as (

    select
        id,
        name,
        -- a new customer starts with the amount; an existing one adds it (see config)
        amount as balance,
        version,
        is_deleted,
        batch_id
    from balance_batches
    where {{ in_interval('batch_date', 'date') }}

),

final as (

    select * from batch_in_interval

)

select * from final
