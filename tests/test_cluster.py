"""The cluster targets (`cluster`, `cluster_iceberg`) against a real Spark standalone master and
worker on this machine, the warehouse in a bucket (S3Proxy) and the metastore on PostgreSQL."""

from __future__ import annotations

import json

import pytest
from support.expected import JAN_1, JAN_2, JAN_3, as_text
from support.processes import SHORT_RUN_JAVA_OPTIONS, step_env

from retry_safe.cluster import run_on_cluster, standalone_cluster
from retry_safe.project import CLUSTER_TARGETS
from retry_safe.s3 import BUCKET

# The same rows test_cart_abandonment expects on the embedded local Spark, as text.
EXPECTED = as_text(JAN_1 + JAN_2 + JAN_3)


# executors that load the format's jars from the driver and write its files, each format on its
# own cluster target: `make soak` runs both; `make test` the Iceberg one only, since the
# format-dependent parts (the executors' jars, the bucket, the metastore) are one code path
# (session/settings.py) and the formats' commits on the bucket are the killed and the
# concurrent runs' tests', on both formats
@pytest.mark.slow
@pytest.mark.one_pass_outside_soak(run_in="local_iceberg")
def test_cluster_target_builds_the_same_tables_as_local(
    tmp_path, monkeypatch, table_format, fresh_metastore, s3_store
):
    # on object storage, as a cluster of several machines shares it: master, worker (its
    # executors) and driver reach one bucket and one metastore, no shared local folder; the
    # credentials only in the daemons' environment, as an instance profile would give them
    folder, s3 = s3_store
    prefix = f"cluster-{table_format}"
    for name, value in {**fresh_metastore[2], **s3}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LAKEHOUSE_WAREHOUSE", f"s3a://{BUCKET}/{prefix}")
    monkeypatch.delenv("LAKEHOUSE_METASTORE_CLASSPATH", raising=False)
    # the master, the worker, the executor and the driver are short-lived here: C1 only, and the
    # driver starts from the pass's class-data archive (support/processes.py); the executor's
    # options alone: 0.63x the CPU of its defaults (2 paired runs, this file on Delta)
    monkeypatch.setenv("SPARK_DAEMON_JAVA_OPTS", SHORT_RUN_JAVA_OPTIONS)
    monkeypatch.setenv("LAKEHOUSE_EXECUTOR_JAVA_OPTIONS", SHORT_RUN_JAVA_OPTIONS)
    monkeypatch.setenv("LAKEHOUSE_JAVA_OPTIONS", step_env()["LAKEHOUSE_JAVA_OPTIONS"])
    module = ["retry_safe.cluster", "--cart-rows"]
    with standalone_cluster(tmp_path / "spark") as url:
        done = run_on_cluster(url, tmp_path / "warehouse", module, CLUSTER_TARGETS[table_format])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("CART_ROWS "))
    result = json.loads(line.removeprefix("CART_ROWS "))
    assert result["master"] == url
    assert result["retail_daily_product_cart_abandonment"] == EXPECTED
    assert result["retail_daily_product_cart_abandonment_df"] == EXPECTED
    assert result["retail_daily_product_cart_abandonment provider"] == table_format
    assert result["retail_daily_product_cart_abandonment_df provider"] == table_format
    # the executors wrote the tables' files into the bucket, none to a local folder
    tables = folder / "data" / BUCKET / prefix / "analytics.db"
    assert list((tables / "retail_daily_product_cart_abandonment_df").rglob("*.parquet"))
    assert not list((tmp_path / "warehouse").rglob("*.parquet"))
