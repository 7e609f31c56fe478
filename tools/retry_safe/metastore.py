"""A metastore several Spark processes can share: Derby's network server, on this machine.

The embedded Derby metastore admits one JVM at a time. Two schedulers' tasks writing the same
tables at once need a metastore server; in production that is a Hive metastore on PostgreSQL
or MySQL. Derby's network server is the same database engine Spark already uses, over JDBC, so
the profiles only change their connection URL and driver:

    LAKEHOUSE_METASTORE_URL        jdbc:derby://127.0.0.1:1527/<folder>/metastore_db;create=true
    LAKEHOUSE_METASTORE_DRIVER     org.apache.derby.jdbc.ClientDriver
    LAKEHOUSE_METASTORE_CLASSPATH  the derbyclient jar (put on the Spark driver's classpath)

`derby_network_server` starts one (the server jars come from Maven Central into the local
Maven repository), creates the metastore's lock tables the way Hive's schematool would (Iceberg's
Hive commit lock, LAKEHOUSE_HIVE_LOCKS=true, needs them) and yields those variables.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyspark

from dbt.adapters.lakehouse.jars import Jar, download
from dbt.adapters.lakehouse.java import java_executable

DERBY_VERSION = "10.16.1.1"  # the version pyspark bundles (jars/derby-*.jar)


def maven_jar(artifact: str, version: str = DERBY_VERSION) -> Path:
    """org.apache.derby:<artifact>:<version>, downloaded once (verified) into ~/.m2/repository."""
    folder = Path.home() / ".m2" / "repository" / "org" / "apache" / "derby" / artifact / version
    jar = Jar("org.apache.derby", artifact, version)
    if not (folder / jar.file_name).is_file():
        folder.mkdir(parents=True, exist_ok=True)
        download(jar, folder)
    return folder / jar.file_name


def bundled_jar(name: str) -> Path:
    return Path(pyspark.__file__).parent / "jars" / f"{name}-{DERBY_VERSION}.jar"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the Derby network server exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"the Derby network server did not listen on port {port}")


def create_lock_tables(java: str, settings: dict[str, str]) -> None:
    """Run java/HiveLockTables.java (Hive's TxnDbUtil.prepDb) against the new metastore."""
    classpath = os.pathsep.join(
        [
            str(Path(pyspark.__file__).parent / "jars" / "*"),
            settings["LAKEHOUSE_METASTORE_CLASSPATH"],
        ]
    )
    source = Path(__file__).parent / "java" / "HiveLockTables.java"
    url, driver = settings["LAKEHOUSE_METASTORE_URL"], settings["LAKEHOUSE_METASTORE_DRIVER"]
    done = subprocess.run(
        [java, "-cp", classpath, str(source), url, driver],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"creating the metastore lock tables failed:\n{done.stderr[-3000:]}")


@contextmanager
def derby_network_server(home: Path) -> Iterator[dict[str, str]]:
    """A Derby network server on 127.0.0.1 keeping its databases under home."""
    home.mkdir(parents=True, exist_ok=True)
    client = maven_jar("derbyclient")
    classpath = [
        bundled_jar("derby"),
        bundled_jar("derbyshared"),
        bundled_jar("derbytools"),
        maven_jar("derbynet"),
    ]
    port = free_port()
    java = java_executable() or "java"
    server = subprocess.Popen(
        [
            java,
            f"-Dderby.system.home={home}",
            "-cp",
            os.pathsep.join(str(jar) for jar in classpath),
            "org.apache.derby.drda.NetworkServerControl",
            "start",
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-noSecurityManager",
        ],
        stdout=(home / "derby-server.log").open("w"),
        stderr=subprocess.STDOUT,
    )
    settings = {
        "LAKEHOUSE_METASTORE_URL": f"jdbc:derby://127.0.0.1:{port}/{home / 'metastore_db'};create=true",
        "LAKEHOUSE_METASTORE_DRIVER": "org.apache.derby.jdbc.ClientDriver",
        "LAKEHOUSE_METASTORE_CLASSPATH": str(client),
    }
    try:
        wait_for_port(port, server)
        create_lock_tables(java, settings)
        yield settings
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
