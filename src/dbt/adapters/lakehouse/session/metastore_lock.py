"""Fail in one line, before Spark starts, when another process has the embedded metastore open.

An embedded Derby database admits one JVM. Derby takes an exclusive lock on the file
`dbex.lck` in the database folder when it boots it (java.nio `FileChannel.tryLock`, which on
Linux and macOS is a POSIX record lock, `fcntl`) and keeps it until that JVM shuts the database
down or exits; the OS drops it when the process dies, even by SIGKILL. A second JVM's tryLock
fails and Derby raises XSDB6. Hive's metastore client retries that ten times, and Spark logs
every attempt with its stack traces: about 22,000 lines on standard error before dbt shows
"Unable to instantiate ...SessionHiveMetaStoreClient".

So before starting a JVM, the adapter asks the OS whether a process holds that lock
(`F_GETLK`: a question only, it takes no lock, so it cannot disturb Derby) and, if one does,
stops with one line naming the database, the LAKEHOUSE_HOME, the holder and what to do. When
the holder is a lakehouse server (`lakehouse serve`: its JVM or its own process, by command
line from /proc; else the server's lock file beside the database is held), what to do is to run
dbt through that server.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Mapping
from pathlib import Path

from dbt_common.exceptions import DbtRuntimeError

URL_SETTING = "spark.hadoop.javax.jdo.option.ConnectionURL"
HIVE_DEFAULT_URL = "jdbc:derby:;databaseName=metastore_db;create=true"  # Hive's own default
LOCK_FILE = "dbex.lck"
# struct flock, as F_GETLK reads and writes it
FLOCK_LAYOUTS = {"linux": ("hhqqi", (0, 1, 4)), "darwin": ("qqihh", (3, 4, 2))}
FIX = (
    "An embedded Derby metastore admits one process at a time: wait until that one ends, "
    "set LAKEHOUSE_HOME to another folder, serve it to everyone with `lakehouse serve`, or "
    "share a PostgreSQL metastore (LAKEHOUSE_METASTORE_URL, _USER and _PASSWORD, then "
    "`lakehouse metastore init` once)."
)
SERVER_FIX = (
    "A lakehouse server holds this warehouse: while it serves, run dbt through it, with a "
    "target of method: connect pointing at it (e.g. --target server), or stop the server "
    "(Ctrl-C in its terminal) to run this target."
)
SERVER_LOCK = "server.lock"  # the file a lakehouse server holds beside its database (server/app.py)


def derby_database(parameters: Mapping[str, str]) -> Path | None:
    """The folder of the embedded Derby database the session's metastore opens, or None when
    the metastore is not an embedded Derby database on disk (a server, an in-memory one)."""
    url = str(parameters.get(URL_SETTING) or HIVE_DEFAULT_URL)
    if not url.startswith("jdbc:derby:") or url.startswith("jdbc:derby://"):
        return None
    name, *attributes = url.removeprefix("jdbc:derby:").split(";")
    for attribute in attributes:
        key, _, value = attribute.partition("=")
        if key.strip() == "databaseName":
            name = value
    name = name.removeprefix("directory:")
    if not name or name.split(":")[0] in {"memory", "classpath", "jar"}:
        return None
    # A relative name is relative to the directory the JVM starts in, this process's (seen with
    # the profiles' default LAKEHOUSE_HOME, .lakehouse, even with derby.system.home set).
    return Path(name).resolve()


def lock_holder(database: Path) -> int | None:
    """The id of the process holding Derby's lock on the database, 0 when a process holds it
    but the OS does not say which, None when no process holds it (or it cannot be told)."""
    layout = FLOCK_LAYOUTS.get(sys.platform)
    try:
        import fcntl
    except ImportError:  # Windows: Derby uses other locks there
        return None
    try:
        descriptor = os.open(database / LOCK_FILE, os.O_RDONLY)
    except OSError:  # no lock file: the database was never booted, or is not there yet
        return None
    try:
        if layout is None:
            return None
        fields, (type_at, whence_at, pid_at) = layout
        query = [0] * len(fields)
        query[type_at], query[whence_at] = fcntl.F_WRLCK, os.SEEK_SET
        answer = struct.unpack(
            fields, fcntl.fcntl(descriptor, fcntl.F_GETLK, struct.pack(fields, *query))
        )
        if answer[type_at] == fcntl.F_UNLCK:
            return None
        return max(answer[pid_at], 0)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _proc(pid: int, name: str) -> str:
    try:
        return Path(f"/proc/{pid}/{name}").read_text(errors="replace")
    except OSError:
        return ""


def command_line(pid: int, limit: int = 120) -> str:
    """The process's command line, programs by their file name, shortened to limit characters."""
    words = [word for word in _proc(pid, "cmdline").split("\0") if word]
    words[:2] = [Path(word).name if os.sep in word else word for word in words[:2]]
    text = " ".join(words)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parent_of(pid: int) -> int:
    """The id of the process that started pid (0 when not known)."""
    stat = _proc(pid, "stat")
    return int(stat.rpartition(")")[2].split()[1]) if ")" in stat else 0


def describe_process(pid: int) -> str:
    """'process 123 (java, started by process 100: python -m pytest ...)', as far as known."""
    if pid <= 0:
        return "another process"
    name = _proc(pid, "comm").strip()
    parent = parent_of(pid)
    if not name:
        return f"process {pid}"
    if parent > 1:
        return f"process {pid} ({name}, started by process {parent}: {command_line(parent)})"
    return f"process {pid} ({command_line(pid)})"


def is_lakehouse_server(pid: int) -> bool:
    """The process, or the one that started it (the server's JVM), runs `lakehouse serve`."""
    for process in (pid, parent_of(pid)):
        words = [Path(word).name for word in _proc(process, "cmdline").split("\0") if word]
        if any(pair == ("lakehouse", "serve") for pair in zip(words, words[1:], strict=False)):
            return True
    return False


def server_lock_held(database: Path) -> bool:
    """A process holds the lakehouse server's lock beside the database (where /proc does not
    say who the holder is). Asked by trying a shared lock, released at once."""
    try:
        import fcntl

        descriptor = os.open(database.parent / SERVER_LOCK, os.O_RDONLY)
    except (ImportError, OSError):  # no server ever served this folder
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(descriptor)  # closing releases a lock taken
    return False


def metastore_problem(parameters: Mapping[str, str]) -> str | None:
    """One line saying who holds the embedded metastore and what to do; None when it is free."""
    database = derby_database(parameters)
    if database is None:
        return None
    holder = lock_holder(database)
    if holder is None:
        return None
    home = Path(os.environ.get("LAKEHOUSE_HOME") or ".lakehouse").resolve()
    server = (holder > 0 and is_lakehouse_server(holder)) or server_lock_held(database)
    return (
        f"The embedded metastore {database} (LAKEHOUSE_HOME={home}) is in use by "
        f"{describe_process(holder)}. {SERVER_FIX if server else FIX}"
    )


def require_free_metastore(parameters: Mapping[str, str]) -> None:
    problem = metastore_problem(parameters)
    if problem:
        raise DbtRuntimeError(problem)
