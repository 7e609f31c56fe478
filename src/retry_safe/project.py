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

PROJECT_DIR = Path(__file__).resolve().parents[2]
TARGETS = {"local": "delta", "local_iceberg": "iceberg", "cluster": "delta"}


def configure_environment(lakehouse_home: Path | None = None) -> None:
    """Point dbt at the project's profiles and keep every file under one lakehouse folder."""
    os.environ.setdefault("DBT_PROFILES_DIR", str(PROJECT_DIR / "profiles"))
    os.environ.setdefault("LAKEHOUSE_CONF_DIR", str(PROJECT_DIR / "conf"))
    os.environ.setdefault("LAKEHOUSE_JARS_DIR", str(PROJECT_DIR / ".jars"))
    home = lakehouse_home or Path(os.environ.get("LAKEHOUSE_HOME", PROJECT_DIR / ".lakehouse"))
    os.environ["LAKEHOUSE_HOME"] = str(Path(home).resolve())
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")


def interval_vars(start: str, end: str, **extra: Any) -> dict[str, Any]:
    return {"data_interval_start": start, "data_interval_end": end, **extra}


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
    if variables is not None:
        full += ["--vars", json.dumps(variables)]
    result = dbtRunner(callbacks=callbacks or []).invoke(full)
    if expect_pass and not result.success:
        raise AssertionError(f"dbt {' '.join(args)} failed: {describe_failure(result)}")
    if not expect_pass and result.success:
        raise AssertionError(f"dbt {' '.join(args)} was expected to fail but succeeded")
    return result


def describe_failure(result: dbtRunnerResult) -> str:
    """The error text of a failed invocation: the exception, or each failing node's message."""
    if result.exception is not None:
        return str(result.exception)
    messages = []
    for node_result in getattr(result.result, "results", None) or []:
        if str(node_result.status) in {"error", "fail"}:
            messages.append(f"{node_result.node.unique_id}: {node_result.message}")
    return "\n".join(messages) or "unknown failure"


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
