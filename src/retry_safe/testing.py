"""A throwaway dbt project that uses this project's macros, for functional tests.

Like dbt's adapter functional tests (`dbt.tests.util`): a test writes its models as strings,
runs dbt on them twice or more, then compares relations; the project's macros are linked in,
so the strategy under test is the real one.
"""

from __future__ import annotations

from pathlib import Path

from retry_safe.project import PROJECT_DIR

DBT_PROJECT = """\
name: scratch
version: "1.0"
config-version: 2
profile: retry_safe
model-paths: ["models"]
macro-paths: ["macros", "project_macros"]
flags:
  require_explicit_package_overrides_for_builtin_materializations: false
models:
  scratch:
    +file_format: "{{ 'iceberg' if 'iceberg' in target.name else 'delta' }}"
seeds:
  scratch:
    +file_format: "{{ 'iceberg' if 'iceberg' in target.name else 'delta' }}"
"""


def write_project(
    root: Path,
    models: dict[str, str],
    macros: dict[str, str] | None = None,
    seeds: dict[str, str] | None = None,
) -> Path:
    """Create a project under root with the given models, extra macros and seeds (CSV files and
    their yml), each as file name -> text."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "dbt_project.yml").write_text(DBT_PROJECT)
    for folder, files in (("models", models), ("macros", macros or {}), ("seeds", seeds or {})):
        (root / folder).mkdir(exist_ok=True)
        for name, code in files.items():
            (root / folder / name).write_text(code, encoding="utf-8")
    project_macros = root / "project_macros"
    if project_macros.is_symlink():  # a reused folder may still link another checkout's macros
        project_macros.unlink()
    if not project_macros.exists():
        project_macros.symlink_to(PROJECT_DIR / "macros", target_is_directory=True)
    return root
