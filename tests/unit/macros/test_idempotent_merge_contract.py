"""Which columns an idempotent_merge model's yml binds, without Spark (base.py): the contract
(`contract: {enforced: true}`, or `enforce_column_types` for a Python model) and its not_null
columns, which the source profile then counts. The check on real rows, both formats, is
tests/test_contracts.py."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from unit.macros.base import Macros, normalize

COLUMNS = {
    "id": {"name": "id", "data_type": "bigint", "constraints": [{"type": "not_null"}]},
    "status": {"name": "status", "data_type": "string", "constraints": []},
    "day": {"name": "day", "data_type": "date", "constraints": [{"type": "check"}]},
}
# a model-level not_null over day and id (id is listed once), and a check constraint (ignored)
CONSTRAINTS = [
    {"type": "not_null", "columns": ["day", "id"]},
    {"type": "check", "columns": ["status"], "expression": "status <> ''"},
]


@pytest.mark.parametrize(
    ("config", "bound"),
    [
        ({}, False),
        ({"contract": SimpleNamespace(enforced=False)}, False),
        ({"contract": SimpleNamespace(enforced=True)}, True),
        ({"contract": SimpleNamespace(enforced=False), "enforce_column_types": True}, True),
    ],
    ids=["no contract", "contract not enforced", "contract enforced", "enforce_column_types"],
)
def test_only_an_enforced_contract_or_enforce_column_types_binds_the_columns(
    config: dict[str, Any], bound: bool
) -> None:
    macros = Macros(config, columns=COLUMNS, constraints=CONSTRAINTS)
    assert macros.idempotent_merge_contract_enforced() is bound
    assert macros.idempotent_merge_not_null_columns() == (["id", "day"] if bound else [])


def test_the_contract_check_writes_each_name_as_spark_reads_it() -> None:
    """dbt's own check and its select around a contracted query wrote `customer name` bare
    unless the yml said quote: true (Spark: PARSE_SYNTAX_ERROR); names that need it are written
    in backticks, quote: true always is."""
    columns = {
        "id": {"name": "id", "data_type": "bigint"},
        "customer name": {"name": "customer name", "data_type": "string"},
        "order": {"name": "order", "data_type": "bigint"},
        "Größe": {"name": "Größe", "data_type": "string"},
        "status": {"name": "status", "data_type": "string", "quote": True},
    }
    macros = Macros({}, columns=columns)
    assert normalize(macros.lakehouse__get_empty_schema_sql(columns)) == (
        "select cast(null as bigint) as id, cast(null as string) as `customer name`, "
        "cast(null as bigint) as `order`, cast(null as string) as `Größe`, "
        "cast(null as string) as `status`"
    )
    # the select around the query that creates a contracted model's table
    assert normalize(macros.lakehouse__get_column_names()) == (
        "id, `customer name`, `order`, `Größe`, `status`"
    )
