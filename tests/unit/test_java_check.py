"""The one-line Java check that runs before an embedded SparkSession is started."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from dbt.adapters.lakehouse.session import java


def fake_java_home(tmp_path: Path, version_line: str) -> Path:
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    script = home / "bin" / "java"
    script.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return home


@pytest.fixture(autouse=True)
def fresh_check():
    java.java_problem.cache_clear()
    yield
    java.java_problem.cache_clear()


def test_java_8_is_refused_with_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(fake_java_home(tmp_path, 'openjdk version "1.8.0_392"')))
    problem = java.java_problem()
    assert problem is not None
    assert "Spark 4 needs Java 17+" in problem
    assert "is Java 8" in problem
    assert "openjdk-17-jre-headless" in problem


def test_no_java_at_all(tmp_path, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert java.java_problem() == (
        "Spark needs Java, and none was found. Install a Java 17 or newer runtime "
        "(e.g. apt-get install openjdk-17-jre-headless) and put it on PATH or set JAVA_HOME."
    )


def test_java_17_passes(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "JAVA_HOME", str(fake_java_home(tmp_path, 'openjdk version "17.0.15" 2025-04-15'))
    )
    assert java.java_problem() is None
