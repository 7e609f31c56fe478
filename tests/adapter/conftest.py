"""dbt Labs' adapter test suite against the lakehouse adapter, on Delta or Iceberg.

dbt-tests-adapter's plugin (loaded by tests/conftest.py) writes a dbt project per test class
into a temporary folder and runs dbt in this process: the same pytest process, SparkSession
and warehouse as the project's own tests of the pass (`--target local` = Delta,
`--target local_iceberg` = Iceberg), after them; each class has a schema of its own. The
profile it writes is `dbt_profile_target` below: the project's own target (profiles/
profiles.yml), rendered as dbt renders it. Every model, seed and snapshot of the suite's
projects gets the target's table format.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPOSITORY = Path(__file__).resolve().parents[2]
# what dbt's fixtures remove from the environment when a class ends, or that would point the
# suite's projects at the project's own artifacts or keep them from being written (dbt's own
# classes read manifest.json and run_results.json) (tests/conftest.py sets them for the pass)
PASS_SETTINGS = ("DBT_PROFILES_DIR", "DBT_LOG_PATH", "DBT_TARGET_PATH", "DBT_WRITE_JSON")


@pytest.fixture(scope="session")
def lakehouse_target(request: pytest.FixtureRequest, lakehouse_home: Path) -> dict[str, Any]:
    """The project's target as dbt renders it: the pass's warehouse and metastore
    (tests/conftest.py's lakehouse_home, whose JVM settings it shares).

    Paths become absolute: the suite runs dbt from each test's own project folder.
    """
    from dbt.config.renderer import ProfileRenderer
    from dbt_common.context import set_invocation_context

    target = request.config.getoption("--target")
    jars = os.environ.get("LAKEHOUSE_JARS_DIR", ".jars")
    os.environ["LAKEHOUSE_JARS_DIR"] = str((REPOSITORY / jars).resolve())
    set_invocation_context(os.environ)
    profiles = yaml.safe_load((REPOSITORY / "profiles" / "profiles.yml").read_text())
    return ProfileRenderer({}).render_data(profiles["retry_safe"]["outputs"][target])


@pytest.fixture(scope="class", autouse=True)
def own_artifacts() -> Iterator[None]:
    """Each class's project keeps its artifacts in its own folder, as dbt's harness expects;
    the pass's settings come back afterwards."""
    with pytest.MonkeyPatch.context() as environment:
        for name in PASS_SETTINGS:
            environment.delenv(name, raising=False)
        yield


@pytest.fixture(scope="class", autouse=True)
def fresh_adapter() -> None:
    """No adapter left registered by the pass's earlier dbt invocations: dbt's `adapter`
    fixture registers the class's own only when none is (after a `dbt debug`, the one left
    holds a profile and no project, and the class's schema setup failed on it)."""
    from dbt.adapters.factory import reset_adapters

    reset_adapters()


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
