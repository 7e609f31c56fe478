"""`make pg`'s port (tools/retry_safe/postgres.py): PG_PORT reaches the tool as --port, a port in
use is refused in one line before anything is created, and without it a free port is chosen.
PostgreSQL is not started here (tests/test_metastore.py starts one)."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from retry_safe import postgres

REPOSITORY = Path(__file__).resolve().parents[2]


def make_pg(*variables: str, target: str = "pg", tool: str = "retry_safe.postgres") -> list[str]:
    """The command `make pg` (or another target starting a tool) runs (make -n prints it, runs
    nothing), after the interpreter; a parent make's flags (make check) are not passed on."""
    done = subprocess.run(
        ["make", "-n", target, *variables],
        cwd=REPOSITORY,
        env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    (command,) = [line.split() for line in done.stdout.splitlines() if tool in line]
    return command[1:]


def test_pg_port_reaches_the_tool_and_its_default_is_a_free_port():
    folder = str(REPOSITORY / ".pg")
    assert make_pg("PG_PORT=5433") == [
        "-m",
        "retry_safe.postgres",
        "start",
        folder,
        "--port",
        "5433",
    ]
    assert make_pg() == ["-m", "retry_safe.postgres", "start", folder]
    assert postgres.parser().parse_args(["start", folder, "--port", "5433"]).port == 5433
    assert postgres.parser().parse_args(["start", folder]).port is None


@pytest.mark.parametrize("port", ["0", "65536", "pg"])
def test_a_port_that_is_not_a_port_number_is_refused(capsys, port):
    with pytest.raises(SystemExit) as exited:
        postgres.main(["start", "unused", "--port", port])
    assert exited.value.code == 2
    assert f"argument --port: '{port}' is not a port number (1 to 65535)" in capsys.readouterr().err


def test_a_port_in_use_is_refused_in_one_line_before_anything_is_created(capsys, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert postgres.main(["start", str(tmp_path / "pg"), "--port", str(port)]) == 2
    assert capsys.readouterr().err == (
        f"make pg: port {port} on 127.0.0.1 is in use: stop what listens there, choose another "
        "(make pg PG_PORT=N, or --port N), or leave it out for a free port.\n"
    )
    assert not (tmp_path / "pg").exists()
