"""dbt's docs artifacts, checked the way a docs site reader relies on them."""

from __future__ import annotations

import json
from pathlib import Path

# every model but the opt-in f1_drivers_merge_microbatch (var f1_drivers_microbatch)
ENABLED_MODELS = 9


def documented_columns_missing(target_path: Path) -> dict[str, object]:
    """After `dbt docs generate --target-path target_path`: each model whose catalog entry
    lacks its table or does not list exactly the columns its yml documents, with what the
    catalog has. Empty when the catalog is complete."""
    catalog = json.loads((target_path / "catalog.json").read_text())["nodes"]
    nodes = json.loads((target_path / "manifest.json").read_text())["nodes"]
    models = {key: node for key, node in nodes.items() if node["resource_type"] == "model"}
    assert len(models) == ENABLED_MODELS, sorted(models)
    missing: dict[str, object] = {}
    for unique_id, node in models.items():
        columns = set(catalog.get(unique_id, {}).get("columns", {}))
        if columns != set(node["columns"]):
            missing[unique_id] = sorted(columns)
    return missing
