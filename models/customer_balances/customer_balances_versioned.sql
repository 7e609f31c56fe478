with

customer_versions as (

    select * from {{ ref('customer_versions') }}

),

batch_in_interval as (

    select
        id,
        name,
        balance,
        version,
        is_deleted
    from customer_versions
    where {{ in_interval('batch_date', 'date') }}

),

final as (

    select * from batch_in_interval

)

select * from final
