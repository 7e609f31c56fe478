"""dbt Labs' adapter test suite against the lakehouse adapter, on Delta or Iceberg.

dbt-tests-adapter's plugin writes a dbt project per test class into a temporary folder and
runs dbt in this process (the SparkSession of the session method is started once and reused).
The profile it writes is `dbt_profile_target` below: the project's own target (profiles/
profiles.yml, `--target local` = Delta, `--target local_iceberg` = Iceberg), rendered as dbt
renders it; the adapter puts the warehouse and its metastore in a temporary folder
(LAKEHOUSE_HOME) and takes the table-format jars from LAKEHOUSE_JARS_DIR (default: the
repository's .jars, filled by `make install`).
Every model, seed and snapshot of the suite's projects gets the target's table format.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import passes
from support.processes import SUITE_JAVA_OPTIONS

from retry_safe.project import EMBEDDED_TARGETS
from retry_safe.project import table_format as table_format_of

pytest_plugins = ["dbt.tests.fixtures.project"]

REPOSITORY = Path(__file__).resolve().parents[2]
EMBEDDED = sorted(EMBEDDED_TARGETS.values())  # the embedded targets: local, local_iceberg


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--target",
        default=os.environ.get("DBT_TARGET", "local"),
        choices=EMBEDDED,
        help="the project's target to run the suite on: local (Delta) or local_iceberg (Iceberg)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", passes.MARKER)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    passes.deselect_other_passes(config, items, config.getoption("--target"))


@pytest.fixture(scope="session")
def table_format(request: pytest.FixtureRequest) -> str:
    return table_format_of(request.config.getoption("--target"))


@pytest.fixture(scope="session")
def lakehouse_target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """The project's target as dbt renders it, its warehouse and metastore in a fresh folder.

    Paths become absolute: the suite runs dbt from each test's own project folder.
    """
    from dbt.config.renderer import ProfileRenderer
    from dbt_common.context import set_invocation_context

    target = request.config.getoption("--target")
    os.environ["LAKEHOUSE_HOME"] = str(tmp_path_factory.mktemp(f"adapter_suite_{target}"))
    jars = os.environ.get("LAKEHOUSE_JARS_DIR", ".jars")
    os.environ["LAKEHOUSE_JARS_DIR"] = str((REPOSITORY / jars).resolve())
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    # The suite's JVM runs as the main tree's does (tests/conftest.py): expressions interpreted
    # (tiny tables), C2 only for what stays hot, the serial collector. The wheel-install test
    # keeps Spark's defaults for code generation.
    os.environ.setdefault("LAKEHOUSE_CODEGEN", "false")
    os.environ.setdefault("LAKEHOUSE_JAVA_OPTIONS", SUITE_JAVA_OPTIONS)
    set_invocation_context(os.environ)
    profiles = yaml.safe_load((REPOSITORY / "profiles" / "profiles.yml").read_text())
    return ProfileRenderer({}).render_data(profiles["retry_safe"]["outputs"][target])


@pytest.fixture(scope="class")
def dbt_profile_target(lakehouse_target: dict[str, Any]) -> dict[str, Any]:
    """A `type: lakehouse`, `method: session` profile (dbt's fixture sets its schema)."""
    return copy.deepcopy(lakehouse_target)


@pytest.fixture(scope="class")
def dbt_project_yml(project_root, project_config_update, table_format: str) -> dict[str, Any]:
    """dbt's dbt_project.yml fixture, with the target's file_format as the default of every
    model, seed and snapshot (a class's own +file_format wins)."""
    project_config: dict[str, Any] = {
        "name": "test",
        "profile": "test",
        "flags": {"send_anonymous_usage_stats": False},
    }
    update = project_config_update or {}
    if isinstance(update, str):
        update = yaml.safe_load(update)
    project_config.update(copy.deepcopy(update))
    for resource in ("models", "seeds", "snapshots"):
        project_config.setdefault(resource, {}).setdefault("+file_format", table_format)
    (Path(project_root) / "dbt_project.yml").write_text(yaml.safe_dump(project_config))
    return project_config


@pytest.fixture(scope="class")
def logs_dir(tmp_path_factory: pytest.TempPathFactory, prefix: str):
    """dbt's logs of each test class, in a temporary folder (not in the repository)."""
    folder = tmp_path_factory.mktemp("logs") / prefix
    os.environ["DBT_LOG_PATH"] = str(folder)
    yield str(folder)
    os.environ.pop("DBT_LOG_PATH", None)


@pytest.fixture(autouse=True)
def skip_by_format(request: pytest.FixtureRequest, table_format: str) -> None:
    """@pytest.mark.skip_format("iceberg", reason=...): skipped on that format only."""
    for marker in request.node.iter_markers("skip_format"):
        if marker.args[0] == table_format:
            pytest.skip(f"{table_format}: {marker.kwargs['reason']}")
