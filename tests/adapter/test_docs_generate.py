"""dbt's docs generate classes (dbt-spark's suite has none), with the catalog Spark reports,
written out by hand: a seed is a table, a model a view (or a table), no database level, no
comments, the owner is the operating-system user Spark runs as.

As reported through dbt-spark: a 64-bit integer is `bigint` in a Delta table's entry and `long`
in a view's or an Iceberg table's; an Iceberg table has statistics (its row count, and its
size in bytes, which depends on the Parquet encoding), a Delta table and a view none.
"""

import getpass

import pytest
from dbt.tests.adapter.basic.expected_catalog import no_stats
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate, BaseDocsGenReferences
from dbt.tests.util import AnyInteger

TEXT_COLUMNS = {"first_name": "string", "email": "string", "ip_address": "string"}


def seed_columns(long_type: str) -> dict[str, str]:
    return {"id": long_type, **TEXT_COLUMNS, "updated_at": "timestamp"}


def table_stats(table_format: str, rows: int) -> dict:
    if table_format == "delta":
        return no_stats()
    stat = {"include": True, "description": None}
    return {
        "bytes": {"id": "bytes", "label": "bytes", "value": AnyInteger(), **stat},
        "rows": {"id": "rows", "label": "rows", "value": rows, **stat},
        "has_stats": {**no_stats()["has_stats"], "value": True},
    }


def entry(unique_id: str, schema: str, name: str, kind: str, columns: dict, stats: dict) -> dict:
    return {
        "unique_id": unique_id,
        "metadata": {
            "schema": schema,
            "database": None,
            "name": name,
            "type": kind,
            "comment": None,
            "owner": getpass.getuser(),
        },
        "stats": stats,
        "columns": {
            column: {"name": column, "index": index, "type": data_type, "comment": None}
            for index, (column, data_type) in enumerate(columns.items())
        },
    }


def seed_entries(schema: str, table_format: str) -> tuple[dict, dict]:
    """The seed (one row) as a node and as the source my_source.my_table."""
    columns = seed_columns("bigint" if table_format == "delta" else "long")
    stats = table_stats(table_format, rows=1)
    node = "seed.test.seed"
    source = "source.test.my_source.my_table"
    return (
        {node: entry(node, schema, "seed", "table", columns, stats)},
        {source: entry(source, schema, "seed", "table", columns, stats)},
    )


class TestDocsGenerate(BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project, table_format):
        schema = project.test_schema
        seed, sources = seed_entries(schema, table_format)
        view_columns = seed_columns("long")
        return {
            "nodes": {
                "model.test.model": entry(
                    "model.test.model", schema, "model", "view", view_columns, no_stats()
                ),
                "model.test.second_model": entry(
                    "model.test.second_model",
                    f"{schema}_test",
                    "second_model",
                    "view",
                    view_columns,
                    no_stats(),
                ),
                **seed,
            },
            "sources": sources,
        }


class TestDocsGenReferences(BaseDocsGenReferences):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project, table_format):
        schema = project.test_schema
        seed, sources = seed_entries(schema, table_format)
        long_type = "bigint" if table_format == "delta" else "long"
        return {
            "nodes": {
                "model.test.ephemeral_summary": entry(
                    "model.test.ephemeral_summary",
                    schema,
                    "ephemeral_summary",
                    "table",
                    {"first_name": "string", "ct": long_type},
                    table_stats(table_format, rows=1),
                ),
                "model.test.view_summary": entry(
                    "model.test.view_summary",
                    schema,
                    "view_summary",
                    "view",
                    {"first_name": "string", "ct": "long"},
                    no_stats(),
                ),
                **seed,
            },
            "sources": sources,
        }
