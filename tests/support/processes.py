"""The environment of a dbt step that runs in a process of its own, as a scheduler's task does."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from support.class_archive import RECORD, ClassArchive

# A scheduler's task is a short-lived JVM: C1 only starts it with about a third less CPU than
# C1 + C2 (measured on a two-step cold run: 31 vs 51 CPU seconds). Users set the same through
# LAKEHOUSE_JAVA_OPTIONS (profiles/profiles.yml); the tests' own long-lived JVM keeps C2.
# C1 only also shrinks the JIT's code cache from 240 to 48 MB, which a run of a few models
# fills: the JVM then prints "CodeCache is full. Compiler has been disabled" and interprets the
# rest. The code cache keeps its usual size.
# The serial collector: heaps of a few hundred MB of small tables need no parallel or concurrent
# GC threads, and on two cores shared by two passes those threads take CPU from the queries
# (test_cart_abandonment.py alone on Delta: 0.84x the wall time of the default G1).
SERIAL_GC = "-XX:+UseSerialGC"
SHORT_RUN_JAVA_OPTIONS = f"-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m {SERIAL_GC}"
# The suite's own JVM (tests/conftest.py) lives for a whole pass: C2 compiles only what stays hot
# (a sixth less CPU on test_idempotent_merge.py); it writes the steps' class-data archive while
# it runs (support/class_archive.py).
SUITE_JAVA_OPTIONS = f"-XX:CompileThresholdScaling=3 {SERIAL_GC} {RECORD}"


# The pass's class-data archive (support/class_archive.py), once tests/conftest.py set it up.
_archive: ClassArchive | None = None


def use_class_archive(folder: Path) -> None:
    """The steps' JVMs start from a class-data archive in folder, written by this process's
    JVM when the first step asks for it."""
    global _archive
    _archive = ClassArchive(folder)


def step_env(**settings: str) -> dict[str, str]:
    """This process's environment for a step in a process of its own, plus `settings`: a short
    run's JVM options, and the pass's class-data archive."""
    options = SHORT_RUN_JAVA_OPTIONS
    if _archive is not None:
        options = f"{options} {_archive.options()}".strip()
    return {**os.environ, "LAKEHOUSE_JAVA_OPTIONS": options, **settings}


def free_ports() -> tuple[int, int]:
    """Two ports free now, and different (both sockets are open while the OS picks)."""
    with socket.socket() as first, socket.socket() as second:
        first.bind(("127.0.0.1", 0))
        second.bind(("127.0.0.1", 0))
        return first.getsockname()[1], second.getsockname()[1]


def lakehouse(args: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    """The package's `lakehouse` command in a process of its own, as a user or a scheduler
    runs it; its standard output, once it succeeded."""
    done = subprocess.run(
        [str(Path(sys.executable).with_name("lakehouse")), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def metastore_init(env: dict[str, str], *options: str) -> str:
    """`lakehouse metastore init`; its output, once it succeeded."""
    return lakehouse(["metastore", "init", *options], env)


def children_of(pid: int) -> list[int]:
    """The processes whose parent is pid, from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found
