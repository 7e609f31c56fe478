"""Spark settings every session target gets unless its profile sets them itself.

`hive.metastore.disallow.incompatible.col.type.changes=false`: Spark registers a Delta table in
the Hive metastore in its own format, with one placeholder column, `col array<string>`. When an
existing Delta table is replaced (a `table` model's rerun, `create or replace table` on
`--full-refresh`), Delta writes the new schema to the metastore (UpdateCatalog.replaceTable),
and Spark first tries to store it the Hive-compatible way (HiveExternalCatalog
.alterTableDataSchema). Hive 2.3's default refuses a column whose type differs from the old
column at the same position (array<string> -> string: the table's first column, e.g.
`source_file`), so the metastore, which runs inside the driver, logged
`ERROR HiveAlterHandler: Failed to alter table ... types incompatible ...` and a Java stack trace
of about 130 lines; Spark then stored the schema in its own format and the run succeeded.
With the check off the first attempt succeeds: nothing is logged. Spark itself refuses
incompatible column type changes of its own tables, so no check is lost for them; Iceberg
tables in a Hive metastore need the same setting to change a column's type.
"""

from __future__ import annotations

from collections.abc import Mapping

SESSION_DEFAULTS: dict[str, str] = {
    "spark.hadoop.hive.metastore.disallow.incompatible.col.type.changes": "false",
}


def with_session_defaults(parameters: Mapping[str, str] | None) -> dict[str, str]:
    """The profile's server_side_parameters, completed with SESSION_DEFAULTS (the profile wins)."""
    return {**SESSION_DEFAULTS, **(parameters or {})}
