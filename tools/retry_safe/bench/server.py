"""What the lakehouse server buys a scheduler: one interval of the cart model per command-line
`dbt run`, embedded (`local` / `local_iceberg`: the run starts its own JVM) against through a
running server (`server` / `server_iceberg`: no JVM in dbt's process).

    python -m retry_safe.bench.server [--formats delta,iceberg]     (make bench-server)

Per format, on a warehouse of its own: each side loads the cart seed into a schema of its own
(untimed), then runs the intervals of January 1, 2 and 3 in order, one CLI `dbt run` each,
timed from process start to exit: the same rows and the same MERGEs on both sides. The
embedded runs come first (an embedded Derby metastore admits one JVM), then the server starts
(untimed) and the same three runs go through it. Writes docs/benchmarks/server.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

from retry_safe.bench.cli import timed
from retry_safe.project import (
    EMBEDDED_TARGETS,
    PROJECT_DIR,
    SERVER_TARGETS,
    configure_environment,
    interval_vars,
)
from retry_safe.server_process import spawn, stop

MODEL = "retail_daily_product_cart_abandonment"
SEED = "retail_session_products"
DAYS = [("2026-01-01", "2026-01-02"), ("2026-01-02", "2026-01-03"), ("2026-01-03", "2026-01-04")]
OUT = PROJECT_DIR / "docs" / "benchmarks" / "server.md"


def dbt(*args: str, target: str) -> list[str]:
    executable = str(Path(sys.executable).with_name("dbt"))
    return [executable, *args, "--project-dir", str(PROJECT_DIR), "--target", target]


def runs(target: str, env: dict[str, str]) -> list[float]:
    """Seed (untimed), then the three intervals, each timed."""
    timed(dbt("seed", "--select", SEED, target=target), env)
    seconds = []
    for start, end in DAYS:
        variables = json.dumps(interval_vars(start, end))
        seconds.append(
            timed(dbt("run", "--select", MODEL, "--vars", variables, target=target), env)
        )
        print(f"[bench-server] {target} {start}: {seconds[-1]:.1f} s", flush=True)
    return seconds


def with_server(table_format: str, env: dict[str, str], target: str, logs: Path) -> list[float]:
    server = spawn(EMBEDDED_TARGETS[table_format], env, logs)
    try:
        return runs(target, env)
    finally:
        stop(server)


def measure(table_format: str, home: Path) -> dict[str, list[float]]:
    embedded, served = EMBEDDED_TARGETS[table_format], SERVER_TARGETS[table_format]
    env = {**os.environ, "LAKEHOUSE_HOME": str(home), "DBT_LOG_PATH": str(home / "logs")}
    return {
        embedded: runs(embedded, {**env, "LAKEHOUSE_SCHEMA": "bench_embedded"}),
        served: with_server(
            table_format, {**env, "LAKEHOUSE_SCHEMA": "bench_server"}, served, home / "logs"
        ),
    }


def report(results: dict[str, dict[str, list[float]]]) -> str:
    lines = [
        "# A scheduler's `dbt run` through the lakehouse server",
        "",
        f"`make bench-server` on {platform.machine()}, {os.cpu_count()} CPUs: one CLI `dbt run` "
        f"of `{MODEL}` per interval (January 1, 2, 3: real inserts each), wall time from "
        "process start to exit. Embedded: the run starts its JVM. Server: a running "
        "`lakehouse serve`, so no JVM starts in dbt's process.",
        "",
        "| format | embedded runs (s) | median | server runs (s) | median | server / embedded |",
        "|---|---|---|---|---|---|",
    ]
    for table_format, times in results.items():
        (embedded, local), (served, remote) = times.items()
        ratio = statistics.median(remote) / statistics.median(local)
        lines.append(
            f"| {table_format} | {_samples(local)} | {statistics.median(local):.1f} | "
            f"{_samples(remote)} | {statistics.median(remote):.1f} | {ratio:.2f} |"
        )
    return "\n".join(lines) + "\n"


def _samples(values: list[float]) -> str:
    return ", ".join(f"{value:.1f}" for value in values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m retry_safe.bench.server")
    parser.add_argument("--formats", default="delta,iceberg")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    configure_environment()
    results = {}
    for table_format in args.formats.split(","):
        with tempfile.TemporaryDirectory(prefix=f"bench-server-{table_format}-") as home:
            results[table_format] = measure(table_format, Path(home))
    text = report(results)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
