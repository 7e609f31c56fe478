-- The microbatch twin of f1_drivers_merge: the same select (f1_drivers_merge_select), run by
-- dbt one day (batch) at a time. in_interval / interval_literal read the batch's bounds here
-- (interval_bounds), so each batch gives exactly the rows and created_date the
-- idempotent_merge twin gets for that day.
{{ f1_drivers_merge_select(ref('f1_driver_batches')) }}
