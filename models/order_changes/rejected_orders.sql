with

order_change_lines as (

    select * from {{ ref('stg_order_change_lines') }}
    where {{ in_interval('file_date', 'date') }}

),

rejected_lines as (

    select
        source_file,
        file_date,
        line_number,
        raw_line,
        rejection_reason
    from order_change_lines
    where rejection_reason is not null

),

final as (

    select * from rejected_lines

)

select * from final
