"""The standard builds (`pip wheel .`, `pip install .`, `python -m build`) run setup.py in an
isolated environment that holds nothing but pyproject.toml's build requirements: whatever the
build imports must be the standard library or one of them. setup.py loads
java_classes.py, which compiles the Java classes against pyspark's jars; `make wheel` builds the same
wheel without isolation, from the locked dependencies (requirements.lock).
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

REPOSITORY = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())
# what the build runs: setup.py, and java_classes.py, which setup.py loads on its own
BUILD_FILES = [
    REPOSITORY / "setup.py",
    REPOSITORY / "src" / "dbt" / "adapters" / "lakehouse" / "java_classes.py",
]


def requirements(specifications: list[str]) -> dict[str, Requirement]:
    return {r.name: r for r in map(Requirement, specifications)}


BUILD_REQUIRES = requirements(PYPROJECT["build-system"]["requires"])


def imported_by(path: Path) -> set[str]:
    """The top-level packages a file imports when it loads (its module-level imports) and those
    it looks up with importlib.util.find_spec("...")."""
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "find_spec"
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(node.args[0].value.split(".")[0])
    return names


def test_what_the_build_imports_is_the_standard_library_or_a_build_requirement():
    imported = set().union(*map(imported_by, BUILD_FILES))
    assert {"setuptools", "pyspark"} <= imported
    assert imported - set(sys.stdlib_module_names) <= set(BUILD_REQUIRES)


def test_the_classes_compile_against_the_pyspark_the_package_runs_on():
    dependencies = requirements(PYPROJECT["project"]["dependencies"])
    assert str(BUILD_REQUIRES["pyspark"].specifier) == str(dependencies["pyspark"].specifier)


def test_an_isolated_build_uses_the_setuptools_make_wheel_builds_with():
    locked = requirements((REPOSITORY / "requirements.lock").read_text().split())
    assert str(BUILD_REQUIRES["setuptools"].specifier) == str(locked["setuptools"].specifier)
