-- The SQL and the DataFrame versions of reference document 001 must hold the same rows:
-- returns every row one of them has and the other has not (none when they agree).

with

sql_version as (

    select * from {{ ref('f1_drivers_merge') }}

),

python_version as (

    select * from {{ ref('f1_drivers_merge_df') }}

),

only_in_sql as (

    select * from sql_version
    except
    select * from python_version

),

only_in_python as (

    select * from python_version
    except
    select * from sql_version

),

final as (

    select 'only in the SQL version' as difference, * from only_in_sql
    union all
    select 'only in the Python version' as difference, * from only_in_python

)

select * from final
