"""Compile the lakehouse server's Java classes into one jar, once, at install.

    python -m retry_safe.server_classes      (run by `make install`)

The lakehouse server (one Spark JVM serving Spark Connect and JDBC/Thrift) needs two classes
that Spark and HiveServer2 load by name, so they must be compiled Java, not Python:
`lakehouse.server.ReadOnlyOutsideConnect` (a spark.sql.extensions check rule: only Spark
Connect operations may write, JDBC/Thrift sessions only read) and
`lakehouse.server.PasswordAuthenticator` (the Thrift password check). Their sources ship with
the package (`java/server/*.java`); `javac` compiles them against pyspark's own jars into
`$LAKEHOUSE_JARS_DIR/server/lakehouse-server.jar` (default `.jars/`), which the server puts on
the driver's classpath. This needs a JDK, not only a Java runtime. A jar newer than every
source is left alone: no javac run when nothing changed.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from dbt.adapters.lakehouse.jars import jars_root

SOURCES = Path(__file__).parent / "java" / "server"
JAR_NAME = "lakehouse-server.jar"
JAVA_RELEASE = "17"
MANIFEST = "Manifest-Version: 1.0\nCreated-By: retry_safe.server_classes\n"


class CompileError(RuntimeError):
    """The server's classes could not be compiled (no javac, or javac failed)."""


def server_jar() -> Path:
    """Where the compiled classes live: $LAKEHOUSE_JARS_DIR/server/lakehouse-server.jar."""
    return jars_root() / "server" / JAR_NAME


def sources() -> list[Path]:
    found = sorted(SOURCES.glob("*.java"))
    if not found:
        raise CompileError(f"no Java sources in {SOURCES}: reinstall the retry_safe package")
    return found


def up_to_date(jar: Path) -> bool:
    """The jar exists and is newer than every source file."""
    return jar.is_file() and jar.stat().st_mtime > max(s.stat().st_mtime for s in sources())


def pyspark_jars() -> Path:
    """pyspark's own jars folder, the classpath the classes are compiled against."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise CompileError("pyspark is not installed in this Python: run `make install`")
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def javac() -> str:
    found = shutil.which("javac")
    if found is None:
        raise CompileError(
            "a JDK (javac) is needed to compile the lakehouse server's classes; "
            "install one (e.g. openjdk-17-jdk-headless), a Java runtime alone is not enough"
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
    # a name of its own: two processes compiling at once (both test passes) never share it
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


def ensure_compiled() -> Path:
    """The server jar, compiled first unless it is newer than every source."""
    jar = server_jar()
    if not up_to_date(jar):
        with tempfile.TemporaryDirectory(prefix="lakehouse-server-classes-") as classes:
            compile_classes(Path(classes))
            write_jar(Path(classes), jar)
    return jar


def main() -> int:
    try:
        fresh = up_to_date(server_jar())
        jar = ensure_compiled()
    except CompileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if not fresh:
        print(f"compiled the lakehouse server's classes into {jar}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
