"""A local PostgreSQL server for the metastore, for development and the tests (`make pg`).

Debian's `postgresql` package gives the programs (initdb, pg_ctl); this makes a cluster in a
folder of its own, on 127.0.0.1 and a free port (or the one --port names, `make pg PG_PORT=N`),
with what a production metastore database looks like:

- a superuser `lakehouse_admin` that owns the database `metastore`;
- the metastore login `lakehouse`, which does not own the database. PostgreSQL 15 grants no
  CREATE on the `public` schema, so the login gets a schema of its own name
  (`create schema lakehouse authorization lakehouse`), which its default search_path
  ("$user", public) finds: the metastore's tables go there.

    python -m retry_safe.postgres start <folder> [--port N]   prints the environment to export
    python -m retry_safe.postgres stop <folder>

A port in use is refused in one line, before anything is created.

Users with their own PostgreSQL set LAKEHOUSE_METASTORE_URL (and _USER, _PASSWORD) and skip
this. PostgreSQL refuses to run as root: as root, the cluster is run as the `postgres` user
the Debian package creates, and the folder is made theirs.
"""

from __future__ import annotations

import argparse
import os
import pwd
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from retry_safe import local_server
from retry_safe.cluster import free_port
from retry_safe.local_server import require_free, settings_file

ADMIN = "lakehouse_admin"
LOGIN = "lakehouse"
DATABASE = "metastore"
SERVICE_USER = "postgres"


def program(name: str) -> str:
    """A PostgreSQL server program: on PATH, else Debian's versioned folder."""
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: p.parent.name)
    for folder in reversed(versions):
        if (folder / name).is_file():
            return str(folder / name)
    raise RuntimeError(
        f"PostgreSQL's {name} was not found: install Debian's postgresql package "
        "(apt-get install postgresql), or point LAKEHOUSE_METASTORE_URL at a running server."
    )


def _as_owner(command: list[str], folder: Path) -> list[str]:
    """The command, run as the cluster's owner when this process is root."""
    if os.geteuid() != 0:
        return command
    owner = pwd.getpwnam(SERVICE_USER)
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, owner.pw_uid, owner.pw_gid)
    return ["runuser", "-u", SERVICE_USER, "--", *command]


def _run(command: list[str], folder: Path, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(
        _as_owner(command, folder), capture_output=True, text=True, check=False, **kwargs
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:2])} failed:\n{done.stdout}{done.stderr}")
    return done


def environment(port: int, password: str) -> dict[str, str]:
    return {
        "LAKEHOUSE_METASTORE_URL": f"jdbc:postgresql://127.0.0.1:{port}/{DATABASE}",
        "LAKEHOUSE_METASTORE_USER": LOGIN,
        "LAKEHOUSE_METASTORE_PASSWORD": password,
    }


def create_database(folder: Path, name: str) -> None:
    """A database the admin owns, with a schema of the login's own for the metastore's tables
    (the module docstring)."""
    psql(folder, "postgres", f"create database {name}")
    psql(folder, name, f"create schema {LOGIN} authorization {LOGIN}")


def on_database(exported: dict[str, str], name: str) -> dict[str, str]:
    """The exported environment (start's), pointing at the database name instead."""
    url = exported["LAKEHOUSE_METASTORE_URL"].rsplit("/", 1)[0] + f"/{name}"
    return {**exported, "LAKEHOUSE_METASTORE_URL": url}


def port_of(folder: Path) -> int:
    """The port of the cluster in folder."""
    return int((folder / "port").read_text())


def psql(folder: Path, database: str, sql: str) -> str:
    """Run sql in a database of the cluster in folder, as its superuser; the output."""
    done = subprocess.run(
        [
            "psql",
            "-h",
            "127.0.0.1",
            "-p",
            str(port_of(folder)),
            "-U",
            ADMIN,
            "-d",
            database,
            "-v",
            "ON_ERROR_STOP=1",
            "-qAt",
            "-c",
            sql,
        ],  # fmt: skip
        env={**os.environ, "PGPASSWORD": (folder / "admin-password").read_text()},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"psql failed: {done.stderr}")
    return done.stdout


def start(
    folder: Path, port: int | None = None, settings: dict[str, str] | None = None
) -> dict[str, str]:
    """A new cluster in folder (which must not hold one), started on port (default: a free
    one) with the server settings given (`max_connections`, ...); the metastore's
    environment."""
    folder = folder.resolve()
    if (folder / "data").exists():
        raise RuntimeError(f"{folder} already holds a PostgreSQL cluster: stop it, or remove it")
    if port is not None:
        require_free(port)
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    admin_password, password = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    (folder / "admin-password").write_text(admin_password)
    _run(
        [
            program("initdb"),
            "-D",
            str(folder / "data"),
            "-U",
            ADMIN,
            "--pwfile",
            str(folder / "admin-password"),
            "--auth=scram-sha-256",
            "-E",
            "UTF8",
            "--no-instructions",
        ],  # fmt: skip
        folder,
    )
    port = free_port() if port is None else port
    (folder / "port").write_text(str(port))
    _run(
        [
            program("pg_ctl"),
            "-D",
            str(folder / "data"),
            "-l",
            str(folder / "server.log"),
            "-w",
            "-o",
            f"-p {port} -k {folder} -c listen_addresses=127.0.0.1"
            + "".join(f" -c {key}={value}" for key, value in (settings or {}).items()),
            "start",
        ],  # fmt: skip
        folder,
    )
    psql(folder, "postgres", f"create role {LOGIN} login password '{password}'")
    create_database(folder, DATABASE)
    exported = environment(port, password)
    settings_file(folder).write_text(
        "".join(f"export {key}={value}\n" for key, value in exported.items())
    )
    settings_file(folder).chmod(0o600)
    return exported


def stop(folder: Path) -> None:
    folder = folder.resolve()
    if (folder / "data" / "postmaster.pid").exists():
        _run([program("pg_ctl"), "-D", str(folder / "data"), "-m", "fast", "-w", "stop"], folder)


@contextmanager
def local_postgres(folder: Path) -> Iterator[dict[str, str]]:
    """A PostgreSQL server for the metastore while the block runs; stopped after it."""
    try:
        yield start(folder)
    finally:
        stop(folder)


def parser() -> argparse.ArgumentParser:
    return local_server.parser(
        "retry_safe.postgres", __doc__, "the cluster's folder (make pg: .pg)"
    )


def main(argv: list[str]) -> int:
    return local_server.main(parser().parse_args(argv), start, stop, "make pg")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
