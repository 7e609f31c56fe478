"""The command line the repository's local servers share (`make pg`, `make s3`): start a server
in a folder on a free port or --port, printing the environment to export; stop it."""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from collections.abc import Callable
from pathlib import Path

from retry_safe.cluster import LOOPBACK


def settings_file(folder: Path) -> Path:
    return folder / "environment"


class PortInUse(RuntimeError):
    """The port asked for is taken; the message names it and the fix."""


def require_free(port: int, make: str = "make pg PG_PORT=N") -> None:
    """PortInUse unless the server could listen on port of 127.0.0.1 (where it listens)."""
    with socket.socket() as probe:
        try:
            probe.bind((LOOPBACK, port))
        except OSError as problem:
            if problem.errno != errno.EADDRINUSE:
                raise
            raise PortInUse(
                f"port {port} on {LOOPBACK} is in use: stop what listens there, choose another "
                f"({make}, or --port N), or leave it out for a free port."
            ) from None


def tcp_port(text: str) -> int:
    """--port's value: a TCP port number."""
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1 to 65535)")
    return int(text)


def parser(module: str, doc: str | None, folder_help: str) -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog=f"python -m {module}", description=doc)
    top.add_argument("action", choices=["start", "stop"])
    top.add_argument("folder", type=Path, help=folder_help)
    top.add_argument("--port", type=tcp_port, help="start: this port (default: a free one)")
    return top


def main(
    arguments: argparse.Namespace,
    start: Callable[[Path, int | None], object],
    stop: Callable[[Path], None],
    make: str,
) -> int:
    """Start or stop; a port in use is one line (`make <target>: ...`) and exit status 2."""
    if arguments.action == "stop":
        stop(arguments.folder)
        return 0
    try:
        start(arguments.folder, arguments.port)
    except PortInUse as problem:
        print(f"{make}: {problem}", file=sys.stderr)
        return 2
    print(settings_file(arguments.folder.resolve()).read_text(), end="")
    return 0
