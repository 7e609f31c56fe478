"""The `cluster` target against a real Spark standalone master and worker on this machine."""

from __future__ import annotations

import json

import pytest
from support.expected import JAN_1, JAN_2, JAN_3, as_text
from support.processes import SHORT_RUN_JAVA_OPTIONS

from retry_safe.cluster import run_on_cluster, standalone_cluster

# The same rows test_cart_abandonment expects on the embedded local Spark, as text.
EXPECTED = as_text(JAN_1 + JAN_2 + JAN_3)


# the cluster target is the Delta configuration, in processes of its own: any pass can run it,
# once per suite, in the Iceberg pass (it balances the two passes)
@pytest.mark.slow
@pytest.mark.format_independent(run_in="local_iceberg")
def test_cluster_target_builds_the_same_tables_as_local(tmp_path, monkeypatch):
    # the master, the worker and the driver are short-lived here: C1 only (support/processes.py)
    monkeypatch.setenv("SPARK_DAEMON_JAVA_OPTS", SHORT_RUN_JAVA_OPTIONS)
    monkeypatch.setenv("LAKEHOUSE_JAVA_OPTIONS", SHORT_RUN_JAVA_OPTIONS)
    with standalone_cluster(tmp_path / "spark") as url:
        done = run_on_cluster(url, tmp_path / "warehouse", ["retry_safe.cluster", "--cart-rows"])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("CART_ROWS "))
    result = json.loads(line.removeprefix("CART_ROWS "))
    assert result["master"] == url
    assert result["retail_daily_product_cart_abandonment"] == EXPECTED
    assert result["retail_daily_product_cart_abandonment_df"] == EXPECTED
