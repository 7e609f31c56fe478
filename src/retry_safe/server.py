"""One lakehouse server: dbt, analysts and BI tools on the same tables at the same time.

    python -m retry_safe.server delta|iceberg [--bind ADDRESS] [--connect-port N] [--thrift-port N]
    (make serve / make serve-iceberg)

One Spark application over the embedded target's own warehouse and metastore (local or
local_iceberg, LAKEHOUSE_HOME), serving

    Spark Connect  sc://localhost:15002       dbt (targets server, server_iceberg: writes),
                                              Python and notebook clients
    Thrift JDBC    jdbc:hive2://127.0.0.1:10000  beeline, BI tools, any JDBC/ODBC client:
                                              read-only (a write is refused before it runs)

Both bind to 127.0.0.1 unless told otherwise; any other address needs LAKEHOUSE_SERVER_TOKEN
(Spark Connect's pre-shared token) and LAKEHOUSE_THRIFT_PASSWORD (the JDBC password), or the
server refuses to start. One server per LAKEHOUSE_HOME and format: a second one is refused
with the first one's addresses. Ctrl-C or SIGTERM stops both endpoints and the JVM, and
releases the metastore; the JVM also exits on its own if this process is killed (pyspark
gives it a pipe as standard input and it exits when that closes).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.jars import require_jars
from dbt.adapters.lakehouse.java import require_java
from dbt.adapters.lakehouse.jvm import start_session
from dbt.adapters.lakehouse.metastore_lock import metastore_problem
from retry_safe.project import PROJECT_DIR, SERVER_TARGETS, configure_environment
from retry_safe.server_classes import CompileError, ensure_compiled
from retry_safe.server_settings import (
    PASSWORD_CLASS,
    ServerOptionError,
    ServerOptions,
    options_from,
    server_settings,
)
from retry_safe.target_settings import session_settings

START_TIMEOUT = 120
STATE_FILE = "server.json"
READY = "Stop with Ctrl-C."  # the banner's last line: the server serves


class Refused(Exception):
    """The server does not start; the message says why and what to do."""


def format_home(table_format: str) -> Path:
    home = Path(os.environ["LAKEHOUSE_HOME"]) / table_format
    home.mkdir(parents=True, exist_ok=True)
    return home


def hold_lock(home: Path) -> IO[str]:
    """This process's lock on the format's home; Refused naming the running server if held.

    A state file found once the lock is held is a killed server's: removed at once, so it can
    never name a process that is not the server."""
    handle = open(home / "server.lock", "a+")  # noqa: SIM115 (held until the process ends)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise Refused(already_running(home)) from None
    (home / STATE_FILE).unlink(missing_ok=True)
    return handle


def already_running(home: Path) -> str:
    try:
        state = json.loads((home / STATE_FILE).read_text())
    except (OSError, ValueError):
        state = {}
    where = (
        f": connect to {state['connect_url']} or {state['jdbc_url']}, or stop it "
        f"(Ctrl-C in its terminal, or kill {state['pid']})"
        if state
        else " (still starting)"
    )
    return (
        f"A lakehouse server already serves {home} (LAKEHOUSE_HOME="
        f"{home.parent}){where}. One server per LAKEHOUSE_HOME and format."
    )


def port_in_use(bind: str, port: int) -> bool:
    try:
        socket.create_connection((probe_host(bind), port), timeout=1).close()
    except OSError:
        return False
    return True


def probe_host(bind: str) -> str:
    """An address of this machine where the server, bound to bind, answers."""
    return {"0.0.0.0": "127.0.0.1", "::": "127.0.0.1", "localhost": "127.0.0.1"}.get(bind, bind)


def url_host(address: str) -> str:
    """address as the host part of a URL (an IPv6 address in brackets)."""
    return f"[{address}]" if ":" in address else address


def client_host(bind: str) -> str:
    """The host a client on this machine puts in a URL for the server bound to bind.

    Spark Connect's Python client sends a token in clear only to the literal host `localhost`
    (anything else gets TLS, which open-source Spark Connect does not serve)."""
    if bind in ("0.0.0.0", "::", "127.0.0.1", "::1", "localhost"):
        return "localhost"
    return url_host(bind)


def require_free_ports(options: ServerOptions) -> None:
    for name, port in (("Spark Connect", options.connect_port), ("JDBC", options.thrift_port)):
        if port_in_use(options.bind, port):
            raise Refused(
                f"Port {port} ({name}) on {options.bind} is already in use. Stop what uses it, "
                f"or give another port (--connect-port / --thrift-port)."
            )


def prepare_environment(options: ServerOptions) -> None:
    """The JVM's environment: no Hive variable overriding the bind settings, the venv's Python
    for Python UDFs sent over Connect, the token as an environment variable (not a Spark
    setting, which Spark would list in its configuration dumps)."""
    for name in ("HIVE_SERVER2_THRIFT_PORT", "HIVE_SERVER2_THRIFT_BIND_HOST"):
        os.environ.pop(name, None)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    if options.token:
        os.environ["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = options.token


def start(options: ServerOptions) -> tuple[Any, Any]:
    """The SparkSession (with Spark Connect) and the started Thrift server."""
    from pyspark.sql import SparkSession

    settings = server_settings(options, session_settings(options.target), ensure_compiled())
    require_java()
    require_jars(settings)
    problem = metastore_problem(settings)
    if problem:
        raise Refused(problem)
    require_free_ports(options)
    prepare_environment(options)
    start_session(settings)
    spark = SparkSession.builder.getOrCreate()
    try:
        return spark, start_endpoints(spark, options)
    except BaseException:  # Ctrl-C included: no JVM outlives a failed start
        stop_jvm(spark)
        raise


def start_endpoints(spark: Any, options: ServerOptions) -> Any:
    """Open the metastore, start HiveServer2 and wait for both ports; the Thrift server."""
    from py4j.protocol import Py4JJavaError

    # Open the metastore now (Spark opens it on first use): the server holds the embedded Derby
    # database from its start, so an embedded run meanwhile is refused, not the server later.
    spark.catalog.listDatabases()
    if options.password:
        system = spark._jvm.java.lang.System
        system.setProperty("hive.server2.custom.authentication.class", PASSWORD_CLASS)
    thrift_server = spark._jvm.org.apache.spark.sql.hive.thriftserver.HiveThriftServer2
    try:
        thrift = thrift_server.startWithSparkSession(spark._jsparkSession, False)
    except Py4JJavaError as error:
        raise Refused(f"HiveServer2 did not start: {error.java_exception}") from None
    wait_for_ports(options)
    return thrift


def wait_for_ports(options: ServerOptions) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    for port in (options.connect_port, options.thrift_port):
        while not port_in_use(options.bind, port):
            if time.monotonic() > deadline:
                raise Refused(f"The server did not listen on port {port} within {START_TIMEOUT}s.")
            time.sleep(0.2)


def urls(options: ServerOptions) -> dict[str, str]:
    host = client_host(options.bind)
    jdbc_host = url_host(probe_host(options.bind))
    schema = os.environ.get("LAKEHOUSE_SCHEMA", "analytics")
    token = "/;token=$LAKEHOUSE_SERVER_TOKEN" if options.token else ""
    return {
        "connect_url": f"sc://{host}:{options.connect_port}{token}",
        "jdbc_url": f"jdbc:hive2://{jdbc_host}:{options.thrift_port}/{schema}",
    }


def banner(options: ServerOptions, pid: int) -> str:
    found = urls(options)
    target = SERVER_TARGETS[options.table_format]
    login = ' -n analyst -p "$LAKEHOUSE_THRIFT_PASSWORD"' if options.password else " -n analyst"
    beeline = f"PYSPARK_PYTHON={sys.executable} {Path(sys.executable).with_name('beeline')}"
    remote = (
        []
        if options.loopback
        else [
            f"  From another machine: ssh -L {options.connect_port}:localhost:"
            f"{options.connect_port} <this host>, then sc://localhost:{options.connect_port} "
            "(the Python client sends a token without TLS only to localhost); the JDBC "
            "password travels in clear, use it on a trusted network or through the tunnel too."
        ]
    )
    return "\n".join(
        [
            f"Lakehouse server ({options.table_format}, pid {pid}) on "
            f"LAKEHOUSE_HOME={os.environ['LAKEHOUSE_HOME']}",
            f"  dbt (writes):      DBT_TARGET={target} dbt run --vars '...'",
            f"  Spark Connect:     {found['connect_url']}",
            "  Python:            from pyspark.sql import SparkSession; spark = "
            f'SparkSession.builder.remote("{found["connect_url"]}").getOrCreate()',
            f"  JDBC (read-only):  {found['jdbc_url']}",
            f"  beeline:           {beeline} -u {found['jdbc_url']}{login}",
            *remote,
            READY,
        ]
    )


def write_state(home: Path, options: ServerOptions) -> None:
    state = {"pid": os.getpid(), "format": options.table_format, "bind": options.bind}
    state |= {"connect_port": options.connect_port, "thrift_port": options.thrift_port}
    (home / STATE_FILE).write_text(json.dumps(state | urls(options), indent=2) + "\n")


def wait_for_stop() -> None:
    """Until Ctrl-C or SIGTERM."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    while not stop.wait(1):
        pass


def stop_jvm(spark: Any) -> None:
    """Stop Spark (and with it the Spark Connect plugin), then wait for the JVM to exit, so
    the metastore is released when this process ends and no JVM outlives it."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    spark.stop()
    proc = getattr(gateway, "proc", None)
    if proc is not None:
        proc.stdin.close()  # pyspark's JVM exits when its standard input closes
        wait_or_kill(proc, timeout=60)


def serve(options: ServerOptions) -> None:
    home = format_home(options.table_format)
    lock = hold_lock(home)
    try:
        spark, thrift = start(options)
        try:
            write_state(home, options)
            print(banner(options, os.getpid()), flush=True)
            wait_for_stop()
            print("Stopping the lakehouse server.", flush=True)
        finally:
            (home / STATE_FILE).unlink(missing_ok=True)
            thrift.stop()
            stop_jvm(spark)
    finally:
        lock.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m retry_safe.server", description=__doc__)
    parser.add_argument("table_format", choices=["delta", "iceberg"])
    parser.add_argument("--bind", help="address of both endpoints (default 127.0.0.1)")
    parser.add_argument("--connect-port", type=int, help="Spark Connect port (default 15002)")
    parser.add_argument("--thrift-port", type=int, help="Thrift JDBC port (default 10000)")
    args = parser.parse_args(argv)
    configure_environment()
    try:
        options = options_from(args.table_format, args.bind, args.connect_port, args.thrift_port)
        serve(options)
    except (ServerOptionError, Refused, CompileError, DbtRuntimeError) as problem:
        print(f"lakehouse server: {problem}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C while starting: everything started is stopped
        return 130
    return 0


def spawn(table_format: str, env: dict[str, str], logs: Path, timeout: float = 300) -> Any:
    """A server in a process of its own, once it serves: the Popen. Its output goes to
    logs/server.out and logs/server.err (files: a pipe nobody reads would fill and stall it).
    For tests and benchmarks; `stop` ends it."""
    logs.mkdir(parents=True, exist_ok=True)
    out, err = logs / "server.out", logs / "server.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "retry_safe.server", table_format],
            cwd=PROJECT_DIR,
            env=env,
            stdout=stdout,
            stderr=stderr,
        )
    deadline = time.monotonic() + timeout
    while READY not in out.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process)
            raise RuntimeError(f"the {table_format} server did not start:\n{err.read_text()}")
        time.sleep(0.2)
    return process


def stop(process: Any, timeout: float = 120) -> int:
    """Ctrl-C to a spawned server, then its exit code (killed if it does not stop in time)."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        wait_or_kill(process, timeout)
    return process.returncode


def wait_or_kill(process: Any, timeout: float) -> None:
    """Wait for the process to exit; kill it if it has not within timeout seconds."""
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


if __name__ == "__main__":
    sys.exit(main())
