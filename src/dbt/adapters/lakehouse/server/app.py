"""One lakehouse server: dbt, analysts and BI tools on the same tables at the same time.

    lakehouse serve [--project-dir D] [--profiles-dir P] [--target T]
                    [--bind ADDRESS] [--connect-port N] [--thrift-port N]

One Spark application over the warehouse and metastore of a dbt project's session target (its
profile, rendered by dbt: profile.py), serving

    Spark Connect  sc://localhost:15002       dbt (targets server, server_iceberg: writes),
                                              Python and notebook clients
    Thrift JDBC    jdbc:hive2://127.0.0.1:10000  beeline, BI tools, any JDBC/ODBC client:
                                              read-only (a write is refused before it runs)

Both bind to 127.0.0.1 unless told otherwise; any other address needs LAKEHOUSE_SERVER_TOKEN
(Spark Connect's pre-shared token) and LAKEHOUSE_THRIFT_PASSWORD (the JDBC password), or the
server refuses to start. One server per warehouse: a second one is refused with the first
one's addresses. Ctrl-C or SIGTERM stops both endpoints and the JVM, and
releases the metastore; the JVM also exits on its own if this process is killed (pyspark
gives it a pipe as standard input and it exits when that closes).
"""

from __future__ import annotations

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

from dbt.adapters.lakehouse.java_classes import CompileError, server_jar
from dbt.adapters.lakehouse.server.profile import ProfileError, ServedTarget, load_target
from dbt.adapters.lakehouse.server.settings import (
    PASSWORD_CLASS,
    ServerOptionError,
    ServerOptions,
    options_from,
    server_settings,
)
from dbt.adapters.lakehouse.session.jars import require_jars
from dbt.adapters.lakehouse.session.java import require_java
from dbt.adapters.lakehouse.session.jvm import start_session
from dbt.adapters.lakehouse.session.metastore_lock import metastore_problem
from dbt.adapters.lakehouse.session.settings import lakehouse_home
from dbt.adapters.lakehouse.storage.object_store import store_of

START_TIMEOUT = 120
STATE_FILE = "server.json"
READY = "Stop with Ctrl-C."  # the banner's last line: the server serves


class Refused(Exception):
    """The server does not start; the message says why and what to do."""


def served_home(served: ServedTarget) -> Path:
    """The folder of the served warehouse (its lock and state file live there): with the
    defaults, $LAKEHOUSE_HOME/<format>; for a warehouse on object storage, which has no local
    folder, $LAKEHOUSE_HOME/<format> too (one server per machine and warehouse; servers on
    other machines are as safe as any other writer, through the commit protocols)."""
    warehouse = served.settings["spark.sql.warehouse.dir"]
    if store_of(warehouse) is not None:
        home = lakehouse_home() / served.table_format
    else:
        home = Path(warehouse).expanduser().resolve().parent
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
    return f"A lakehouse server already serves {home}{where}. One server per warehouse."


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


def start(options: ServerOptions, served: ServedTarget) -> tuple[Any, Any]:
    """The SparkSession (with Spark Connect) and the started Thrift server."""
    from pyspark.sql import SparkSession

    settings = server_settings(options, served.settings, server_jar())
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
    # what Spark Connect prints when a client leaves (its stack traces), and only that
    spark._jvm.lakehouse.server.ClientDepartures.quiet()
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


def urls(options: ServerOptions, schema: str) -> dict[str, str]:
    host = client_host(options.bind)
    jdbc_host = url_host(probe_host(options.bind))
    token = "/;token=$LAKEHOUSE_SERVER_TOKEN" if options.token else ""
    return {
        "connect_url": f"sc://{host}:{options.connect_port}{token}",
        "jdbc_url": f"jdbc:hive2://{jdbc_host}:{options.thrift_port}/{schema}",
    }


def banner(options: ServerOptions, served: ServedTarget, pid: int) -> str:
    found = urls(options, served.schema)
    token = ", token: \"{{ env_var('LAKEHOUSE_SERVER_TOKEN') }}\"" if options.token else ""
    target = (
        f"{{type: lakehouse, method: connect, table_format: {options.table_format}, "
        f"host: {client_host(options.bind)}, port: {options.connect_port}{token}, "
        f"schema: {served.schema}}}"
    )
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
            f"Lakehouse server ({options.table_format}, pid {pid}) on the warehouse "
            f"{served.settings['spark.sql.warehouse.dir']} (target {served.target} of profile "
            f"{served.profile})",
            f"  dbt (writes):      a target {target}",
            f"  Spark Connect:     {found['connect_url']}",
            "  Python:            from pyspark.sql import SparkSession; spark = "
            f'SparkSession.builder.remote("{found["connect_url"]}").getOrCreate()',
            f"  JDBC (read-only):  {found['jdbc_url']}",
            f"  beeline:           {beeline} -u {found['jdbc_url']}{login}",
            *remote,
            READY,
        ]
    )


def write_state(home: Path, options: ServerOptions, schema: str) -> None:
    state = {"pid": os.getpid(), "format": options.table_format, "bind": options.bind}
    state |= {"connect_port": options.connect_port, "thrift_port": options.thrift_port}
    (home / STATE_FILE).write_text(json.dumps(state | urls(options, schema), indent=2) + "\n")


class JvmDied(Exception):
    """The server's JVM exited while serving: the message says what that means for clients."""


def jvm_process() -> Any:
    """The JVM pyspark started for this process (None if pyspark did not start one)."""
    from pyspark import SparkContext

    return getattr(SparkContext._gateway, "proc", None)


def jvm_died(exit_status: int, served: ServedTarget) -> str:
    how = f"killed by signal {-exit_status}" if exit_status < 0 else f"exit status {exit_status}"
    return (
        f"the server's JVM exited while serving ({how}). The tables hold only committed "
        "runs: a dbt run writing through the server fails and is safe to rerun once a server "
        f"serves again (`lakehouse serve --target {served.target}`)."
    )


def wait_for_stop(jvm: Any, served: ServedTarget) -> None:
    """Until Ctrl-C or SIGTERM; JvmDied when the JVM exits first (a kill, out of memory), so
    that this process ends too and its lock never blocks the next server."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    while not stop.wait(1):
        if jvm is not None and jvm.poll() is not None:
            raise JvmDied(jvm_died(jvm.returncode, served))


def stop_jvm(spark: Any) -> None:
    """Stop Spark (and with it the Spark Connect plugin), then wait for the JVM to exit, so
    the metastore is released when this process ends and no JVM outlives it."""
    proc = jvm_process()
    if proc is not None and proc.poll() is not None:
        return  # the JVM is gone: nothing to stop, nothing to wait for
    spark.stop()
    if proc is not None:
        proc.stdin.close()  # pyspark's JVM exits when its standard input closes
        wait_or_kill(proc, timeout=60)


def serve(options: ServerOptions, served: ServedTarget) -> None:
    home = served_home(served)
    lock = hold_lock(home)
    try:
        spark, thrift = start(options, served)
        jvm = jvm_process()
        try:
            write_state(home, options, served.schema)
            print(banner(options, served, os.getpid()), flush=True)
            wait_for_stop(jvm, served)
            print("Stopping the lakehouse server.", flush=True)
        finally:
            (home / STATE_FILE).unlink(missing_ok=True)
            if jvm is None or jvm.poll() is None:
                thrift.stop()
            stop_jvm(spark)
    finally:
        lock.close()


def run(
    project_dir: str | None,
    profiles_dir: str | None,
    target: str | None,
    bind: str | None = None,
    connect_port: int | None = None,
    thrift_port: int | None = None,
) -> int:
    """`lakehouse serve`: 0 after a clean stop, 2 (one line on standard error) when the server
    cannot start, 3 (one line) when its JVM dies while serving, 130 after Ctrl-C while
    starting."""
    try:
        served = load_target(project_dir, profiles_dir, target)
        options = options_from(served.table_format, bind, connect_port, thrift_port)
        serve(options, served)
    except (ProfileError, ServerOptionError, Refused, CompileError, DbtRuntimeError) as problem:
        print(f"lakehouse serve: {problem}", file=sys.stderr)
        return 2
    except JvmDied as problem:
        print(f"lakehouse serve: {problem}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:  # Ctrl-C while starting: everything started is stopped
        return 130
    return 0


def wait_or_kill(process: Any, timeout: float) -> None:
    """Wait for the process to exit; kill it if it has not within timeout seconds."""
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
