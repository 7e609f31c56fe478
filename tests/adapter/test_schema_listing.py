"""The schema listing behind dbt's relation cache, while another writer creates and drops tables.

dbt fills its relation cache from one listing per schema when a run starts, and the incremental
materialization decides "first load or MERGE" from it. Spark's `show table extended` fails when
a table it has just named is dropped before it reads its metadata (another run's staging table);
dbt-spark answered that failure with an empty schema, and every model of the run then created
its table again from one interval. The listing must name every table that stays, every time.
"""

from __future__ import annotations

import threading

from dbt.tests.util import get_connection
from pyspark.sql import SparkSession

# tables the other writer creates and drops while the adapter lists the schema: each cycle is
# a window for the race (Iceberg's take about 3 s each, Delta's a third of a second)
CYCLES = 8
# how long the other writer waits for the listing it follows before it reports the test stuck
WAIT_SECONDS = 300


class Listings:
    """The listings made so far, counted as they start and as they end, for the other writer
    to time its drops by."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.started = 0
        self.ended = 0

    def count(self, kind: str) -> None:
        with self.changed:
            setattr(self, kind, getattr(self, kind) + 1)
            self.changed.notify_all()

    def wait_past(self, kind: str, count: int) -> None:
        """Wait until more than `count` listings have `kind` (started or ended)."""
        with self.changed:
            if not self.changed.wait_for(lambda: getattr(self, kind) > count, WAIT_SECONDS):
                raise TimeoutError(f"listing {count + 1} not {kind} within {WAIT_SECONDS} s")


class TestSchemaListing:
    def test_a_schema_listed_while_tables_come_and_go_names_every_table_that_stays(
        self, project, table_format
    ):
        schema = project.test_schema
        spark = SparkSession.builder.getOrCreate()
        spark.sql(f"create table {schema}.kept (id int) using {table_format}")
        problems: list[BaseException] = []

        listings_made = Listings()

        def create_and_drop() -> None:
            # what other runs' Python models do with their staging tables. Even cycles drop the
            # table after a whole listing made since it was created (that listing must name
            # it); odd cycles drop it as soon as a listing starts (the race dbt-spark lost).
            try:
                for cycle in range(CYCLES):
                    name = f"{schema}.staging_{cycle % 3}"
                    spark.sql(f"create table {name} (id int) using {table_format}")
                    made = listings_made.started
                    listings_made.wait_past("ended" if cycle % 2 == 0 else "started", made)
                    spark.sql(f"drop table {name}")
            except BaseException as problem:  # noqa: BLE001 (reported below)
                problems.append(problem)

        schema_relation = project.adapter.Relation.create(schema=schema).without_identifier()
        listings = []
        other_run = threading.Thread(target=create_and_drop)
        with get_connection(project.adapter):
            other_run.start()
            try:
                while other_run.is_alive():
                    listings_made.count("started")
                    relations = project.adapter.list_relations_without_caching(schema_relation)
                    listings.append(sorted(r.identifier for r in relations))
                    listings_made.count("ended")
            finally:
                other_run.join(timeout=600)
        assert problems == []
        missing = [names for names in listings if "kept" not in names]
        assert missing == [], (
            f"{len(missing)} of {len(listings)} listings lacked kept: {missing[0]}"
        )
        # the listings that even cycles waited for named their staging table
        assert any(len(names) > 1 for names in listings), listings[:5]
