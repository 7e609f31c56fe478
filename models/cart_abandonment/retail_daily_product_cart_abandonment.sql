with

session_products as (

    select * from {{ ref('retail_session_products') }}

),

session_products_in_interval as (

    select *
    from session_products
    where {{ in_interval('event_date', 'date') }}

),

cart_sessions as (

    select
        session_id,
        event_date,
        product_id,
        product_name,
        category
    from session_products_in_interval
    where added_to_cart

),

purchase_sessions as (

    select
        session_id,
        product_id,
        true as purchased_cart
    from session_products_in_interval
    where purchased

),

cart_outcomes as (

    select
        cart_sessions.event_date,
        cart_sessions.product_id,
        cart_sessions.product_name,
        cart_sessions.category,
        coalesce(purchase_sessions.purchased_cart, false) as purchased_cart
    from cart_sessions
    left join purchase_sessions
        on
            cart_sessions.session_id = purchase_sessions.session_id
            and cart_sessions.product_id = purchase_sessions.product_id

),

cart_summary as (

    select
        event_date,
        product_id,
        product_name,
        category,
        count(*) as cart_session_count,
        sum(case when purchased_cart then 1 else 0 end) as purchased_cart_session_count,
        sum(case when not purchased_cart then 1 else 0 end) as abandoned_cart_session_count
    from cart_outcomes
    group by
        event_date,
        product_id,
        product_name,
        category

),

final as (

    select
        event_date,
        product_id,
        product_name,
        category,
        cart_session_count,
        purchased_cart_session_count,
        abandoned_cart_session_count,
        cast(
            case
                when cart_session_count > 0
                    then abandoned_cart_session_count / cart_session_count
                else 0
            end as decimal(9, 4)
        ) as cart_abandonment_rate
    from cart_summary

)

select * from final
