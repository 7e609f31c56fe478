"""Run the project's dbt commands in this Python process.

dbt-spark's session method never stops its SparkSession, so every dbtRunner invocation in one
process reuses one JVM: a small run takes seconds instead of a CLI start each time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from dbt.cli.main import dbtRunner, dbtRunnerResult

from dbt.adapters.lakehouse.commands.catchup import failure


def find_project_dir() -> Path:
    """This dbt project's folder (profiles/, conf/, landing/, .jars/ are found from it): the
    environment variable LAKEHOUSE_PROJECT_DIR, else, as dbt finds a project, the current
    directory or the nearest folder above it that holds a dbt_project.yml. Never this module's
    own location, which is site-packages unless the package is installed editable."""
    configured = os.environ.get("LAKEHOUSE_PROJECT_DIR")
    if configured:
        folder = Path(configured).resolve()
        if not (folder / "dbt_project.yml").is_file():
            raise RuntimeError(
                f"LAKEHOUSE_PROJECT_DIR is {configured}, which holds no dbt_project.yml. Set it "
                "to the project folder (the one with dbt_project.yml), or unset it and run from "
                "that folder."
            )
        return folder
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "dbt_project.yml").is_file():
            return folder
    raise RuntimeError(
        f"No dbt_project.yml in {here} or in any folder above it. Run from the project folder "
        "(the one with dbt_project.yml, as make does), or set LAKEHOUSE_PROJECT_DIR to it."
    )


PROJECT_DIR = find_project_dir()
# The table format of each of the project's targets (their table_format in profiles/profiles.yml)
TARGETS = {
    "local": "delta",
    "local_iceberg": "iceberg",
    "cluster": "delta",
    "cluster_iceberg": "iceberg",
    "server": "delta",
    "server_iceberg": "iceberg",
}
# per table format: the embedded target, the target of a lakehouse server of that format, and
# the target of a Spark cluster (SPARK_MASTER_URL)
EMBEDDED_TARGETS = {"delta": "local", "iceberg": "local_iceberg"}
SERVER_TARGETS = {"delta": "server", "iceberg": "server_iceberg"}
CLUSTER_TARGETS = {"delta": "cluster", "iceberg": "cluster_iceberg"}


def table_format(target: str) -> str:
    """The table format (delta or iceberg) a target of this project writes: the one mapping
    the tooling and the tests use."""
    try:
        return TARGETS[target]
    except KeyError:
        raise ValueError(f"unknown target {target!r}: one of {', '.join(TARGETS)}") from None


def configure_environment(lakehouse_home: Path | None = None) -> None:
    """Point dbt at the project's profiles and keep every file under one lakehouse folder."""
    os.environ.setdefault("DBT_PROFILES_DIR", str(PROJECT_DIR / "profiles"))
    os.environ.setdefault("LAKEHOUSE_JARS_DIR", str(PROJECT_DIR / ".jars"))
    home = lakehouse_home or Path(os.environ.get("LAKEHOUSE_HOME", PROJECT_DIR / ".lakehouse"))
    os.environ["LAKEHOUSE_HOME"] = str(Path(home).resolve())
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")


def interval_vars(start: str, end: str, **extra: Any) -> dict[str, Any]:
    """The interval as the vars data_interval_start / data_interval_end (new vars make dbt
    parse the whole project again)."""
    return {"data_interval_start": start, "data_interval_end": end, **extra}


def interval_flags(start: str, end: str) -> list[str]:
    """The interval as dbt's event-time flags, the preferred way: a new interval keeps dbt's
    partial parsing."""
    return ["--event-time-start", start, "--event-time-end", end]


def run_dbt(
    args: list[str],
    target: str = "local",
    variables: dict[str, Any] | None = None,
    expect_pass: bool = True,
    project_dir: Path = PROJECT_DIR,
    callbacks: list | None = None,
) -> dbtRunnerResult:
    """Invoke dbt like the CLI would, on project_dir, and check the outcome."""
    configure_environment()
    full = [*args, "--project-dir", str(project_dir), "--target", target]
    if (
        project_dir != PROJECT_DIR
        and args[0] not in ("debug", "deps")
        and "--target-path" not in args
    ):
        # a project's own artifacts: runs that alternate projects keep dbt's partial parsing
        full += ["--target-path", str(Path(project_dir) / "target")]
    if variables is not None:
        full += ["--vars", json.dumps(variables)]
    result = dbtRunner(callbacks=callbacks or []).invoke(full)
    if expect_pass and not result.success:
        raise AssertionError(f"dbt {' '.join(args)} failed: {describe_failure(result)}")
    if not expect_pass and result.success:
        raise AssertionError(f"dbt {' '.join(args)} was expected to fail but succeeded")
    return result


def describe_failure(result: dbtRunnerResult) -> str:
    """The error text of a failed invocation: the exception, or each failing node's message
    (one a line), as the package's `lakehouse catchup` reports it."""
    return failure(result, "\n")


def run_module(
    module_args: list[str], env: dict[str, str], timeout: float = 1800
) -> subprocess.CompletedProcess:
    """Run `python -m <module_args>` from the project directory in a process of its own.

    For steps that need their own JVM (another master, another metastore) or that a test kills.
    """
    return subprocess.run(
        [sys.executable, "-m", *module_args],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
