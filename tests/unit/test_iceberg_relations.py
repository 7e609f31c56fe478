"""Which `show table extended` information is an Iceberg table (no Spark here; the snapshot test,
tests/test_snapshots.py, runs it on real tables)."""

from __future__ import annotations

import pytest
from dbt.adapters.spark import SparkRelation

from dbt.adapters.lakehouse.relations import is_iceberg_table, with_iceberg_detected

# As Spark 4.1 with Iceberg 1.12's SparkSessionCatalog prints them (abridged: the schema lines).
ICEBERG_TABLE = """Catalog: spark_catalog
Database: x
Table: t
Type: EXTERNAL
Provider: hive
Table Properties: [current-schema={"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"int"}]}, metadata_location=file:/lakehouse/iceberg/warehouse/x.db/t/metadata/00000-79d9.metadata.json, owner=root, snapshot-count=0, table_type=ICEBERG, transient_lastDdlTime=1796083477, write.parquet.compression-codec=zstd]
Location: file:/lakehouse/iceberg/warehouse/x.db/t
Serde Library: org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe
"""
ICEBERG_VIEW = """Catalog: spark_catalog
Database: x
Table: v
Type: VIEW
View Text: select 1 as a
Table Properties: [create_engine_version=Spark 4.1.4, spark.query-column-names=a, table_type=ICEBERG-VIEW, transient_lastDdlTime=1796083480]
"""
PARQUET_TABLE = """Catalog: spark_catalog
Database: x
Table: p
Type: MANAGED
Provider: parquet
"""
DELTA_TABLE = """Catalog: spark_catalog
Database: x
Table: d
Type: MANAGED
Provider: delta
Table Properties: [delta.minReaderVersion=1, delta.minWriterVersion=2]
"""


@pytest.mark.parametrize(
    ("information", "expected"),
    [
        (ICEBERG_TABLE, True),
        (ICEBERG_TABLE.replace("table_type=ICEBERG, ", ""), False),
        (
            ICEBERG_TABLE.replace(", table_type=ICEBERG", "").replace("[", "[table_type=ICEBERG, "),
            True,
        ),
        (ICEBERG_VIEW, False),
        (PARQUET_TABLE, False),
        (DELTA_TABLE, False),
        ("", False),
        (None, False),
    ],
)
def test_an_iceberg_table_is_told_by_its_table_type_property(information, expected):
    assert is_iceberg_table(information) is expected


def test_only_iceberg_tables_are_marked():
    table = SparkRelation.create(schema="x", identifier="t", information=ICEBERG_TABLE)
    assert table.is_iceberg is None
    marked = with_iceberg_detected(table)
    assert marked.is_iceberg is True
    assert (marked.schema, marked.identifier, marked.information) == ("x", "t", ICEBERG_TABLE)
    delta = SparkRelation.create(schema="x", identifier="d", information=DELTA_TABLE, is_delta=True)
    assert with_iceberg_detected(delta) is delta
