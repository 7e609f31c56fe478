"""A lakehouse server in a process of its own, for the tests and the benchmark: `lakehouse serve`
started, waited for until it serves, and stopped with Ctrl-C as a user stops it; the same for
`lakehouse runner`, the warm dbt."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.commands.runner import READY as RUNNER_READY
from dbt.adapters.lakehouse.server.app import READY, wait_or_kill
from retry_safe.project import PROJECT_DIR


def serve_command(target: str, *options: str) -> list[str]:
    """`lakehouse serve` of this project's target (the command of the installed package)."""
    lakehouse = str(Path(sys.executable).with_name("lakehouse"))
    return [lakehouse, "serve", "--project-dir", str(PROJECT_DIR), "--target", target, *options]


def spawn(target: str, env: dict[str, str], logs: Path, timeout: float = 300) -> Any:
    """A server of the target in a process of its own, once it serves: the Popen. Its output
    goes to logs/server.out and logs/server.err (files: a pipe nobody reads would fill and
    stall it). `stop` ends it."""
    return _started(serve_command(target), READY, env, logs / "server", timeout)


def _started(
    command: list[str], ready: str, env: dict[str, str], stem: Path, timeout: float
) -> Any:
    """command in a process of its own, once its output (stem.out; errors in stem.err) holds
    the ready line: the Popen; stopped, and RuntimeError with its errors, if it ends first or
    takes longer than timeout."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    out, err = stem.with_suffix(".out"), stem.with_suffix(".err")
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(command, cwd=PROJECT_DIR, env=env, stdout=stdout, stderr=stderr)
    deadline = time.monotonic() + timeout
    while ready not in out.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process)
            raise RuntimeError(f"{' '.join(command[1:3])} did not start:\n{err.read_text()}")
        time.sleep(0.1)
    return process


def stop(process: Any, timeout: float = 120) -> int:
    """Ctrl-C to a spawned server, then its exit code (killed if it does not stop in time)."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        wait_or_kill(process, timeout)
    return process.returncode


def spawn_runner(socket_path: Path, env: dict[str, str], logs: Path, timeout: float = 60) -> Any:
    """`lakehouse runner --socket socket_path` in a process of its own, once it listens (its
    output in logs/runner.out and .err); `stop` ends it."""
    lakehouse = str(Path(sys.executable).with_name("lakehouse"))
    command = [lakehouse, "runner", "--socket", str(socket_path)]
    return _started(command, RUNNER_READY, env, logs / "runner", timeout)


def through_runner(socket_path: Path) -> list[str]:
    """The command line that runs `dbt <args>` from the runner at socket_path: add dbt's args."""
    lakehouse = str(Path(sys.executable).with_name("lakehouse"))
    return [lakehouse, "dbt", "--socket", str(socket_path)]
