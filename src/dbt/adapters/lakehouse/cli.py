"""`lakehouse`: the command the dbt-lakehouse package installs beside dbt.

    lakehouse jars  [--format delta|iceberg] ...   the pinned table-format jars, once
    lakehouse serve [--project-dir D] [--profiles-dir P] [--target T] ...
                                                    one server for a project's warehouse
    lakehouse java                                  is this machine's Java usable by Spark?

Each refusal is one line on standard error naming the cause and the fix, exit status 2.
"""

from __future__ import annotations

import argparse
import sys

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse import jars
from dbt.adapters.lakehouse.java import java_problem


def jars_command(args: argparse.Namespace) -> int:
    formats = [args.format] if args.format else None
    try:
        changed = jars.install(formats)
    except DbtRuntimeError as problem:
        print(f"lakehouse jars: {problem}", file=sys.stderr)
        return 2
    for folder in changed:
        print(f"{folder.name} jars ready in {folder}")
    if not changed:
        names = ", ".join(formats or jars.pinned())
        print(f"{names} jars complete in {jars.jars_root()} (nothing to download)")
    return 0


def serve_command(args: argparse.Namespace) -> int:
    from dbt.adapters.lakehouse.server.app import run

    return run(
        args.project_dir,
        args.profiles_dir,
        args.target,
        args.bind,
        args.connect_port,
        args.thrift_port,
    )


def java_command(args: argparse.Namespace) -> int:
    problem = java_problem()
    if problem:
        print(f"lakehouse java: {problem}", file=sys.stderr)
        return 2
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="lakehouse", description="dbt-lakehouse: retry-safe incremental loads on Spark."
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="command")

    jars_parser = commands.add_parser(
        "jars",
        help="download the pinned Delta and Iceberg jars once (LAKEHOUSE_JARS_DIR, default a "
        "per-user cache); nothing to do when they are complete",
    )
    jars_parser.add_argument("--format", choices=["delta", "iceberg"], help="one format only")
    jars_parser.set_defaults(run=jars_command)

    serve = commands.add_parser(
        "serve",
        help="serve a dbt project's warehouse: Spark Connect for dbt and Python clients, "
        "read-only Thrift JDBC for analysts",
    )
    serve.add_argument("--project-dir", help="the dbt project (default: as dbt finds it)")
    serve.add_argument("--profiles-dir", help="the folder of profiles.yml (default: as dbt)")
    serve.add_argument("--target", help="the session target to serve (default: the profile's)")
    serve.add_argument("--bind", help="address of both endpoints (default 127.0.0.1)")
    serve.add_argument("--connect-port", type=int, help="Spark Connect port (default 15002)")
    serve.add_argument("--thrift-port", type=int, help="Thrift JDBC port (default 10000)")
    serve.set_defaults(run=serve_command)

    java = commands.add_parser("java", help="check that a Java 17+ runtime is there for Spark")
    java.set_defaults(run=java_command)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
