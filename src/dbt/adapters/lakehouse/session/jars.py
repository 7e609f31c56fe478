"""The table-format jars: pinned in the package, downloaded once, checked before a JVM starts.

Spark needs the Delta jars (`delta-spark`, `delta-storage`) or the Iceberg Spark runtime on
the driver's classpath; no Python package ships them. Their Maven Central coordinates, SHA-256
and size are pinned in the package (`dbt/include/lakehouse/jars.json`). `lakehouse jars`
downloads each into `<jars root>/<format>/`, verifies it against its pin and renames it into
place only when it matches; the folder's manifest is written last, so a folder without one is an
interrupted download. Jars no longer pinned are removed (a session loads every jar of its
format's folder). A complete folder is left alone: no network access when nothing changed.

The jars root is `$LAKEHOUSE_JARS_DIR`, else a per-user cache
(`$XDG_CACHE_HOME/dbt-lakehouse/jars`, default `~/.cache/dbt-lakehouse/jars`), which is where a
session target finds them by default. Java skips a missing classpath folder silently, so a
session target's folders are checked before its JVM starts: a missing or half-downloaded folder
stops the run with one line naming the command, not a ClassNotFoundException mid-run.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
import urllib.response
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse_cache import user_cache
from dbt.include.lakehouse import PACKAGE_PATH

JARS_DIR_VARIABLE = "LAKEHOUSE_JARS_DIR"
PINS = Path(PACKAGE_PATH) / "jars.json"
MANIFEST = "manifest.json"
COMMAND = "lakehouse jars"
CHECKSUMS = ("sha512", "sha256", "sha1")  # published checksums, strongest first (unpinned jars)
TIMEOUT = 120
# Spark settings that name the jar folders: a classpath (`<dir>/*`) and a list of jars
# (`<dir>/*.jar`, the cluster target ships them to the executors).
CLASSPATH_SETTINGS = {"spark.driver.extraClassPath": os.pathsep, "spark.jars": ","}


class JarsError(DbtRuntimeError):
    """A download that failed or did not match its pin; nothing of it was installed."""


@dataclass(frozen=True)
class Jar:
    group: str
    artifact: str
    version: str
    sha256: str | None = None  # the pin; None: verified against Maven Central's own checksum
    size: int | None = None

    @classmethod
    def parse(cls, coordinate: str, sha256: str | None = None, size: int | None = None) -> Jar:
        parts = coordinate.split(":")
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{coordinate!r} is not group:artifact:version")
        return cls(*parts, sha256=sha256, size=size)

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def file_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"

    def url(self, repository: str) -> str:
        group = self.group.replace(".", "/")
        return f"{repository}/{group}/{self.artifact}/{self.version}/{self.file_name}"


def _pins() -> dict:
    return json.loads(PINS.read_text())


def maven_central() -> str:
    return _pins()["maven_central"]


def _parsed(section: str) -> dict[str, list[Jar]]:
    return {
        name: [Jar.parse(j["coordinate"], j["sha256"], j["size"]) for j in jars]
        for name, jars in _pins().get(section, {}).items()
    }


def pinned() -> dict[str, list[Jar]]:
    """{table format: [jar, ...]}, as pinned in the package."""
    return _parsed("formats")


def pinned_drivers() -> dict[str, list[Jar]]:
    """{database: [jar, ...]}: the JDBC drivers of the shared metastores the package supports
    (PostgreSQL), pinned like the format jars and installed beside them."""
    return _parsed("drivers")


def pinned_storage() -> dict[str, list[Jar]]:
    """{store: [jar, ...]}: the Hadoop connectors of the object stores a warehouse may live on
    (`s3`: Hadoop's S3A and the AWS SDK modules it uses, without what pyspark already ships),
    pinned like the format jars and installed beside them."""
    return _parsed("storage")


def storage_folder(store: str) -> Path:
    """Where `lakehouse jars` puts an object store's connector jars."""
    return jars_root() / store


def driver_folder(database: str) -> Path:
    """Where `lakehouse jars` puts a metastore database's JDBC driver."""
    return jars_root() / database


def jars_root() -> Path:
    """$LAKEHOUSE_JARS_DIR, else the per-user cache."""
    configured = os.environ.get(JARS_DIR_VARIABLE)
    if configured:
        return Path(configured).expanduser().resolve()
    return (user_cache() / "jars").resolve()


def fix() -> str:
    return f"run `{COMMAND}` (it downloads them once into {jars_root()})"


# -- download -------------------------------------------------------------------------------


def _fetch(url: str, missing_ok: bool = False) -> urllib.response.addinfourl | None:
    """The open response, or None for a 404 when missing_ok; anything else stops the download."""
    try:
        return urllib.request.urlopen(url, timeout=TIMEOUT)
    except urllib.error.HTTPError as error:
        if missing_ok and error.code == 404:
            return None
        reason = error
    except (urllib.error.URLError, TimeoutError) as error:
        reason = error
    raise JarsError(
        f"could not download {url}: {reason}. `{COMMAND}` needs Maven Central once; "
        "after that it works offline."
    )


def expected_checksum(jar: Jar, repository: str) -> tuple[str, str, str]:
    """(algorithm, hex digest, what it is) the download must match: the pin, else the
    strongest checksum file the repository publishes for the jar."""
    if jar.sha256:
        return "sha256", jar.sha256.lower(), "pinned sha256"
    for algorithm in CHECKSUMS:
        response = _fetch(f"{jar.url(repository)}.{algorithm}", missing_ok=True)
        if response is None:
            continue
        with response:
            text = response.read().decode("ascii", "replace").split()
        if text:
            return algorithm, text[0].lower(), f"published {algorithm}"
    raise JarsError(f"{repository} publishes no checksum for {jar.url(repository)}")


def download(jar: Jar, folder: Path, repository: str | None = None) -> dict[str, object]:
    """Fetch the jar into folder, verified, written under a temporary name and renamed."""
    repository = repository or maven_central()
    algorithm, expected, what = expected_checksum(jar, repository)
    checked, sha256 = hashlib.new(algorithm), hashlib.sha256()
    partial = folder / f".{jar.file_name}.part"
    try:
        with _fetch(jar.url(repository)) as response, partial.open("wb") as out:
            while chunk := response.read(1 << 20):
                checked.update(chunk)
                sha256.update(chunk)
                out.write(chunk)
        if checked.hexdigest() != expected:
            raise JarsError(
                f"{jar.url(repository)} does not match its {what} ({checked.hexdigest()} != "
                f"{expected}); it was not installed. Run `{COMMAND}` again; if it persists, "
                "the repository serves another file than the one pinned."
            )
        os.replace(partial, folder / jar.file_name)
    finally:
        partial.unlink(missing_ok=True)
    size = (folder / jar.file_name).stat().st_size
    print(f"downloaded {jar.coordinate} ({size / 1e6:.1f} MB, {what} verified)")
    return {"coordinate": jar.coordinate, "size": size, "sha256": sha256.hexdigest()}


def install_folder(folder: Path, jars: list[Jar], repository: str | None = None) -> bool:
    """Make folder hold exactly these jars and a manifest; True if anything changed."""
    folder.mkdir(parents=True, exist_ok=True)
    before = read_manifest(folder) or {}
    files = {
        jar.file_name: before.get(jar.file_name) for jar in jars if _intact(folder, jar, before)
    }
    missing = [jar for jar in jars if jar.file_name not in files]
    stale = sorted(p for p in folder.glob("*.jar") if p.name not in {j.file_name for j in jars})
    if not missing and not stale and files == before:
        return False
    # From here until the new manifest is written the folder counts as incomplete.
    (folder / MANIFEST).unlink(missing_ok=True)
    for path in stale:
        path.unlink()
        print(f"removed {path.name} from {folder} (no longer pinned)")
    for jar in missing:
        files[jar.file_name] = download(jar, folder, repository)
    temporary = folder / f".{MANIFEST}.part"
    temporary.write_text(json.dumps({"files": files}, indent=2, sort_keys=True) + "\n")
    os.replace(temporary, folder / MANIFEST)
    return True


def _intact(folder: Path, jar: Jar, manifest: dict[str, dict[str, object]]) -> bool:
    """The jar is in folder as the manifest recorded it (same coordinate, size and, when
    pinned, the pinned sha256)."""
    entry = manifest.get(jar.file_name) or {}
    path = folder / jar.file_name
    return (
        entry.get("coordinate") == jar.coordinate
        and (jar.sha256 is None or entry.get("sha256") == jar.sha256)
        and path.is_file()
        and path.stat().st_size == entry.get("size")
    )


def install(formats: list[str] | None = None, root: Path | None = None) -> list[Path]:
    """Download the pinned jars of each format (default: every format) into root (default:
    the jars root); the folders that changed."""
    root = root or jars_root()
    changed = []
    # every format's jars and, unless a format is chosen, the metastore drivers and the object
    # stores' connectors too
    groups = {**pinned(), **({} if formats else {**pinned_drivers(), **pinned_storage()})}
    for name, jars in groups.items():
        if formats and name not in formats:
            continue
        if install_folder(root / name, jars):
            changed.append(root / name)
    return changed


# -- the check before a session starts ----------------------------------------------------


def jar_folders(parameters: Mapping[str, str]) -> list[Path]:
    """The folders under the jars root that the session's settings load every jar of."""
    root = jars_root()
    found: list[Path] = []
    for setting, separator in CLASSPATH_SETTINGS.items():
        for entry in str(parameters.get(setting) or "").split(separator):
            entry = entry.strip()
            for suffix in ("/*.jar", "/*"):
                if entry.endswith(suffix):
                    folder = Path(entry.removesuffix(suffix)).resolve()
                    if folder.is_relative_to(root) and folder not in found:
                        found.append(folder)
                    break
    return found


def read_manifest(folder: Path) -> dict[str, dict[str, object]] | None:
    """{jar file name: {"coordinate", "size", "sha256"}}, or None when absent or unreadable."""
    try:
        files = json.loads((folder / MANIFEST).read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return files if isinstance(files, dict) else None


def folder_problem(folder: Path) -> str | None:
    if not folder.is_dir():
        return f"The table-format jars are missing: {folder} does not exist; {fix()}."
    files = read_manifest(folder)
    if not files:
        return (
            f"The table-format jars in {folder} are incomplete (no {MANIFEST}: the download "
            f"did not finish); {fix()}."
        )
    damaged = [
        name
        for name, entry in sorted(files.items())
        if not (folder / name).is_file() or (folder / name).stat().st_size != entry.get("size")
    ]
    if damaged:
        return (
            f"The table-format jars in {folder} are incomplete ({', '.join(damaged)} missing "
            f"or damaged); {fix()}."
        )
    return None


def jars_problem(parameters: Mapping[str, str]) -> str | None:
    """One line naming the folder and the fix, or None when every jar folder is complete."""
    for folder in jar_folders(parameters):
        problem = folder_problem(folder)
        if problem:
            return problem
    return None


def require_jars(parameters: Mapping[str, str]) -> None:
    problem = jars_problem(parameters)
    if problem:
        raise DbtRuntimeError(problem)
