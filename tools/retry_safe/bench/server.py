"""What the lakehouse server buys a scheduler: one interval of the cart model per command-line
`dbt run`, embedded (`local` / `local_iceberg`: the run starts its own JVM) against through a
running server (`server` / `server_iceberg`: no JVM in dbt's process).

    python -m retry_safe.bench.server [--formats delta,iceberg]     (make bench-server)

Per format, on a warehouse of its own: each side loads the cart seed into a schema of its own
(untimed), then runs the intervals of January 1, 2 and 3 in order, one CLI `dbt run` each as a
scheduler runs it (the interval as dbt's event-time flags, so dbt keeps its partial parsing),
timed from process start to exit: the same rows and the same MERGEs on both sides. The
embedded runs come first (an embedded Derby metastore admits one JVM), then the server starts
(untimed) and serves the same three runs once into a schema of their own (untimed: a scheduler
meets a long-lived, warm server), then the timed three. Each run's parse step is read from
dbt's own log (its JSON lines: from the adapter's registration to "Found ... models", which is
loading the manifest, partial or not). Writes docs/benchmarks/server.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from retry_safe.bench.cli import timed
from retry_safe.project import (
    EMBEDDED_TARGETS,
    PROJECT_DIR,
    SERVER_TARGETS,
    configure_environment,
    interval_flags,
)
from retry_safe.server_process import spawn, stop

MODEL = "retail_daily_product_cart_abandonment"
SEED = "retail_session_products"
DAYS = [("2026-01-01", "2026-01-02"), ("2026-01-02", "2026-01-03"), ("2026-01-03", "2026-01-04")]
OUT = PROJECT_DIR / "docs" / "benchmarks" / "server.md"


@dataclass(frozen=True)
class Run:
    seconds: float  # process start to exit
    parse_seconds: float  # dbt's own log: adapter registered to "Found ... models"
    partial: bool  # dbt's log says it parsed partially


def dbt(*args: str, target: str) -> list[str]:
    executable = str(Path(sys.executable).with_name("dbt"))
    return [
        executable,
        *args,
        "--project-dir",
        str(PROJECT_DIR),
        "--target",
        target,
        "--log-format-file",
        "json",
    ]


def parse_step(log: Path, position: int) -> tuple[float, bool]:
    """The manifest's load in the run that appended to dbt's JSON log after position."""
    stamps: dict[str, datetime] = {}
    with log.open() as handle:
        handle.seek(position)
        for line in handle:
            event = json.loads(line)["info"]
            if event["name"] in ("AdapterRegistered", "FoundStats", "PartialParsingEnabled"):
                stamps.setdefault(event["name"], datetime.fromisoformat(event["ts"]))
    seconds = (stamps["FoundStats"] - stamps["AdapterRegistered"]).total_seconds()
    return seconds, "PartialParsingEnabled" in stamps


def runs(target: str, env: dict[str, str], label: str = "") -> list[Run]:
    """Seed (untimed), then the three intervals, each timed."""
    timed(dbt("seed", "--select", SEED, target=target), env)
    log = Path(env["DBT_LOG_PATH"]) / "dbt.log"
    done = []
    for start, end in DAYS:
        position = log.stat().st_size
        command = dbt("run", "--select", MODEL, *interval_flags(start, end), target=target)
        seconds = timed(command, env)
        done.append(Run(seconds, *parse_step(log, position)))
        print(
            f"[bench-server] {target} {label}{' ' if label else ''}{start}: {seconds:.1f} s, "
            f"parse {done[-1].parse_seconds:.2f} s (partial: {done[-1].partial})",
            flush=True,
        )
    return done


def with_server(table_format: str, env: dict[str, str], target: str, logs: Path) -> list[Run]:
    """A server as a scheduler meets it, long-lived: it has served the same runs once (into a
    schema of their own, untimed) before the timed ones."""
    server = spawn(EMBEDDED_TARGETS[table_format], env, logs)
    try:
        runs(target, {**env, "LAKEHOUSE_SCHEMA": "bench_server_warm_up"}, label="warm-up")
        return runs(target, env)
    finally:
        stop(server)


def measure(table_format: str, home: Path) -> dict[str, list[Run]]:
    embedded, served = EMBEDDED_TARGETS[table_format], SERVER_TARGETS[table_format]
    env = {**os.environ, "LAKEHOUSE_HOME": str(home), "DBT_LOG_PATH": str(home / "logs")}
    return {
        embedded: runs(embedded, {**env, "LAKEHOUSE_SCHEMA": "bench_embedded"}),
        served: with_server(
            table_format, {**env, "LAKEHOUSE_SCHEMA": "bench_server"}, served, home / "logs"
        ),
    }


def report(results: dict[str, dict[str, list[Run]]]) -> str:
    lines = [
        "# A scheduler's `dbt run` through the lakehouse server",
        "",
        f"`make bench-server` on {platform.machine()}, {os.cpu_count()} CPUs: one CLI `dbt run` "
        f"of `{MODEL}` per interval (January 1, 2, 3: real inserts each), the interval as "
        "dbt's event-time flags, wall time from process start to exit. Embedded: the run starts "
        "its JVM. Server: a running `lakehouse serve`, so no JVM starts in dbt's process; it "
        "has served the same three runs once, into another schema, before the timed ones (a "
        "scheduler meets a long-lived server). "
        "*parse*: the manifest's load in each run, from dbt's own log (adapter registered to "
        '"Found ... models"); *partial*: dbt\'s log says it parsed partially.',
        "",
        "| format | embedded runs (s) | median | server runs (s) | median | server / embedded "
        "| parse, embedded (s) | parse, server (s) | partial |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for table_format, sides in results.items():
        local, remote = sides.values()
        local_median = statistics.median(run.seconds for run in local)
        remote_median = statistics.median(run.seconds for run in remote)
        partial = all(run.partial for run in [*local, *remote])
        lines.append(
            f"| {table_format} | {_samples(run.seconds for run in local)} | {local_median:.1f} | "
            f"{_samples(run.seconds for run in remote)} | {remote_median:.1f} | "
            f"{remote_median / local_median:.2f} | "
            f"{_samples((run.parse_seconds for run in local), 2)} | "
            f"{_samples((run.parse_seconds for run in remote), 2)} | "
            f"{'every run' if partial else 'not every run'} |"
        )
    return "\n".join(lines) + "\n"


def _samples(values: Iterable[float], digits: int = 1) -> str:
    return ", ".join(f"{value:.{digits}f}" for value in values)


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
