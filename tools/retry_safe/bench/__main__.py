"""python -m retry_safe.bench [all|run|cli|storage|warm|reset|report] ...; `make bench` runs
`all`."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from retry_safe.bench.settings import CONTENDERS, DEFAULT_CASES, FORMATS, Settings
from retry_safe.project import PROJECT_DIR

OUT_DIR = PROJECT_DIR / "docs" / "benchmarks"
HOME = PROJECT_DIR / ".lakehouse" / "bench"


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def add_settings(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--rows-per-day", type=int, default=100_000)
    parser.add_argument("--files-per-day", type=int, default=4)
    parser.add_argument("--day-index", type=int, default=14, help="the day re-merged (0-based)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--contenders", type=_csv, default=CONTENDERS)
    parser.add_argument("--cases", type=_csv, default=list(DEFAULT_CASES))
    parser.add_argument("--no-mor", dest="mor", action="store_false")
    parser.add_argument("--no-cli", dest="cli", action="store_false")
    parser.add_argument("--label", default="default", help="raw file prefix; report groups by it")
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="on a Spark standalone master and worker started on this machine (the format's "
        "cluster target); with LAKEHOUSE_METASTORE_URL set, on that shared metastore",
    )
    parser.add_argument(
        "--warehouse",
        choices=["local", "s3"],
        default="local",
        help="s3: the tables in the bucket LAKEHOUSE_WAREHOUSE names (`storage` sets it up)",
    )
    parser.add_argument("--home", type=Path, default=HOME, help="warehouse + metastore folder")
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR)


def settings(args: argparse.Namespace, table_format: str) -> Settings:
    return Settings(
        table_format=table_format,
        days=args.days,
        rows_per_day=args.rows_per_day,
        files_per_day=args.files_per_day,
        reps=args.reps,
        day_index=args.day_index,
        contenders=args.contenders,
        cases=args.cases,
        mor=args.mor,
        cli=args.cli,
        label=args.label,
        cluster=args.cluster,
        warehouse=args.warehouse,
    )


def raw_path(args: argparse.Namespace, table_format: str) -> Path:
    return args.out_dir / "raw" / f"{args.label}-{table_format}.json"


def cmd_run(args: argparse.Namespace) -> int:
    from retry_safe.bench.run import run

    if args.cluster and not os.environ.get("SPARK_MASTER_URL"):
        raise SystemExit("run --cluster needs SPARK_MASTER_URL (`all --cluster` starts a cluster)")
    on_s3 = os.environ.get("LAKEHOUSE_WAREHOUSE", "").startswith("s3a://")
    if on_s3 != (args.warehouse == "s3"):
        raise SystemExit(
            f"run --warehouse {args.warehouse} with LAKEHOUSE_WAREHOUSE="
            f"{os.environ.get('LAKEHOUSE_WAREHOUSE', '(unset)')}: the raw file would name the "
            "wrong storage; `storage` sets both"
        )
    run(settings(args, args.format), args.home.resolve(), raw_path(args, args.format))
    return 0


def run_flags(args: argparse.Namespace) -> list[str]:
    """The settings of `all` as flags for one `run` process."""
    flags = [
        *("--days", str(args.days), "--rows-per-day", str(args.rows_per_day)),
        *("--files-per-day", str(args.files_per_day), "--day-index", str(args.day_index)),
        *("--reps", str(args.reps), "--label", args.label),
        *("--contenders", ",".join(args.contenders), "--cases", ",".join(args.cases)),
        *("--home", str(args.home), "--out-dir", str(args.out_dir)),
    ]
    flags += [] if args.mor else ["--no-mor"]
    flags += [] if args.cli else ["--no-cli"]
    flags += ["--warehouse", args.warehouse]
    return flags + (["--cluster"] if args.cluster else [])


def cmd_all(args: argparse.Namespace) -> int:
    """Each format in a process of its own, its CLI comparison, then the report; with --cluster
    all of it on one standalone master and worker of this machine."""
    if not args.cluster:
        return run_all(args)
    from retry_safe.cluster import standalone_cluster

    if args.cli:
        raise SystemExit("--cluster measures the runs in one process: add --no-cli")
    if os.environ.get("LAKEHOUSE_METASTORE_URL") and len(args.formats) > 1:
        raise SystemExit(
            "--cluster on a shared metastore: one format per metastore database (both formats' "
            "tables have the same names in the schema bench); run --formats delta and "
            "--formats iceberg, each with LAKEHOUSE_METASTORE_URL naming a database of its own"
        )
    with standalone_cluster(args.home.resolve() / "spark") as url:
        os.environ.update(SPARK_MASTER_URL=url, PYSPARK_PYTHON=sys.executable)
        print(f"[bench] Spark standalone master at {url}")
        return run_all(args)


def run_all(args: argparse.Namespace) -> int:
    from retry_safe.bench import cli, report

    began = time.perf_counter()
    for table_format in args.formats:
        command = [sys.executable, "-m", "retry_safe.bench", "run", "--format", table_format]
        if subprocess.run([*command, *run_flags(args)], cwd=PROJECT_DIR, check=False).returncode:
            return 1
        wanted = {"idempotent_merge", "pyspark_job"} <= set(args.contenders)
        if args.cli and wanted:
            cli.compare(raw_path(args, table_format), args.reps)
    print(report.write(args.out_dir))
    print(f"[bench] done in {time.perf_counter() - began:.0f} s")
    return 0


def cmd_storage(args: argparse.Namespace) -> int:
    from retry_safe.bench import report, storage

    status = storage.compare(args, run_flags)
    print(report.write(args.out_dir))
    return status


def cmd_warm(args: argparse.Namespace) -> int:
    """Each format through a server of its own: the model by the warm runner against the
    hand-written job through Spark Connect (retry_safe.bench.warm), then the report."""
    from retry_safe.bench import report, warm

    if args.cluster or args.warehouse != "local":
        raise SystemExit("warm runs on a local server's warehouse: drop --cluster / --warehouse")
    for table_format in args.formats:
        one = settings(args, table_format)
        one.contenders, one.mor, one.cli = list(warm.CONTENDERS), False, False
        one.label = f"warm-{args.label}"
        home = (args.home / f"warm-{table_format}").resolve()
        warm.run(one, home, args.out_dir / "raw" / f"{one.label}-{table_format}.json")
    print(report.write(args.out_dir))
    return 0


def cmd_cli(args: argparse.Namespace) -> int:
    from retry_safe.bench import cli

    cli.compare(raw_path(args, args.format), args.reps)
    return 0


def cmd_reset(args: argparse.Namespace) -> int:
    from retry_safe.bench import cli

    cli.reset_from_raw(args.raw)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from retry_safe.bench import report

    print(report.write(args.out_dir))
    return 0


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="python -m retry_safe.bench", description=__doc__)
    sub = main.add_subparsers(dest="command", required=True)
    every = sub.add_parser("all", help="both formats, the CLI comparison, the report")
    add_settings(every)
    every.add_argument("--formats", type=_csv, default=list(FORMATS))
    every.set_defaults(func=cmd_all)
    for name, func in (("run", cmd_run), ("cli", cmd_cli)):
        one = sub.add_parser(name, help=f"{name} one format")
        add_settings(one)
        one.add_argument("--format", choices=list(FORMATS), required=True)
        one.set_defaults(func=func)
    on_s3 = sub.add_parser(
        "storage", help="each format on local disk, then on a local S3 server's bucket"
    )
    add_settings(on_s3)
    on_s3.add_argument("--formats", type=_csv, default=list(FORMATS))
    on_s3.set_defaults(func=cmd_storage)
    warm = sub.add_parser(
        "warm", help="through a running server: the warm runner against a Spark Connect job"
    )
    add_settings(warm)
    warm.add_argument("--formats", type=_csv, default=list(FORMATS))
    warm.set_defaults(func=cmd_warm, cases=["b", "c"])
    reset = sub.add_parser("reset", help="(internal) reset the CLI comparison's tables")
    reset.add_argument("--raw", type=Path, required=True)
    reset.set_defaults(func=cmd_reset)
    rep = sub.add_parser("report", help="markdown + chart from the raw files")
    rep.add_argument("--out-dir", type=Path, default=OUT_DIR)
    rep.set_defaults(func=cmd_report)
    return main


def main() -> int:
    args = parser().parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
