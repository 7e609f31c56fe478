"""The package's Java classes: a few classes Spark, Hive or Delta load by name, so they must be
compiled Java, not Python. Each bundle's sources are in a `java/` folder beside the module that
uses them, compiled into one jar:

- `server` (`lakehouse-server.jar`, server/java): `lakehouse.server.ReadOnlyOutsideConnect` (a
  spark.sql.extensions check rule: only Spark Connect operations may write, JDBC/Thrift
  sessions only read), `lakehouse.server.PasswordAuthenticator` (the Thrift password check) and
  `lakehouse.server.ClientDepartures` (quiets what Spark Connect prints when a client leaves);
- `storage` (`lakehouse-storage.jar`, storage/java): `lakehouse.storage.PostgresLogStore`, the
  Delta log store that makes commits to object storage safe from several processes
  (storage/object_store.py). It compiles against Delta's `delta-storage` jar as well.

Building the wheel compiles both (setup.py, with `javac` against pyspark's own jars and the
pinned jars a bundle needs, downloaded and checked against jars.json's pins) into the package,
so an installed package runs on a machine with a Java runtime and no JDK. A source checkout
installed editable has no built jar: the first session that needs one compiles it into
`<jars root>/<bundle>/` (which needs a JDK), against the jars `lakehouse jars` installed, and
compiles again only when a source is newer.

This module imports nothing but the standard library at import time: setup.py loads it alone
to build the wheel.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).parent  # dbt/adapters/lakehouse
PINS = PACKAGE.parents[1] / "include" / "lakehouse" / "jars.json"
JAVA_RELEASE = "17"
MANIFEST = "Manifest-Version: 1.0\nCreated-By: dbt-lakehouse\n"


class CompileError(RuntimeError):
    """A bundle's classes could not be compiled (no javac, or javac failed)."""


@dataclass(frozen=True)
class Bundle:
    name: str
    folder: Path  # the package folder holding java/ and, in a wheel, the built jar
    jar_name: str
    needs: tuple[str, ...] = ()  # pinned jars (group:artifact) to compile against

    @property
    def packaged_jar(self) -> Path:
        return self.folder / self.jar_name

    def sources(self) -> list[Path]:
        found = sorted((self.folder / "java").glob("*.java"))
        if not found:
            raise CompileError(
                f"no Java sources in {self.folder / 'java'}: reinstall dbt-lakehouse"
            )
        return found


SERVER = Bundle("server", PACKAGE / "server", "lakehouse-server.jar")
STORAGE = Bundle(
    "storage", PACKAGE / "storage", "lakehouse-storage.jar", ("io.delta:delta-storage",)
)
BUNDLES = (SERVER, STORAGE)


def up_to_date(jar: Path, bundle: Bundle) -> bool:
    """The jar exists and is newer than every source file."""
    return jar.is_file() and jar.stat().st_mtime > max(s.stat().st_mtime for s in bundle.sources())


def pyspark_jars() -> Path:
    """pyspark's own jars folder, the classpath the classes are compiled against."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise CompileError(
            "pyspark is not installed in this Python, and the package's Java classes compile "
            "against its jars: installing dbt-lakehouse installs it; a wheel built without build "
            "isolation needs pyproject.toml's build requirements installed first"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def javac() -> str:
    found = shutil.which("javac")
    if found is None:
        raise CompileError(
            "a JDK (javac) is needed to compile the package's Java classes from a source "
            "checkout; install one (e.g. openjdk-17-jdk-headless), or install the built wheel, "
            "which carries them compiled"
        )
    return found


def pinned(name: str) -> tuple[str, str, str]:
    """(coordinate, sha256, jars folder) of the pinned jar named group:artifact."""
    pins = json.loads(PINS.read_text())
    for section in ("formats", "drivers", "storage"):
        for folder, jars in pins.get(section, {}).items():
            for jar in jars:
                if jar["coordinate"].rsplit(":", 1)[0] == name:
                    return jar["coordinate"], jar["sha256"], folder
    raise CompileError(f"{name} is not pinned in {PINS}")


def fetch_pinned(name: str, folder: Path) -> Path:
    """The pinned jar, downloaded from Maven Central into folder and checked (the wheel's
    build, which has no jars root)."""
    coordinate, sha256, _ = pinned(name)
    group, artifact, version = coordinate.split(":")
    url = (
        f"{json.loads(PINS.read_text())['maven_central']}/{group.replace('.', '/')}/"
        f"{artifact}/{version}/{artifact}-{version}.jar"
    )
    with urllib.request.urlopen(url, timeout=120) as response:
        data = response.read()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise CompileError(f"{url} does not match its pin in {PINS}")
    path = folder / f"{artifact}-{version}.jar"
    path.write_bytes(data)
    return path


def compile_classes(bundle: Bundle, classes: Path, classpath: list[Path]) -> None:
    """javac --release 17 the bundle's sources into the folder classes."""
    joined = os.pathsep.join([f"{pyspark_jars()}/*", *map(str, classpath)])
    command = [javac(), "--release", JAVA_RELEASE, "-cp", joined, "-d", str(classes)]
    done = subprocess.run(
        command + list(map(str, bundle.sources())), capture_output=True, text=True
    )
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


def build_jar(bundle: Bundle, jar: Path, classpath: list[Path] | None = None) -> Path:
    """Compile the bundle into jar. classpath: the jars it needs; None (the wheel's build):
    downloaded from their pins."""
    with tempfile.TemporaryDirectory(prefix=f"lakehouse-{bundle.name}-classes-") as work:
        if classpath is None:
            classpath = [fetch_pinned(name, Path(work)) for name in bundle.needs]
        classes = Path(work) / "classes"
        classes.mkdir()
        compile_classes(bundle, classes, classpath)
        write_jar(classes, jar)
    return jar


def bundle_jar(bundle: Bundle) -> Path:
    """The jar a session puts on its classpath: the one built into the installed package, else
    (a source checkout) one compiled into <jars root>/<bundle>/ unless it is up to date."""
    if bundle.packaged_jar.is_file():
        return bundle.packaged_jar
    # imported here: setup.py loads this file alone, without the package, to build the wheel
    from dbt.adapters.lakehouse.session.jars import jars_root

    jar = jars_root() / bundle.name / bundle.jar_name
    if up_to_date(jar, bundle):
        return jar
    classpath = []
    for name in bundle.needs:
        coordinate, _, folder = pinned(name)
        artifact, version = coordinate.split(":")[1:]
        classpath.append(jars_root() / folder / f"{artifact}-{version}.jar")
    return build_jar(bundle, jar, classpath)


def server_jar() -> Path:
    return bundle_jar(SERVER)
