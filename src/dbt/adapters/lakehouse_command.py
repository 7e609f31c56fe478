"""The `lakehouse` command's entry point, light on purpose: `lakehouse dbt <args>` is the
client of the warm runner (dbt.adapters.lakehouse.commands.runner) and must not import dbt itself, which
is what it saves (about 2 s), so it is handled here with the standard library only; every other
command is handed to dbt.adapters.lakehouse.commands.cli.

    lakehouse dbt [--socket PATH] <dbt args>    `dbt <dbt args>`, run by `lakehouse runner`;
                                                exits with dbt's status

Every command ends quietly when the reader of its output leaves (`lakehouse intervals ... |
head`): no BrokenPipeError traceback, exit status 141 (128 + SIGPIPE), what a Unix tool ended
by SIGPIPE gives, so `set -o pipefail` still sees that the output was cut.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse_cache import default_socket

READER_LEFT = 128 + signal.SIGPIPE  # 141: the exit status when the output's reader left


class RunnerError(Exception):
    """One line for the user: what is wrong and what to do."""


# ---- the client: `lakehouse dbt` -------------------------------------------------------------


def standard_streams() -> list[int]:
    """This process's standard input, output and error; /dev/null for one a scheduler closed."""
    streams = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            fd = os.open(os.devnull, os.O_RDWR)
        streams.append(fd)
    return streams


def run_dbt(args: list[str], path: Path) -> int:
    """`dbt <args>` run by the runner at path, on this process's standard streams: dbt's exit
    status. Ctrl-C and SIGTERM are passed on to that dbt."""
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(str(path))
    except OSError as problem:
        client.close()
        msg = (
            f"No lakehouse runner listens at {path} ({problem.strerror or problem}). Start one "
            "first (`lakehouse runner`, in another terminal or as a service), or run `dbt "
            f"{' '.join(args)}` itself."
        )
        raise RunnerError(msg) from None
    request = {"argv": args, "cwd": os.getcwd(), "env": dict(os.environ)}
    socket.send_fds(client, [json.dumps(request).encode() + b"\n"], standard_streams())

    def pass_on(signum: int, _frame: Any) -> None:
        client.sendall(json.dumps({"signal": signum}).encode() + b"\n")

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, pass_on)
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = client.recv(4096)
        if not chunk:
            raise RunnerError(f"The lakehouse runner at {path} stopped before dbt ended.")
        answer += chunk
    return int(json.loads(answer)["exit"])


def dbt_command(argv: list[str]) -> int:
    """`lakehouse dbt [--socket PATH] <dbt args>`, parsed by hand: every other argument
    (--version, -h, --select ...) is dbt's."""
    path = default_socket()
    if argv[:1] == ["--socket"] and len(argv) >= 2:
        path, argv = Path(argv[1]), argv[2:]
    elif argv[:1] and argv[0].startswith("--socket="):
        path, argv = Path(argv[0].split("=", 1)[1]), argv[1:]
    if not argv:
        print(
            "lakehouse dbt: give dbt's arguments, e.g. `lakehouse dbt run --select orders`.",
            file=sys.stderr,
        )
        return 2
    try:
        return run_dbt(argv, path)
    except RunnerError as problem:
        print(f"lakehouse dbt: {problem}", file=sys.stderr)
        return 2


def command(argv: list[str]) -> int:
    if argv[:1] == ["dbt"]:
        return dbt_command(argv[1:])
    from dbt.adapters.lakehouse.commands.cli import main as full_main

    return full_main(argv)


def reader_left() -> bool:
    """Whether standard output is a pipe whose reader has closed it (the OS reports an error
    condition on such a pipe's write end), rather than any other broken pipe of the command."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError, AttributeError):  # no poll(), no file descriptor
        return False
    return any(event & (select.POLLERR | select.POLLHUP) for _, event in events)


def main(argv: list[str] | None = None) -> int:
    """The command's exit status; READER_LEFT, quietly, when its output's reader left."""
    try:
        status = command(sys.argv[1:] if argv is None else argv)
        sys.stdout.flush()  # what is still buffered fails here, not at the interpreter's exit
    except BrokenPipeError:
        if not reader_left():
            raise
        # the interpreter flushes standard output once more at exit: into /dev/null
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return READER_LEFT
    return status


if __name__ == "__main__":
    sys.exit(main())
