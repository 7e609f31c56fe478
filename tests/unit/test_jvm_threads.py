"""dbt's embedded JVM starts with its Python threads sharing the gateway's JVM threads, and the
setting does not outlive the start (session/jvm.py, shared_jvm_threads)."""

from __future__ import annotations

import os

import pytest

from dbt.adapters.lakehouse.session.jvm import PIN_THREAD, shared_jvm_threads


def test_unpinned_while_the_jvm_starts_and_unset_afterwards(monkeypatch):
    monkeypatch.delenv(PIN_THREAD, raising=False)
    with shared_jvm_threads():
        assert os.environ[PIN_THREAD] == "false"
    assert PIN_THREAD not in os.environ


def test_unset_afterwards_when_the_start_fails(monkeypatch):
    monkeypatch.delenv(PIN_THREAD, raising=False)
    with pytest.raises(RuntimeError), shared_jvm_threads():
        raise RuntimeError("the JVM did not start")
    assert PIN_THREAD not in os.environ


def test_a_value_the_environment_sets_is_kept(monkeypatch):
    monkeypatch.setenv(PIN_THREAD, "true")
    with shared_jvm_threads():
        assert os.environ[PIN_THREAD] == "true"
    assert os.environ[PIN_THREAD] == "true"
