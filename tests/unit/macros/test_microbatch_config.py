"""A microbatch model's configs, checked with its strategy before anything is written
(lakehouse_validate_incremental_strategy -> microbatch_check_config): every problem in one error,
so a model written for dbt-spark's microbatch (file_format parquet, no unique_key) learns all of
them at once. No Spark, no dbt run (base.py); the concurrent_batches refusal on a real run is in
tests/test_microbatch.py."""

from __future__ import annotations

from typing import Any

import pytest
from dbt_common.exceptions import CompilationError
from unit.macros.base import MODEL_ID, Macros

FORMAT = (
    '  - file_format "parquet" has no MERGE. Each batch is reconciled with idempotent_merge, '
    "not dbt-spark's insert_overwrite: set file_format to 'delta' or 'iceberg' (partition_by "
    "is then optional)."
)
UNIQUE_KEY = (
    "  - unique_key is not set. Each batch is reconciled with idempotent_merge, which matches "
    "the batch's rows to the table's by key: set unique_key to the column (or list of columns) "
    "that identifies a row, e.g. unique_key='order_id'."
)
CONCURRENT = (
    "  - concurrent_batches: true is not supported on the lakehouse adapter. Each batch labels "
    "its commit with its interval through session-wide commit-metadata settings of the one "
    "SparkSession, so concurrent batches could record each other's intervals in the ledger. "
    "Remove concurrent_batches (batches then run one after the other; each is still one atomic "
    "commit, or none)."
)
HEADLINE = f"Model {MODEL_ID} (incremental_strategy='microbatch'): is misconfigured:"


def refusal(config: dict[str, Any], file_format: str) -> list[str]:
    with pytest.raises(CompilationError) as raised:
        Macros(config).lakehouse_validate_incremental_strategy("microbatch", file_format)
    return raised.value.msg.strip().splitlines()


def test_dbt_sparks_own_microbatch_model_learns_every_problem_at_once():
    config = {"incremental_strategy": "microbatch", "partition_by": "day", "file_format": "parquet"}
    assert refusal(config, "parquet") == [HEADLINE, FORMAT, UNIQUE_KEY]
    assert refusal({**config, "concurrent_batches": True}, "parquet") == [
        HEADLINE,
        FORMAT,
        UNIQUE_KEY,
        CONCURRENT,
    ]


@pytest.mark.parametrize(
    ("config", "file_format", "problems"),
    [
        ({"unique_key": "id"}, "parquet", [FORMAT]),
        ({}, "delta", [UNIQUE_KEY]),
        ({"unique_key": "id", "concurrent_batches": True}, "iceberg", [CONCURRENT]),
    ],
)
def test_each_problem_alone(config, file_format, problems):
    assert refusal(config, file_format) == [HEADLINE, *problems]


@pytest.mark.parametrize("file_format", ["delta", "iceberg"])
def test_a_microbatch_model_with_a_merge_format_and_a_key_passes(file_format):
    macros = Macros({"unique_key": "id"})
    assert macros.lakehouse_validate_incremental_strategy("microbatch", file_format) == "microbatch"
