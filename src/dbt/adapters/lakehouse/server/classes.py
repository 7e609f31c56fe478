"""The lakehouse server's Java classes, in one jar.

The server (one Spark JVM serving Spark Connect and JDBC/Thrift) needs two classes that Spark
and HiveServer2 load by name, so they must be compiled Java, not Python:
`lakehouse.server.ReadOnlyOutsideConnect` (a spark.sql.extensions check rule: only Spark
Connect operations may write, JDBC/Thrift sessions only read) and
`lakehouse.server.PasswordAuthenticator` (the Thrift password check); app.py also calls
`lakehouse.server.ClientDepartures` (quiets what Spark Connect prints when a client leaves).
Their sources are in `java/`. Building the wheel compiles them (setup.py, with `javac` against pyspark's own jars)
into `lakehouse-server.jar` beside this module, so an installed package serves on a machine
with a Java runtime and no JDK. A source checkout installed editable has no built jar: the
server compiles one on its first start into `<jars root>/server/` (jars.py), which needs a
JDK, and recompiles only when a source is newer.

This module imports nothing of dbt at import time: setup.py loads it to build the wheel.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

SOURCES = Path(__file__).parent / "java"
JAR_NAME = "lakehouse-server.jar"
PACKAGED_JAR = Path(__file__).parent / JAR_NAME
JAVA_RELEASE = "17"
MANIFEST = "Manifest-Version: 1.0\nCreated-By: dbt-lakehouse\n"


class CompileError(RuntimeError):
    """The server's classes could not be compiled (no javac, or javac failed)."""


def sources() -> list[Path]:
    found = sorted(SOURCES.glob("*.java"))
    if not found:
        raise CompileError(f"no Java sources in {SOURCES}: reinstall dbt-lakehouse")
    return found


def up_to_date(jar: Path) -> bool:
    """The jar exists and is newer than every source file."""
    return jar.is_file() and jar.stat().st_mtime > max(s.stat().st_mtime for s in sources())


def pyspark_jars() -> Path:
    """pyspark's own jars folder, the classpath the classes are compiled against."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise CompileError(
            "pyspark is not installed in this Python, and the lakehouse server's classes compile "
            "against its jars: installing dbt-lakehouse installs it; a wheel built without build "
            "isolation needs pyproject.toml's build requirements installed first"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def javac() -> str:
    found = shutil.which("javac")
    if found is None:
        raise CompileError(
            "a JDK (javac) is needed to compile the lakehouse server's classes from a source "
            "checkout; install one (e.g. openjdk-17-jdk-headless), or install the built wheel, "
            "which carries them compiled"
        )
    return found


def compile_classes(classes: Path) -> None:
    """javac --release 17 the sources into the folder classes."""
    command = [javac(), "--release", JAVA_RELEASE, "-cp", f"{pyspark_jars()}/*"]
    command += ["-d", str(classes), *map(str, sources())]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise CompileError(f"javac failed:\n{done.stdout}{done.stderr}".rstrip())


def write_jar(classes: Path, jar: Path) -> None:
    """Zip the class files into jar, written under a temporary name and renamed."""
    jar.parent.mkdir(parents=True, exist_ok=True)
    # a name of its own: two processes compiling at once never share it
    handle, name = tempfile.mkstemp(prefix=f".{jar.name}.", suffix=".part", dir=jar.parent)
    os.close(handle)
    partial = Path(name)
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("META-INF/MANIFEST.MF", MANIFEST)
            for path in sorted(classes.rglob("*.class")):
                archive.write(path, path.relative_to(classes).as_posix())
        os.replace(partial, jar)
    finally:
        partial.unlink(missing_ok=True)


def build_jar(jar: Path) -> Path:
    """Compile the sources into jar (the wheel's build, or a checkout's first serve)."""
    with tempfile.TemporaryDirectory(prefix="lakehouse-server-classes-") as classes:
        compile_classes(Path(classes))
        write_jar(Path(classes), jar)
    return jar


def server_jar() -> Path:
    """The jar the server puts on its classpath: the one built into the installed package,
    else (a source checkout) one compiled into <jars root>/server/ unless it is up to date."""
    if PACKAGED_JAR.is_file():
        return PACKAGED_JAR
    # imported here: setup.py loads this file alone, without the package, to build the wheel
    from dbt.adapters.lakehouse.session.jars import jars_root

    jar = jars_root() / "server" / JAR_NAME
    return jar if up_to_date(jar) else build_jar(jar)
