"""dbt Labs' microbatch class (dbt-spark's tests/functional/adapter/incremental_strategies/
test_microbatch.py) on the lakehouse adapter.

dbt-spark runs it with a model of its own (no unique_key, `partition_by`, parquet: its
microbatch is `insert_overwrite`). Here the suite's own model runs unchanged (`unique_key='id'`,
the target's table format): every batch is an interval for `idempotent_merge`. dbt computes
the batches from the model's `begin` and the current time, as a scheduler's plain `dbt run`
without `--event-time-start` / `--event-time-end` does; the rerun of a day with no new rows
leaves the table as it was, the next day's run adds that day's row.
"""

from datetime import datetime

from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.util import relation_from_name

# the suite's input rows: id n has the event time 2020-01-0n 00:00 UTC (ids 4 and 5 inserted
# by the test after the first runs)
EVENT_DAYS = {n: datetime(2020, 1, n) for n in range(1, 6)}


class TestMicrobatch(BaseMicrobatch):
    def assert_row_count(self, project, relation_name: str, expected_row_count: int):
        """dbt Labs' count, then the model's exact rows: the first n input rows, once each."""
        super().assert_row_count(project, relation_name, expected_row_count)
        if relation_name != "microbatch_model":
            return
        relation = relation_from_name(project.adapter, relation_name)
        found = project.run_sql(
            f"select id, cast(event_time as timestamp_ntz) from {relation} order by id",
            fetch="all",
        )
        expected = [(n, EVENT_DAYS[n]) for n in range(1, expected_row_count + 1)]
        assert [tuple(row) for row in found] == expected
