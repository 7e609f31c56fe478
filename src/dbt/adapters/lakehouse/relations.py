"""Recognise Iceberg tables of the session catalog in what `show table extended` prints.

dbt-spark marks a relation as Iceberg when its information says `Provider: iceberg`. An Iceberg
table in `spark_catalog` (Iceberg's SparkSessionCatalog over the Hive metastore) says
`Provider: hive`, because the metastore holds it as an external Hive table; what makes it
Iceberg is the table property Iceberg writes, `table_type=ICEBERG`:

    Type: EXTERNAL
    Provider: hive
    Table Properties: [current-schema=..., metadata_location=..., table_type=ICEBERG, ...]

With `is_iceberg` false, dbt-spark's snapshot refuses the table on its second run ("is in
another format than 'delta' or 'iceberg' or 'hudi'"), and its table materialization drops the
table before rebuilding it instead of replacing it. An Iceberg view says `table_type=ICEBERG-VIEW`
and stays a view.
"""

from __future__ import annotations

import dataclasses
import re

from dbt.adapters.base import BaseRelation
from dbt.adapters.lakehouse.audit import stages as audit
from dbt.adapters.spark.relation import SparkRelation

ICEBERG_TABLE_PROPERTY = re.compile(
    r"^Table Properties: \[(?:.*, )?table_type=ICEBERG[,\]]", re.MULTILINE | re.IGNORECASE
)


def is_iceberg_table(information: str | None) -> bool:
    """True when `show table extended` information describes an Iceberg table."""
    return bool(information) and bool(ICEBERG_TABLE_PROPERTY.search(information))


def with_iceberg_detected(relation: BaseRelation) -> BaseRelation:
    """The relation, marked is_iceberg when its information shows Iceberg's table property."""
    information = getattr(relation, "information", None)
    if getattr(relation, "is_iceberg", False) or not is_iceberg_table(information):
        return relation
    return dataclasses.replace(relation, is_iceberg=True)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class LakehouseRelation(SparkRelation):
    """dbt-spark's relation, rendered as its staged name while a write-audit-publish stage of
    this invocation holds it (audit.py): the model's tests and downstream models then read the
    staged state through any `ref()` or `{{ model }}`, and never the published table."""

    def render(self) -> str:
        staged = audit.staged_name(self.schema, self.identifier)
        return staged if staged is not None else super().render()
