"""`lakehouse ... | head`: a command whose output's reader has left ends quietly with exit status
141, as a Unix tool ended by SIGPIPE (dbt/adapters/lakehouse_command.py). The installed
`lakehouse` command in a process of its own, its standard output a real pipe whose reading end
is already closed; commands that need no JVM and no network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from dbt.adapters.lakehouse.session import jars

LAKEHOUSE = str(Path(sys.executable).with_name("lakehouse"))


def complete_delta_folder(root: Path) -> None:
    """A jars root whose delta folder `lakehouse jars` finds complete (no download): each
    pinned jar at its pinned size (sparse), and the manifest a download writes."""
    folder = root / "delta"
    folder.mkdir(parents=True)
    files = {}
    for jar in jars.pinned()["delta"]:
        with (folder / jar.file_name).open("wb") as out:
            out.truncate(jar.size)
        files[jar.file_name] = {
            "coordinate": jar.coordinate,
            "size": jar.size,
            "sha256": jar.sha256,
        }
    (folder / jars.MANIFEST).write_text(json.dumps({"files": files}))


def into_closed_pipe(*args: str, **env: str) -> subprocess.CompletedProcess:
    reading, writing = os.pipe()
    os.close(reading)  # the reader left before the first line
    try:
        return subprocess.run(
            [LAKEHOUSE, *args],
            stdout=writing,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(writing)


def test_a_command_whose_reader_left_exits_141_without_a_traceback(tmp_path):
    complete_delta_folder(tmp_path)
    done = into_closed_pipe("jars", "--format", "delta", LAKEHOUSE_JARS_DIR=str(tmp_path))
    assert (done.returncode, done.stderr) == (141, "")


def test_the_same_command_read_to_the_end_prints_its_line(tmp_path):
    complete_delta_folder(tmp_path)
    done = subprocess.run(
        [LAKEHOUSE, "jars", "--format", "delta"],
        capture_output=True,
        env={**os.environ, "LAKEHOUSE_JARS_DIR": str(tmp_path)},
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"delta jars complete in {tmp_path} (nothing to download)\n",
        "",
    )
