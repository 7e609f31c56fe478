"""A throwaway dbt project on the lakehouse adapter, for the benchmark's dbt contenders
(retry_safe.bench.run) and for the tests' own models.

Models, extra macros and seeds are given as strings and written under a folder of their own,
with a dbt_project.yml that takes the table format from the target's table_format. The strategy comes with the adapter (dbt/include/lakehouse/macros), as
in any other dbt project. Run dbt on it with retry_safe.project.run_dbt(..., project_dir=root).
"""

from __future__ import annotations

from pathlib import Path

DBT_PROJECT = """\
name: scratch
version: "1.0"
config-version: 2
profile: retry_safe
model-paths: ["models"]
macro-paths: ["macros"]
models:
  scratch:
    +file_format: "{{ target.table_format }}"
seeds:
  scratch:
    +file_format: "{{ target.table_format }}"
"""


def write_project(
    root: Path,
    models: dict[str, str],
    macros: dict[str, str] | None = None,
    seeds: dict[str, str] | None = None,
    project: str = "",
) -> Path:
    """Create a project under root with the given models, extra macros and seeds (CSV files and
    their yml), each as file name -> text; project: more dbt_project.yml keys (e.g. on-run-end)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "dbt_project.yml").write_text(DBT_PROJECT + project)
    for folder, files in (("models", models), ("macros", macros or {}), ("seeds", seeds or {})):
        (root / folder).mkdir(exist_ok=True)
        for name, code in files.items():
            (root / folder / name).write_text(code, encoding="utf-8")
    return root
