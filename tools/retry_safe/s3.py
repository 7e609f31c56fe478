"""A local S3-compatible server for the warehouse, for development and the tests (`make s3`).

S3Proxy (Apache 2.0, a server teams run in production in front of a file system or a cloud
store) from Maven Central, as one pinned jar checked against its SHA-256, serving a folder of
its own over the S3 API on 127.0.0.1 and a free port (or the one --port names), with AWS
Signature V4 and a random key pair. A bucket is a folder of that folder: `lakehouse` is made at
start.

    python -m retry_safe.s3 start <folder> [--port N]   prints the environment to export
    python -m retry_safe.s3 stop <folder>

The environment printed is what a team sets for AWS S3 or any other store (the adapter reads
nothing else): AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, and
LAKEHOUSE_WAREHOUSE=s3a://lakehouse/warehouse.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from retry_safe import local_server
from retry_safe.cluster import LOOPBACK, free_port
from retry_safe.local_server import require_free, settings_file

VERSION = "4.1.0"
JAR = f"s3proxy-{VERSION}-jar-with-dependencies.jar"
URL = f"https://repo1.maven.org/maven2/org/gaul/s3proxy/{VERSION}/{JAR}"
SHA256 = "a4d025969aaf796616ed4b1e2491d87d455ce84bb28cb9db086b2e6aaa68b48d"
BUCKET = "lakehouse"
REGION = "us-east-1"
START_TIMEOUT = 60.0


def jar_path() -> Path:
    """Where the server's jar is kept: beside the project's other jars ($LAKEHOUSE_JARS_DIR,
    `make` sets .jars), under tools/."""
    from dbt.adapters.lakehouse.session.jars import jars_root

    return jars_root() / "tools" / JAR


def ensure_jar() -> Path:
    """The pinned jar, downloaded once and checked against its SHA-256."""
    jar = jar_path()
    if jar.is_file():
        return jar
    jar.parent.mkdir(parents=True, exist_ok=True)
    partial = jar.with_suffix(".part")
    with urllib.request.urlopen(URL, timeout=300) as response, partial.open("wb") as out:
        digest = hashlib.sha256()
        while chunk := response.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != SHA256:
        partial.unlink()
        raise RuntimeError(f"{URL} does not match its pinned SHA-256; nothing was installed")
    partial.replace(jar)
    return jar


def environment(port: int, identity: str, credential: str) -> dict[str, str]:
    return {
        "AWS_ENDPOINT_URL": f"http://{LOOPBACK}:{port}",
        "AWS_ACCESS_KEY_ID": identity,
        "AWS_SECRET_ACCESS_KEY": credential,
        "AWS_REGION": REGION,
        "LAKEHOUSE_WAREHOUSE": f"s3a://{BUCKET}/warehouse",
    }


def _listening(port: int) -> bool:
    try:
        urllib.request.urlopen(f"http://{LOOPBACK}:{port}/", timeout=2)
    except urllib.error.HTTPError:
        return True  # an S3 error answer (403 without a signature): it serves
    except OSError:
        return False
    return True


def start(folder: Path, port: int | None = None) -> dict[str, str]:
    """A new server for the folder (its objects under folder/data), on port (default: a free
    one); the environment to export."""
    folder = folder.resolve()
    if (folder / "pid").exists():
        raise RuntimeError(f"{folder} already has an S3 server: stop it, or remove the folder")
    if port is not None:
        require_free(port, "make s3 S3_PORT=N")
    jar = ensure_jar()
    (folder / "data" / BUCKET).mkdir(parents=True, exist_ok=True)
    port = free_port() if port is None else port
    identity, credential = secrets.token_hex(10), secrets.token_urlsafe(24)
    properties = folder / "s3proxy.properties"
    properties.write_text(
        f"s3proxy.endpoint=http://{LOOPBACK}:{port}\n"
        "s3proxy.authorization=aws-v2-or-v4\n"
        f"s3proxy.identity={identity}\n"
        f"s3proxy.credential={credential}\n"
        "jclouds.provider=filesystem-nio2\n"
        f"jclouds.filesystem.basedir={folder / 'data'}\n"
    )
    properties.chmod(0o600)
    with (folder / "server.log").open("ab") as log:
        process = subprocess.Popen(
            ["java", "-XX:+UseSerialGC", "-jar", str(jar), "--properties", str(properties)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    (folder / "pid").write_text(str(process.pid))
    deadline = time.monotonic() + START_TIMEOUT
    while not _listening(port):
        if process.poll() is not None or time.monotonic() > deadline:
            stop(folder)
            raise RuntimeError(f"S3Proxy did not start: see {folder / 'server.log'}")
        time.sleep(0.2)
    exported = environment(port, identity, credential)
    settings_file(folder).write_text(
        "".join(f"export {key}={value}\n" for key, value in exported.items())
    )
    settings_file(folder).chmod(0o600)
    return exported


def stop(folder: Path) -> None:
    """Stops the folder's server, if it runs, and waits for it."""
    pid_file = folder.resolve() / "pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text())
    try:
        os.killpg(pid, signal.SIGTERM)
        for _ in range(100):
            if _ended(pid):
                break
            time.sleep(0.1)
        else:
            os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    pid_file.unlink()


def _ended(pid: int) -> bool:
    """Whether the process ended (reaped here when it is this process's child)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == pid
    except ChildProcessError:  # another process's child (`make s3` then `make s3-stop`)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


@contextmanager
def local_s3(folder: Path) -> Iterator[dict[str, str]]:
    """An S3-compatible server while the block runs; stopped after it."""
    try:
        yield start(folder)
    finally:
        stop(folder)


def parser() -> argparse.ArgumentParser:
    return local_server.parser("retry_safe.s3", __doc__, "the server's folder (make s3: .s3)")


def main(argv: list[str]) -> int:
    return local_server.main(parser().parse_args(argv), start, stop, "make s3")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
