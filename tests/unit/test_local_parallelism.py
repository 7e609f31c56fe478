"""Task counts of a session target on a local master (session_settings.local_parallelism): sized
to the cores the master uses, never over a profile's own values, none for a cluster. No JVM."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.session import settings as module
from dbt.adapters.lakehouse.session.settings import session_settings

SHUFFLE = "spark.sql.shuffle.partitions"
SNAPSHOT = "spark.databricks.delta.snapshotPartitions"
LISTING = "spark.sql.sources.parallelPartitionDiscovery.parallelism"  # Delta's VACUUM


@pytest.fixture(autouse=True)
def eight_cores(monkeypatch):
    monkeypatch.setattr(module.os, "cpu_count", lambda: 8)


@pytest.mark.parametrize(
    ("master", "shuffle", "snapshot"),
    [
        (None, "16", "8"),  # the default, local[*]
        ("local[*]", "16", "8"),
        ("local", "2", "1"),
        ("local[3]", "6", "3"),
        ("local[2, 4]", "4", "2"),  # two cores, four task attempts
    ],
)
def test_a_local_master_gets_task_counts_for_its_cores(master, shuffle, snapshot):
    settings = session_settings("delta", {"spark.master": master} if master else {})
    assert (settings[SHUFFLE], settings[SNAPSHOT], settings[LISTING]) == (
        shuffle,
        snapshot,
        shuffle,
    )


def test_iceberg_gets_the_shuffle_count_only():
    settings = session_settings("iceberg", {})
    assert settings[SHUFFLE] == "16"
    assert SNAPSHOT not in settings and LISTING not in settings


def test_the_profiles_own_values_win():
    settings = session_settings("delta", {SHUFFLE: "4", SNAPSHOT: "2"})
    assert (settings[SHUFFLE], settings[SNAPSHOT]) == ("4", "2")


@pytest.mark.parametrize("master", ["spark://10.0.0.1:7077", "yarn", "local-cluster[2,1,1024]"])
def test_a_cluster_keeps_sparks_and_deltas_own_defaults(master):
    settings = session_settings("delta", {"spark.master": master})
    assert SHUFFLE not in settings
    assert SNAPSHOT not in settings and LISTING not in settings


def test_a_profile_without_table_format_gets_nothing():
    assert SHUFFLE not in session_settings(None, {"spark.master": "local[*]"})
