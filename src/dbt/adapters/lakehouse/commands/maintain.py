"""`lakehouse maintain --select S [--retain 7d] [--dry-run] [--json]`: the selection's tables
maintained through one dbt run-operation (lakehouse_maintain), which checks every table before
it changes any; what is done to a table, and why it is safe beside running loads, is
tables/maintenance.py."""

from __future__ import annotations

import json
from typing import Any

from dbt.adapters.lakehouse.commands.catchup import Dbt, failure
from dbt.adapters.lakehouse.tables.maintenance import MaintenanceError, parse_retain, report_lines

PREFIX = "lakehouse_maintain "


def maintain_command(dbt: Dbt, selection: str, retain: str, dry_run: bool, as_json: bool) -> int:
    """`lakehouse maintain`: the selection's tables (models, seeds, snapshots; views have no
    files), then one dbt run-operation that checks every one before it changes any
    (lakehouse_maintain). A refusal raises MaintenanceError."""
    parse_retain(retain)
    dbt.parse()
    nodes = dbt.selected(selection, ["model", "seed", "snapshot"])
    if not nodes:
        raise MaintenanceError(
            f"--select {selection} selects no model, seed or snapshot of this project: check "
            "the name (dbt ls --select ... lists what a selection holds)."
        )
    tables = [
        n["unique_id"]
        for n in nodes
        if (n.get("config") or {}).get("materialized") not in ("view", "ephemeral")
    ]
    if not tables:
        names = ", ".join(n["name"] for n in nodes)
        raise MaintenanceError(
            f"--select {selection} holds no table ({names} are views or ephemeral models, "
            "which keep no files). Select the tables to maintain."
        )
    records: list[dict[str, Any]] = []

    def capture(event: Any) -> None:
        message = getattr(event.data, "msg", "")
        if event.info.name in ("JinjaLogDebug", "JinjaLogInfo") and message.startswith(PREFIX):
            records.append(json.loads(message.removeprefix(PREFIX)))

    arguments = json.dumps({"models": tables, "retain": retain, "dry_run": dry_run})
    result = dbt.invoke(["run-operation", "lakehouse_maintain", "--args", arguments], [capture])
    if not result.success:
        raise MaintenanceError(failure(result).strip())
    refused = [r["problems"] for r in records if "problems" in r]
    if refused:
        lines = "\n".join(f"  - {problem}" for problem in refused[0])
        raise MaintenanceError(f"nothing was changed, because\n{lines}")
    if as_json:
        print(json.dumps({"retain": retain, "dry_run": dry_run, "tables": records}, default=str))
    else:
        print("\n".join(report_lines(records, dry_run)))
    return 0
