-- Reference document 001, SQL version: the drivers of the interval's daily batches. The select
-- is f1_drivers_merge_select (macros/f1_drivers/), shared with f1_drivers_merge_microbatch.
{{ f1_drivers_merge_select(ref('f1_driver_batches')) }}
