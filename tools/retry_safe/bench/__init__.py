"""`make bench`: re-merging one day of a day-partitioned table, four ways, on Delta and Iceberg.

Modules: `settings` (what to run), `data` (seeded tables and per-case sources), `contenders`
(the dbt models and the hand-written SQL), `job` (the minimal PySpark job, also runnable as its
own process), `measure` (table versions, commit metrics, reset, final-row checks), `run` (one
format in one JVM), `cli` (end-to-end CLI runs in processes of their own), `report` (markdown
and chart), `__main__` (the command line).
"""
