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
loading the manifest, partial or not). Last, with the server still warm, the same three
runs into a third schema through a warm runner (`lakehouse runner`; `lakehouse dbt run ...`:
dbt's imports once, not per run). Writes docs/benchmarks/server.md.
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
from retry_safe.server_process import spawn, spawn_runner, stop, through_runner

MODEL = "retail_daily_product_cart_abandonment"
SEED = "retail_session_products"
DAYS = [("2026-01-01", "2026-01-02"), ("2026-01-02", "2026-01-03"), ("2026-01-03", "2026-01-04")]
OUT = PROJECT_DIR / "docs" / "benchmarks" / "server.md"


@dataclass(frozen=True)
class Run:
    seconds: float  # process start to exit
    parse_seconds: float  # dbt's own log: adapter registered to "Found ... models"
    partial: bool  # dbt's log says it parsed partially


def dbt(*args: str, target: str, via: list[str] | None = None) -> list[str]:
    """A dbt command line: the dbt executable, or via another command (the runner's client)."""
    return [
        *(via or [str(Path(sys.executable).with_name("dbt"))]),
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


def runs(
    target: str, env: dict[str, str], label: str = "", via: list[str] | None = None
) -> list[Run]:
    """Seed (untimed), then the three intervals, each timed."""
    timed(dbt("seed", "--select", SEED, target=target, via=via), env)
    log = Path(env["DBT_LOG_PATH"]) / "dbt.log"
    done = []
    for start, end in DAYS:
        position = log.stat().st_size
        command = dbt("run", "--select", MODEL, *interval_flags(start, end), target=target, via=via)
        seconds = timed(command, env)
        done.append(Run(seconds, *parse_step(log, position)))
        print(
            f"[bench-server] {target} {label}{' ' if label else ''}{start}: {seconds:.1f} s, "
            f"parse {done[-1].parse_seconds:.2f} s (partial: {done[-1].partial})",
            flush=True,
        )
    return done


def with_server(
    table_format: str, env: dict[str, str], target: str, logs: Path
) -> tuple[list[Run], list[Run]]:
    """A server as a scheduler meets it, long-lived: it has served the same runs once (into a
    schema of their own, untimed) before the timed ones. Then the same runs again, each dbt
    started by a warm runner (`lakehouse dbt`), into a schema of their own."""
    server = spawn(EMBEDDED_TARGETS[table_format], env, logs)
    runner = spawn_runner(logs / "runner.sock", env, logs)
    try:
        runs(target, {**env, "LAKEHOUSE_SCHEMA": "bench_server_warm_up"}, label="warm-up")
        plain = runs(target, env)
        warm = runs(
            target,
            {**env, "LAKEHOUSE_SCHEMA": "bench_server_runner"},
            label="runner",
            via=through_runner(logs / "runner.sock"),
        )
        return plain, warm
    finally:
        stop(runner)
        stop(server)


def measure(table_format: str, home: Path) -> dict[str, list[Run]]:
    """embedded, server (dbt's command line) and runner (`lakehouse dbt`) runs."""
    embedded, served = EMBEDDED_TARGETS[table_format], SERVER_TARGETS[table_format]
    env = {**os.environ, "LAKEHOUSE_HOME": str(home), "DBT_LOG_PATH": str(home / "logs")}
    local = runs(embedded, {**env, "LAKEHOUSE_SCHEMA": "bench_embedded"})
    plain, warm = with_server(
        table_format, {**env, "LAKEHOUSE_SCHEMA": "bench_server"}, served, home / "logs"
    )
    return {"embedded": local, "server": plain, "runner": warm}


SIDES = {
    "embedded": "embedded: `dbt run` starts its JVM",
    "server": "server: `dbt run`",
    "runner": "server: `lakehouse dbt run` (warm runner)",
}


def report(results: dict[str, dict[str, list[Run]]]) -> str:
    lines = [
        "# A scheduler's `dbt run` through the lakehouse server",
        "",
        f"`make bench-server` on {platform.machine()}, {os.cpu_count()} CPUs: one CLI run "
        f"of `{MODEL}` per interval (January 1, 2, 3: real inserts each), the interval as "
        "dbt's event-time flags, wall time from process start to exit, each side into a schema "
        "of its own. *embedded*: `dbt run` starts its JVM. *server*: a running `lakehouse "
        "serve`, so no JVM starts in dbt's process; it has served the same three runs once, "
        "into another schema, before the timed ones (a scheduler meets a long-lived server). "
        "*warm runner*: the same server, each dbt started by `lakehouse runner` "
        "(`lakehouse dbt run ...`: dbt, the adapter and the Spark Connect client imported "
        "once, not per run). *parse*: the manifest's load in each run, from dbt's own log "
        '(adapter registered to "Found ... models"); *partial*: dbt\'s log says it parsed '
        "partially. The ratio is each side's median against the embedded median.",
        "",
        "| format | side | runs (s) | median (s) | / embedded | parse (s) | partial |",
        "|---|---|---|---|---|---|---|",
    ]
    for table_format, sides in results.items():
        embedded = statistics.median(run.seconds for run in sides["embedded"])
        for side, done in sides.items():
            median = statistics.median(run.seconds for run in done)
            partial = "every run" if all(run.partial for run in done) else "not every run"
            lines.append(
                f"| {table_format} | {SIDES[side]} | {_samples(run.seconds for run in done)} | "
                f"{median:.1f} | {median / embedded:.2f} | "
                f"{_samples((run.parse_seconds for run in done), 2)} | {partial} |"
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
