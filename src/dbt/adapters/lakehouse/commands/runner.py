"""A warm dbt for a scheduler: every `dbt` command starts from a process that has already
imported dbt, the adapter and the Spark Connect client.

    lakehouse runner [--socket PATH]              keep one warm process listening
    lakehouse dbt [--socket PATH] <dbt args>      run `dbt <dbt args>` from it

A scheduler's `dbt run` of one interval through the lakehouse server spends about 2 s of a
7-9 s run importing dbt (click, agate, jinja, mashumaro, the adapters) and the Spark Connect
client (grpc, pandas, pyarrow) before its first statement, and 0.34 s more compiling the Jinja
of the shipped macros it calls (compile_shipped_macros). The runner pays both once. For each
`lakehouse dbt` it forks a child of itself that is, from then on, the dbt process the command
would have started: the client's arguments, working directory, environment, and its standard
input, output and error (passed over the socket, so dbt writes to the client's terminal or log
file directly), and the exit status dbt returns, which `lakehouse dbt` exits with.

The child is as disposable as a dbt process, which is what keeps every run retry-safe:
  - a client that ends before its dbt does (killed, its machine gone: the socket closes) takes
    its dbt with it: the child's process group (its dbt and any JVM it started) is killed, as
    if the scheduler had killed `dbt` itself; each model's change commits whole or not at all,
    so the retry is safe;
  - Ctrl-C or SIGTERM to the client is passed on to its dbt, which stops as it would;
  - children run side by side (each its own process); nothing of one reaches another, or the
    runner, which only imports and forks.

The socket is `--socket`, else $LAKEHOUSE_RUNNER_SOCKET, else the per-user cache
(`~/.cache/dbt-lakehouse/runner.sock`); it is created for this user only (0600). A second
runner on a socket that answers is refused; a socket left by a killed runner is replaced.
Ctrl-C or SIGTERM stops the runner: running commands get SIGINT and are waited for.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import selectors
import signal
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STOP_WAIT = 60  # seconds a stopping runner waits for its running commands after SIGINT
MAX_REQUEST = 4 * 1024 * 1024
READY = "lakehouse runner: listening on"
CLIENT_LEFT = "lakehouse runner: a client left before its dbt ended:"


class RunnerError(Exception):
    """One line for the user: why the runner cannot start, and what to do."""


# ---- the runner: `lakehouse runner` ----------------------------------------------------------


def warm_up() -> None:
    """Import once what every dbt command of a lakehouse project imports, and compile the
    shipped macros' Jinja (compile_shipped_macros)."""
    import pyspark.sql.connect.session  # noqa: F401

    import dbt.adapters.lakehouse.impl  # noqa: F401
    import dbt.cli.main  # noqa: F401

    compile_shipped_macros()


@dataclass(frozen=True)
class _MacroText:
    """What dbt's template cache reads of a macro node: its text."""

    macro_sql: str


def compile_shipped_macros() -> int:
    """Compile, once, every macro dbt, dbt-spark and the lakehouse adapter ship into dbt's
    template cache, which every child inherits.

    Each dbt process compiles the Jinja of each macro it calls on first use: about 0.34 s of a
    warm `dbt run` of one incremental model (the materialization, the strategy, dbt-spark's
    adapter macros). dbt's cache is keyed by the macro's text, as dbt's parser cuts it from its
    file (the top-level block), so a child finds the same template it would have compiled; a
    project's own macro, or one it overrides, has other text and is compiled as before. A
    block that does not compile is left to the child, which reports it as dbt would. A child
    asked for dbt's macro debugging compiles them all itself (asks_for_macro_debugging).
    """
    from dbt_common.clients import jinja
    from dbt_common.clients.system import load_file_contents

    from dbt.include import global_project, lakehouse, spark

    compiled = 0
    for root in (global_project.PACKAGE_PATH, spark.PACKAGE_PATH, lakehouse.PACKAGE_PATH):
        for path in sorted(Path(root).rglob("*.sql")):
            try:
                blocks = jinja.extract_toplevel_blocks(
                    load_file_contents(str(path)),  # as dbt's parser reads it (stripped)
                    allowed_blocks={"macro", "materialization", "test", "data_test"},
                    collect_raw_data=False,
                )
                for block in blocks:
                    if isinstance(block, jinja.BlockTag) and block.full_block:
                        jinja.template_cache.get_node_template(_MacroText(block.full_block))
                        compiled += 1
            except Exception:  # noqa: BLE001, S112 (the child compiles it, and reports its error)
                continue
    return compiled


def asks_for_macro_debugging(argv: list[str], env: dict[str, str]) -> bool:
    """Whether this dbt compiles its macros for debugging (dbt's hidden --macro-debugging, or
    DBT_MACRO_DEBUGGING): Jinja then keeps each macro's source for tracebacks, which the
    runner's templates, compiled without it, do not."""
    if "--no-macro-debugging" in argv:
        return False
    return "--macro-debugging" in argv or bool(env.get("DBT_MACRO_DEBUGGING"))


def forget_compiled_macros() -> None:
    """The child compiles every macro itself, as a fresh dbt process does."""
    from dbt_common.clients import jinja

    jinja.template_cache.clear()


def listen(path: Path) -> socket.socket:
    """The runner's socket (this user only); RunnerError if another runner answers there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        path.unlink(missing_ok=True)  # nothing, or a killed runner's socket
    else:
        msg = f"A lakehouse runner already listens at {path}; stop it first, or pass --socket."
        raise RunnerError(msg)
    finally:
        probe.close()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o077)
    try:
        server.bind(str(path))
    finally:
        os.umask(old_mask)
    server.listen(16)
    return server


@dataclass
class Command:
    """One `lakehouse dbt` being served: its connection and its dbt child."""

    connection: socket.socket
    pid: int
    buffer: bytes = b""
    client_gone: bool = False


def receive_request(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """The client's request (argv, cwd, env) and its three standard streams."""
    data, fds, _flags, _address = socket.recv_fds(connection, MAX_REQUEST, 3)
    while not data.endswith(b"\n"):
        chunk = connection.recv(MAX_REQUEST)
        if not chunk:
            raise ConnectionError("the client left before its request was complete")
        data += chunk
    if len(fds) != 3:
        raise ConnectionError("the client sent no standard streams")
    return json.loads(data), fds


def become_dbt(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: be `dbt <argv>` of the client, then exit with dbt's status."""
    code = 1
    try:
        os.setpgid(0, 0)
        for signum in (signal.SIGTERM, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["dbt", *request["argv"]]
        if asks_for_macro_debugging(request["argv"], request["env"]):
            forget_compiled_macros()
        from dbt.cli.main import cli

        try:
            cli()
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        except KeyboardInterrupt:
            code = 130
    except BaseException as problem:  # noqa: BLE001 (the child must never return to the loop)
        print(f"lakehouse runner: {problem}", file=sys.stderr)
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def start(connection: socket.socket, listener: socket.socket) -> Command | None:
    """Fork the dbt of one client; None when its request cannot be read."""
    try:
        request, fds = receive_request(connection)
    except (OSError, ValueError, ConnectionError):
        connection.close()
        return None
    pid = os.fork()
    if pid == 0:
        signal.set_wakeup_fd(-1)
        listener.close()
        connection.close()
        become_dbt(request, fds)
    # the child's own group from here on, whichever of the two calls runs first: a client that
    # leaves at once must find it to kill
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)
    for fd in fds:
        os.close(fd)
    return Command(connection, pid)


def exit_status(status: int) -> int:
    """A child's wait status as a shell reports it (128 + the signal for a killed one)."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def kill_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signum)


def from_client(command: Command, selector: selectors.BaseSelector) -> None:
    """A signal the client passes on, or its end (EOF: the child's group is killed)."""
    try:
        chunk = command.connection.recv(4096)
    except OSError:
        chunk = b""
    if not chunk:
        command.client_gone = True
        selector.unregister(command.connection)
        kill_group(command.pid, signal.SIGKILL)
        print(f"{CLIENT_LEFT} dbt {command.pid} and its processes killed", flush=True)
        return
    command.buffer += chunk
    while b"\n" in command.buffer:
        line, command.buffer = command.buffer.split(b"\n", 1)
        with contextlib.suppress(ValueError, AttributeError):
            with_signal = json.loads(line).get("signal")
            if with_signal in (signal.SIGINT, signal.SIGTERM):
                os.kill(command.pid, with_signal)


def reap(commands: dict[int, Command], selector: selectors.BaseSelector) -> None:
    """Answer each client whose dbt has ended with its exit status."""
    while commands:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        command = commands.pop(pid, None)
        if command is None:
            continue
        if not command.client_gone:
            selector.unregister(command.connection)
        answer = json.dumps({"exit": exit_status(status)}).encode() + b"\n"
        with contextlib.suppress(OSError):
            command.connection.sendall(answer)
        command.connection.close()
        kill_group(pid, signal.SIGKILL)  # anything its dbt left running (a JVM)


def serve(path: Path) -> int:
    """Listen until Ctrl-C or SIGTERM; each connection is one dbt command (module docstring)."""
    listener = listen(path)
    warm_up()
    # what the imports built is shared by every child, never collected: kept out of the
    # collector's walks in the children (and so out of copy-on-write page copies)
    gc.freeze()
    stopping: list[int] = []
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda signum, _frame: stopping.append(signum))
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "listener")
    selector.register(wake_read, selectors.EVENT_READ, "wake")
    commands: dict[int, Command] = {}
    print(f"{READY} {path} (pid {os.getpid()}). Stop with Ctrl-C.", flush=True)
    try:
        while not stopping:
            for key, _events in selector.select(timeout=1.0):
                if key.data == "listener":
                    connection, _address = listener.accept()
                    command = start(connection, listener)
                    if command:
                        commands[command.pid] = command
                        selector.register(connection, selectors.EVENT_READ, command)
                elif key.data == "wake":
                    os.read(wake_read, 512)
                else:
                    from_client(key.data, selector)
            reap(commands, selector)
    finally:
        listener.close()
        path.unlink(missing_ok=True)
        stop_commands(commands, selector)
    return 0


def stop_commands(commands: dict[int, Command], selector: selectors.BaseSelector) -> None:
    """The runner stops: its running commands get Ctrl-C, then are killed if they linger."""
    for pid in commands:
        kill_group(pid, signal.SIGINT)
    deadline = time.monotonic() + STOP_WAIT
    while commands and time.monotonic() < deadline:
        reap(commands, selector)
        time.sleep(0.1)
    for pid in list(commands):
        kill_group(pid, signal.SIGKILL)
    reap(commands, selector)
