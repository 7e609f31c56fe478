"""A lakehouse server in a process of its own, for the tests and the benchmark: `lakehouse serve`
started, waited for until it serves, and stopped with Ctrl-C as a user stops it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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
    logs.mkdir(parents=True, exist_ok=True)
    out, err = logs / "server.out", logs / "server.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            serve_command(target), cwd=PROJECT_DIR, env=env, stdout=stdout, stderr=stderr
        )
    deadline = time.monotonic() + timeout
    while READY not in out.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process)
            raise RuntimeError(f"the {target} server did not start:\n{err.read_text()}")
        time.sleep(0.2)
    return process


def stop(process: Any, timeout: float = 120) -> int:
    """Ctrl-C to a spawned server, then its exit code (killed if it does not stop in time)."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        wait_or_kill(process, timeout)
    return process.returncode
