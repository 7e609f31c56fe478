"""`lakehouse runner` and `lakehouse dbt` without a JVM: a real runner process, and dbt commands
that need no session (ls), run from it as a scheduler runs them. A run through the lakehouse
server, and a killed client, are in tests/test_server.py."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.processes import children_of

from dbt.adapters.lakehouse_command import dbt_command
from retry_safe.project import PROJECT_DIR
from retry_safe.server_process import spawn_runner, stop, through_runner


@pytest.fixture(scope="module")
def socket_path(tmp_path_factory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("runner")
    path = folder / "runner.sock"
    runner = spawn_runner(path, dict(os.environ), folder)
    yield path
    assert stop(runner) == 0
    assert not path.exists()  # removed when the runner stops


def lakehouse_dbt(socket_path: Path, *args: str, cwd: Path = PROJECT_DIR, **env: str):
    return subprocess.run(
        [*through_runner(socket_path), *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_runners_dbt_is_the_clients_own_arguments_streams_and_environment(
    socket_path, tmp_path
):
    logs = tmp_path / "client-logs"
    args = ("ls", "--select", "orders", "--resource-type", "model", "--output", "name", "-q")
    done = lakehouse_dbt(socket_path, *args, DBT_LOG_PATH=str(logs))
    assert (done.returncode, done.stdout, done.stderr) == (0, "orders\n", "")
    assert (logs / "dbt.log").exists()  # where the client's environment says, not the runner's


def test_the_runners_dbt_works_in_the_clients_directory(socket_path, tmp_path):
    done = lakehouse_dbt(socket_path, "ls", cwd=tmp_path)
    assert done.returncode == 2
    assert "No dbt_project.yml found at expected path" in done.stdout
    assert str(tmp_path) in done.stdout


def test_dbts_own_refusal_and_exit_status_reach_the_client(socket_path):
    done = lakehouse_dbt(socket_path, "run", "--no-such-option")
    assert done.returncode == 2
    assert "No such option" in done.stderr and "--no-such-option" in done.stderr


def test_a_second_runner_on_the_same_socket_is_refused_in_one_line(socket_path):
    lakehouse = through_runner(socket_path)[0]
    done = subprocess.run(
        [lakehouse, "runner", "--socket", str(socket_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"lakehouse runner: A lakehouse runner already listens at {socket_path}; stop it "
        "first, or pass --socket.\n"
    )


def test_without_a_runner_one_line_names_the_socket_and_how_to_start_one(tmp_path, capsys):
    missing = tmp_path / "none.sock"
    assert dbt_command(["--socket", str(missing), "run", "--select", "orders"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"lakehouse dbt: No lakehouse runner listens at {missing} (No such file or directory). "
        "Start one first (`lakehouse runner`, in another terminal or as a service), or run "
        "`dbt run --select orders` itself.\n"
    )


@pytest.mark.parametrize("argv", [[], ["--socket", "/some/where.sock"], ["--socket=/x.sock"]])
def test_lakehouse_dbt_without_dbt_arguments_says_what_to_give(argv, capsys):
    assert dbt_command(argv) == 2
    assert capsys.readouterr().err == (
        "lakehouse dbt: give dbt's arguments, e.g. `lakehouse dbt run --select orders`.\n"
    )


def test_sigterm_to_the_client_reaches_its_dbt_whose_status_the_client_exits_with(
    socket_path, tmp_path
):
    """dbt waits on a "server" that accepts the connection and never answers; SIGTERM to the
    client ends that dbt as SIGTERM ends a dbt process (128 + 15), and the client says so."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        env = {
            **os.environ,
            "DBT_TARGET": "server",
            "LAKEHOUSE_CONNECT_PORT": str(silent.getsockname()[1]),
            "DBT_LOG_PATH": str(tmp_path / "logs"),
        }
        client = subprocess.Popen(
            [*through_runner(socket_path), "run", "--select", "orders"],
            cwd=PROJECT_DIR,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        log = tmp_path / "logs" / "dbt.log"
        deadline = time.monotonic() + 60
        # dbt is waiting on the silent server once it has sent its first statement
        while "show databases" not in (log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline and client.poll() is None, client.communicate()
            time.sleep(0.05)
        client.send_signal(signal.SIGTERM)
        out, err = client.communicate(timeout=30)
    assert client.returncode == 128 + signal.SIGTERM, out + err


def test_the_runner_compiles_every_shipped_macro_as_dbts_parser_cuts_it(tmp_path):
    """A child finds the Jinja of each macro dbt, dbt-spark and the adapter ship already compiled
    (dbt's template cache is keyed by the macro's text): the texts a real `dbt parse` of the
    project cuts from those packages are all in the cache the runner's warm-up fills."""
    from dbt.cli.main import dbtRunner
    from dbt_common.clients import jinja

    from dbt.adapters.lakehouse.commands.runner import compile_shipped_macros

    args = ["parse", "--quiet", "--no-partial-parse", "--project-dir", str(PROJECT_DIR)]
    args += ["--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")]
    parsed = dbtRunner().invoke(args)
    assert parsed.success, parsed.exception
    shipped = {
        unique_id: macro.macro_sql
        for unique_id, macro in parsed.result.macros.items()
        if macro.package_name in ("dbt", "dbt_spark", "dbt_lakehouse")
    }
    assert len(shipped) > 500  # dbt's own macros alone are over 400

    assert compile_shipped_macros() == len(shipped)
    not_compiled = [u for u, sql in shipped.items() if sql not in jinja.template_cache.file_cache]
    assert not_compiled == []


@pytest.mark.parametrize(
    ("argv", "env", "asks"),
    [
        (["run", "--macro-debugging"], {}, True),
        (["run"], {"DBT_MACRO_DEBUGGING": "write"}, True),
        (["run", "--no-macro-debugging"], {"DBT_MACRO_DEBUGGING": "1"}, False),
        (["run", "--select", "orders"], {}, False),
    ],
)
def test_a_dbt_asked_for_macro_debugging_compiles_its_macros_itself(argv, env, asks):
    """dbt's macro debugging keeps each macro's source for tracebacks as it compiles it: such a
    child forgets the runner's templates (compiled without it) and compiles its own."""
    from dbt.adapters.lakehouse.commands.runner import asks_for_macro_debugging

    assert asks_for_macro_debugging(argv, env) is asks


def test_the_runner_generates_dbts_serializers_which_convert_as_before():
    """dbt's dataclasses convert with code mashumaro generates on each class's first conversion
    in a process (its lazy stub calls mashumaro's CodeBuilder); the runner's warm-up generates
    it for every dbt dataclass imported, so a child never does. The class is defined here:
    nothing converted it before."""
    from dataclasses import dataclass

    from dbt.contracts.graph.manifest import Manifest
    from dbt_common.dataclass_schema import dbtClassMixin

    from dbt.adapters.lakehouse.commands.runner import compile_serializers

    @dataclass
    class Interval(dbtClassMixin):
        start: str
        end: int = 0

    def lazy(cls: type) -> dict[str, bool]:
        methods = ("from_dict", "from_msgpack", "to_dict", "to_msgpack")
        code = {
            name: getattr(getattr(cls, name), "__func__", getattr(cls, name)) for name in methods
        }
        return {
            name: "CodeBuilder" in function.__code__.co_names for name, function in code.items()
        }

    assert set(lazy(Interval).values()) == {True}
    assert compile_serializers() > 200  # the manifest, its nodes, the artifacts, the configs
    assert set(lazy(Interval).values()) == {False}
    assert set(lazy(Manifest).values()) == {False}  # what reads the partial-parse manifest
    assert Interval.from_dict({"start": "2026-01-01"}) == Interval("2026-01-01", 0)
    assert Interval("2026-01-02", 2).to_dict() == {"start": "2026-01-02", "end": 2}
    assert Interval.from_msgpack(Interval("2026-01-03", 3).to_msgpack()) == Interval(
        "2026-01-03", 3
    )


def test_generating_the_serializers_builds_nothing_and_starts_no_process():
    """The generation builds no instance: a Manifest's would start multiprocessing's resource
    tracker (for the manifest's lock) as a child of the runner, which a scheduler's `lakehouse
    dbt` then found beside its own dbt. In a fresh process: nothing built one before."""
    script = (
        "from dbt.adapters.lakehouse.commands.runner import compile_serializers\n"
        "compile_serializers()\n"
        "print('generated', flush=True)\n"
        "input()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout.readline() == "generated\n"
        assert children_of(process.pid) == []
    finally:
        out, err = process.communicate("\n", timeout=60)
    assert (process.returncode, out, err) == (0, "", "")
