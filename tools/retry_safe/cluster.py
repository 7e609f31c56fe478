"""A Spark standalone cluster on this machine (one master, one worker), from the installed Spark.

`make cluster-demo` runs the demo pipelines through it on the `cluster` target; the test suite
uses the same cluster to show the `cluster` target produces the same tables as `local`.
Everything listens on 127.0.0.1 only, and both daemons are stopped on exit.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from retry_safe.project import PROJECT_DIR, run_module

LOOPBACK = "127.0.0.1"


def spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def wait_for(check, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise TimeoutError(f"standalone cluster: {what} did not happen within {timeout:.0f} s")


def _daemon(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    handle = log.open("w")
    return subprocess.Popen(
        [str(spark_home() / "bin" / "spark-class"), *args],
        stdout=handle,
        stderr=subprocess.STDOUT,
        env=env,
    )


@contextmanager
def standalone_cluster(workdir: Path, worker_memory: str = "3g") -> Iterator[str]:
    """Start a master and one worker bound to loopback; yield the master URL."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOCAL_IP": LOOPBACK,
        "SPARK_WORKER_DIR": str(workdir / "work"),
        "PYSPARK_PYTHON": sys.executable,
    }
    port = free_port()
    url = f"spark://{LOOPBACK}:{port}"
    master_log, worker_log = workdir / "master.log", workdir / "worker.log"
    master = _daemon(
        [
            "org.apache.spark.deploy.master.Master",
            "--host",
            LOOPBACK,
            "--port",
            str(port),
            "--webui-port",
            str(free_port()),
        ],
        master_log,
        env,
    )
    worker = None
    try:
        wait_for(lambda: "I have been elected leader" in master_log.read_text(), "master start")
        worker = _daemon(
            [
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                LOOPBACK,
                "--cores",
                "2",
                "--memory",
                worker_memory,
                "--webui-port",
                str(free_port()),
                url,
            ],
            worker_log,
            env,
        )
        wait_for(lambda: "Registering worker" in master_log.read_text(), "worker registration")
        yield url
    finally:
        for process in (worker, master):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def run_on_cluster(
    url: str, lakehouse_home: Path, module_args: list[str], target: str = "cluster"
) -> subprocess.CompletedProcess:
    """Run `python -m retry_safe.<module_args>` with a cluster target (`cluster`: Delta,
    `cluster_iceberg`) in a fresh process."""
    env = {
        **os.environ,
        "DBT_TARGET": target,
        "SPARK_MASTER_URL": url,
        "LAKEHOUSE_HOME": str(lakehouse_home),
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_EXECUTOR_MEMORY": "1g",
    }
    return run_module(module_args, env)


def cart_rows_json() -> int:
    """Build the cart pipeline on the current target and print its rows as JSON (for tests)."""
    from pyspark.sql import SparkSession

    from retry_safe.project import configure_environment, interval_flags, run_dbt

    configure_environment()
    target = os.environ.get("DBT_TARGET", "local")
    run_dbt(["seed", "--select", "cart_abandonment"], target)
    run_dbt(
        ["build", "--select", "cart_abandonment", "--exclude", "resource_type:seed"]
        + interval_flags("2026-01-01", "2026-01-04"),
        target,
    )
    spark = SparkSession.builder.getOrCreate()
    result = {"master": spark.sparkContext.master}
    for table in (
        "retail_daily_product_cart_abandonment",
        "retail_daily_product_cart_abandonment_df",
    ):
        frame = spark.sql(f"select * from analytics.{table} order by event_date, product_id")
        result[table] = [[str(value) for value in row] for row in frame.collect()]
        detail = spark.sql(f"describe table extended analytics.{table}").collect()
        result[f"{table} provider"] = next(r.data_type for r in detail if r.col_name == "Provider")
    print("CART_ROWS " + json.dumps(result))
    return 0


def main() -> int:
    workdir = PROJECT_DIR / ".lakehouse" / "cluster"
    with standalone_cluster(workdir / "spark") as url:
        print(f"Spark standalone master at {url}; running the demo on the cluster target")
        done = run_on_cluster(url, workdir / "warehouse", ["retry_safe.demo"])
        print(done.stdout)
        print(done.stderr[-5000:], file=sys.stderr)
        return done.returncode


if __name__ == "__main__":
    if sys.argv[1:] == ["--cart-rows"]:
        sys.exit(cart_rows_json())
    sys.exit(main())
