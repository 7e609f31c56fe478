"""Fail early, in one line, when the Java that embedded Spark needs is missing or too old."""

import functools
import os
import re
import shutil
import subprocess

from dbt_common.exceptions import DbtRuntimeError

MINIMUM_JAVA = 17


def java_executable() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def java_major_version(java: str) -> int | None:
    """17 for 'openjdk version "17.0.15"', 8 for '"1.8.0_392"'; None when unreadable."""
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


@functools.cache
def java_problem() -> str | None:
    """One line saying what to install, or None when a usable Java is present."""
    java = java_executable()
    install = (
        f"Install a Java {MINIMUM_JAVA} or newer runtime (e.g. apt-get install openjdk-17-jre-headless) "
        "and put it on PATH or set JAVA_HOME."
    )
    if java is None:
        return f"Spark needs Java, and none was found. {install}"
    version = java_major_version(java)
    if version is None:
        return f"Could not read the version of {java}. {install}"
    if version < MINIMUM_JAVA:
        return f"Spark 4 needs Java {MINIMUM_JAVA}+, but {java} is Java {version}. {install}"
    return None


def require_java() -> None:
    problem = java_problem()
    if problem:
        raise DbtRuntimeError(problem)
