"""Fail early, in one line, when the table-format jars a session target needs are not in place.

The profiles put the Delta or Iceberg jars on the driver's classpath as a folder wildcard,
`$LAKEHOUSE_JARS_DIR/<format>/*`, filled by `make install` (`python -m retry_safe.jars`). Java
skips a missing folder silently, so without this check a missing or half-downloaded folder
would surface as a ClassNotFoundException for the catalog class in the middle of a run.
A folder is complete when its manifest (written last, after every jar was verified) exists
and every jar it lists is there with its recorded size.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from dbt_common.exceptions import DbtRuntimeError

JARS_DIR_VARIABLE = "LAKEHOUSE_JARS_DIR"
DEFAULT_JARS_DIR = ".jars"  # relative to the directory dbt runs in, like the profiles' default
MANIFEST = "manifest.json"
FIX = "run `make install` (or `python -m retry_safe.jars`) in the project folder"
# Spark settings that name the jar folders: a classpath (`<dir>/*`) and a list of jars
# (`<dir>/*.jar`, the cluster target ships them to the executors).
CLASSPATH_SETTINGS = {"spark.driver.extraClassPath": os.pathsep, "spark.jars": ","}


def jars_root() -> Path:
    return Path(os.environ.get(JARS_DIR_VARIABLE) or DEFAULT_JARS_DIR).resolve()


def jar_folders(parameters: Mapping[str, str]) -> list[Path]:
    """The folders under the jars root that the session's settings load every jar of."""
    root = jars_root()
    found: list[Path] = []
    for setting, separator in CLASSPATH_SETTINGS.items():
        for entry in str(parameters.get(setting) or "").split(separator):
            entry = entry.strip()
            for suffix in ("/*.jar", "/*"):
                if entry.endswith(suffix):
                    folder = Path(entry.removesuffix(suffix)).resolve()
                    if folder.is_relative_to(root) and folder not in found:
                        found.append(folder)
                    break
    return found


def read_manifest(folder: Path) -> dict[str, dict[str, object]] | None:
    """{jar file name: {"coordinate", "size", "sha256"}}, or None when absent or unreadable."""
    try:
        files = json.loads((folder / MANIFEST).read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return files if isinstance(files, dict) else None


def folder_problem(folder: Path) -> str | None:
    if not folder.is_dir():
        return f"The table-format jars are missing: {folder} does not exist; {FIX}."
    files = read_manifest(folder)
    if not files:
        return (
            f"The table-format jars in {folder} are incomplete (no {MANIFEST}: the download "
            f"did not finish); {FIX}."
        )
    damaged = [
        name
        for name, entry in sorted(files.items())
        if not (folder / name).is_file() or (folder / name).stat().st_size != entry.get("size")
    ]
    if damaged:
        return (
            f"The table-format jars in {folder} are incomplete ({', '.join(damaged)} missing "
            f"or damaged); {FIX}."
        )
    return None


def jars_problem(parameters: Mapping[str, str]) -> str | None:
    """One line naming the folder and the fix, or None when every jar folder is complete."""
    for folder in jar_folders(parameters):
        problem = folder_problem(folder)
        if problem:
            return problem
    return None


def require_jars(parameters: Mapping[str, str]) -> None:
    problem = jars_problem(parameters)
    if problem:
        raise DbtRuntimeError(problem)
