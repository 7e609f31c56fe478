with

order_change_lines as (

    select * from {{ ref('stg_order_change_lines') }}
    where {{ in_interval('file_date', 'date') }}

),

accepted_changes as (

    select
        order_id,
        customer_id,
        status,
        amount,
        currency,
        ordered_at,
        updated_at
    from order_change_lines
    where rejection_reason is null

),

final as (

    select * from accepted_changes

)

select * from final
