"""`lakehouse`: the command the dbt-lakehouse package installs beside dbt.

    lakehouse jars  [--format delta|iceberg] ...   the pinned table-format jars, once
    lakehouse serve [--project-dir D] [--profiles-dir P] [--target T] ...
                                                    one server for a project's warehouse
    lakehouse metastore init [--format F]           a PostgreSQL metastore's schema, once
    lakehouse java                                  is this machine's Java usable by Spark?
    lakehouse intervals --select S [--since D] [--until D] [--json]
                                                    loaded and missing intervals (catchup.py)
    lakehouse catchup   --select S [--since D] [--until D] [--command run|build] [--quiet|--json]
                                                    run each missing interval, oldest first
    lakehouse maintain  --select S [--retain 7d] [--dry-run] [--json]
                                                    compact, expire history, drop leftovers
    lakehouse runner [--socket PATH]                a warm dbt: imports done once (runner.py)
    lakehouse dbt [--socket PATH] <dbt args>        `dbt <dbt args>`, started by the runner

Each refusal is one line on standard error naming the cause and the fix, exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.commands import catchup, runner
from dbt.adapters.lakehouse.session import jars
from dbt.adapters.lakehouse.session.java import java_problem
from dbt.adapters.lakehouse_cache import default_socket


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
        names = ", ".join(
            formats or [*jars.pinned(), *jars.pinned_drivers(), *jars.pinned_storage()]
        )
        print(f"{names} jars complete in {jars.jars_root()} (nothing to download)")
    return 0


def metastore_command(args: argparse.Namespace) -> int:
    from dbt.adapters.lakehouse.commands import metastore

    try:
        print(metastore.init(args.format))
    except DbtRuntimeError as problem:
        print(f"lakehouse metastore init: {problem}", file=sys.stderr)
        return 2
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


def dbt_of(args: argparse.Namespace) -> catchup.Dbt:
    """dbt's own options, passed to every dbt invocation of the command."""
    common: list[str] = []
    for option in ("project_dir", "profiles_dir", "target", "vars"):
        value = getattr(args, option)
        if value is not None:
            common += [f"--{option.replace('_', '-')}", value]
    shown = {"text": "all", "quiet": "errors", "json": "none"}[getattr(args, "output", "json")]
    return catchup.Dbt(common, shown)


def intervals_command(args: argparse.Namespace) -> int:
    try:
        return catchup.intervals_command(
            dbt_of(args), args.select, args.since, args.until, args.json
        )
    except catchup.SchedulerError as problem:
        print(f"lakehouse intervals: {problem}", file=sys.stderr)
        return 2


def catchup_command(args: argparse.Namespace) -> int:
    try:
        return catchup.catchup_command(
            dbt_of(args), args.select, args.since, args.until, args.command, args.output
        )
    except catchup.SchedulerError as problem:
        print(f"lakehouse catchup: {problem}", file=sys.stderr)
        return 2


def maintain_command(args: argparse.Namespace) -> int:
    from dbt.adapters.lakehouse.commands.maintain import maintain_command as maintain
    from dbt.adapters.lakehouse.tables.maintenance import MaintenanceError

    try:
        return maintain(dbt_of(args), args.select, args.retain, args.dry_run, args.json)
    except MaintenanceError as problem:
        print(f"lakehouse maintain: {problem}", file=sys.stderr)
        return 2


def runner_command(args: argparse.Namespace) -> int:
    try:
        return runner.serve(args.socket or default_socket())
    except runner.RunnerError as problem:
        print(f"lakehouse runner: {problem}", file=sys.stderr)
        return 2


def dbt_command(args: argparse.Namespace) -> int:
    """`lakehouse dbt` is the entry point's own (lakehouse_command: it imports no dbt before
    the runner's dbt starts); reached here only through main() called directly."""
    print(
        "lakehouse dbt: run it as the `lakehouse` command (lakehouse dbt "
        f"{' '.join(args.args) or '<dbt args>'}): its entry point hands it to the warm runner.",
        file=sys.stderr,
    )
    return 2


def scheduler_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--select", "-s", required=True, help="dbt's selection (+orders ...)")
    command.add_argument("--since", help="first interval's start (default: the models' begin)")
    command.add_argument(
        "--until", help="end, exclusive (default: the start of the current interval)"
    )
    command.add_argument("--project-dir", help="the dbt project (default: as dbt finds it)")
    command.add_argument("--profiles-dir", help="the folder of profiles.yml (default: as dbt)")
    command.add_argument("--target", help="the profile's target (default: the profile's)")
    command.add_argument("--vars", help="dbt's --vars, passed to every invocation")


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

    metastore = commands.add_parser(
        "metastore", help="the shared PostgreSQL metastore (LAKEHOUSE_METASTORE_URL)"
    )
    actions = metastore.add_subparsers(dest="action", required=True, metavar="action")
    init = actions.add_parser(
        "init",
        help="create its Hive schema and lock tables once (runs never issue DDL against it)",
    )
    init.add_argument(
        "--format",
        choices=["delta", "iceberg"],
        default="delta",
        help="the session settings to start with (the schema is the same for both)",
    )
    init.set_defaults(run=metastore_command)

    java = commands.add_parser("java", help="check that a Java 17+ runtime is there for Spark")
    java.set_defaults(run=java_command)

    intervals = commands.add_parser(
        "intervals", help="the loaded and the missing intervals of the selected interval models"
    )
    scheduler_options(intervals)
    intervals.add_argument("--json", action="store_true", help="one JSON document")
    intervals.set_defaults(run=intervals_command)

    catching_up = commands.add_parser(
        "catchup", help="run each missing interval of the selection, oldest first"
    )
    scheduler_options(catching_up)
    catching_up.add_argument("--command", choices=["run", "build"], default="run")
    shown = catching_up.add_mutually_exclusive_group()
    shown.add_argument(
        "--quiet", dest="output", action="store_const", const="quiet", help="errors only"
    )
    shown.add_argument(
        "--json", dest="output", action="store_const", const="json", help="JSON lines"
    )
    catching_up.set_defaults(run=catchup_command, output="text")

    maintain = commands.add_parser(
        "maintain",
        help="compact the selected tables, expire their history older than --retain and delete "
        "the files only it held, drop staging tables killed runs left; safe beside runs",
    )
    maintain.add_argument("--select", "-s", required=True, help="dbt's selection (+orders ...)")
    maintain.add_argument(
        "--retain",
        default="7d",
        help="time travel kept, as 36h, 7d or 2w (default 7d; at least 7d on Delta, 24h on "
        "Iceberg)",
    )
    maintain.add_argument("--dry-run", action="store_true", help="say what would be done")
    maintain.add_argument("--json", action="store_true", help="one JSON document")
    for option, what in (
        ("--project-dir", "the dbt project (default: as dbt finds it)"),
        ("--profiles-dir", "the folder of profiles.yml (default: as dbt)"),
        ("--target", "the profile's target (default: the profile's)"),
        ("--vars", "dbt's --vars"),
    ):
        maintain.add_argument(option, help=what)
    maintain.set_defaults(run=maintain_command, output="json")

    warm = commands.add_parser(
        "runner",
        help="keep a warm dbt listening: `lakehouse dbt <args>` runs dbt from it, without "
        "importing dbt and the Spark Connect client again (about 2 s a command)",
    )
    warm.add_argument(
        "--socket",
        type=Path,
        help="its Unix socket (default $LAKEHOUSE_RUNNER_SOCKET, else the per-user cache)",
    )
    warm.set_defaults(run=runner_command)
    through_runner = commands.add_parser(
        "dbt",
        help="run `dbt <args>` from the warm runner ([--socket PATH] first); exits with dbt's "
        "status",
    )
    through_runner.add_argument("args", nargs=argparse.REMAINDER)
    through_runner.set_defaults(run=dbt_command)
    return top


def main(argv: list[str] | None = None) -> int:
    """Every command; `lakehouse dbt` is the entry point's own (lakehouse_command)."""
    args = parser().parse_args(argv)
    return args.run(args)
