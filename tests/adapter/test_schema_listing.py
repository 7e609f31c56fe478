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


class TestSchemaListing:
    def test_a_schema_listed_while_tables_come_and_go_names_every_table_that_stays(
        self, project, table_format
    ):
        schema = project.test_schema
        spark = SparkSession.builder.getOrCreate()
        spark.sql(f"create table {schema}.kept (id int) using {table_format}")
        problems: list[BaseException] = []

        def create_and_drop() -> None:
            # what other runs' Python models do with their staging tables
            try:
                for cycle in range(CYCLES):
                    name = f"{schema}.staging_{cycle % 3}"
                    spark.sql(f"create table {name} (id int) using {table_format}")
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
                    relations = project.adapter.list_relations_without_caching(schema_relation)
                    listings.append(sorted(r.identifier for r in relations))
            finally:
                other_run.join(timeout=600)
        assert problems == []
        missing = [names for names in listings if "kept" not in names]
        assert missing == [], (
            f"{len(missing)} of {len(listings)} listings lacked kept: {missing[0]}"
        )
        # the listings ran while the tables came and went: some of them named a staging table
        assert any(len(names) > 1 for names in listings), listings[:5]
