"""Download the table-format jars once, at install, into a project-local folder.

    python -m retry_safe.jars            (run by `make install`)

The jars are pinned in pyproject.toml, `[tool.retry_safe.jars]`, per table format. Each is
fetched from Maven Central into `$LAKEHOUSE_JARS_DIR/<format>/` (default `.jars/`), checked
against the strongest checksum Maven Central publishes for it (SHA-512, SHA-256, then SHA-1)
and renamed into place only when it matches. The folder's manifest is written last, so a
folder without one is an interrupted download (the adapter refuses it with the fix). Jars no
longer pinned are removed from the folder: the profiles load every jar in it (`<folder>/*`).
A complete folder is left alone: no network access when nothing changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tomllib
import urllib.error
import urllib.request
import urllib.response
from dataclasses import dataclass
from pathlib import Path

from dbt.adapters.lakehouse.jars import JARS_DIR_VARIABLE, MANIFEST, read_manifest
from retry_safe.project import PROJECT_DIR

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
CHECKSUMS = ("sha512", "sha256", "sha1")  # strongest first
TIMEOUT = 120


@dataclass(frozen=True)
class Jar:
    group: str
    artifact: str
    version: str

    @classmethod
    def parse(cls, coordinate: str) -> Jar:
        parts = coordinate.split(":")
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{coordinate!r} is not group:artifact:version")
        return cls(*parts)

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def file_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"

    @property
    def url(self) -> str:
        group = self.group.replace(".", "/")
        return f"{MAVEN_CENTRAL}/{group}/{self.artifact}/{self.version}/{self.file_name}"


def pinned(pyproject: Path = PROJECT_DIR / "pyproject.toml") -> dict[str, list[Jar]]:
    """{table format: [jar, ...]} from pyproject.toml's [tool.retry_safe.jars]."""
    with pyproject.open("rb") as handle:
        table = tomllib.load(handle)["tool"]["retry_safe"]["jars"]
    return {fmt: [Jar.parse(c) for c in coordinates] for fmt, coordinates in table.items()}


def jars_dir() -> Path:
    """LAKEHOUSE_JARS_DIR, or .jars in the project folder."""
    return Path(os.environ.get(JARS_DIR_VARIABLE) or PROJECT_DIR / ".jars").resolve()


def _fetch(url: str, missing_ok: bool = False) -> urllib.response.addinfourl | None:
    """The open response, or None for a 404 when missing_ok; anything else stops the install."""
    try:
        return urllib.request.urlopen(url, timeout=TIMEOUT)
    except urllib.error.HTTPError as error:
        if missing_ok and error.code == 404:
            return None
        reason = error
    except (urllib.error.URLError, TimeoutError) as error:
        reason = error
    raise SystemExit(
        f"error: could not download {url}: {reason} (the first `make install` needs Maven Central)"
    )


def published_checksum(jar: Jar) -> tuple[str, str]:
    """(algorithm, hex digest) of the strongest checksum file Maven Central has for the jar."""
    for algorithm in CHECKSUMS:
        response = _fetch(f"{jar.url}.{algorithm}", missing_ok=True)
        if response is None:
            continue
        with response:
            text = response.read().decode("ascii", "replace").split()
        if text:
            return algorithm, text[0].lower()
    raise SystemExit(f"error: Maven Central publishes no checksum for {jar.url}")


def download(jar: Jar, folder: Path) -> dict[str, object]:
    """Fetch the jar into folder, verified, written under a temporary name and renamed."""
    algorithm, expected = published_checksum(jar)
    checked, sha256 = hashlib.new(algorithm), hashlib.sha256()
    partial = folder / f".{jar.file_name}.part"
    try:
        with _fetch(jar.url) as response, partial.open("wb") as out:
            while chunk := response.read(1 << 20):
                checked.update(chunk)
                sha256.update(chunk)
                out.write(chunk)
        if checked.hexdigest() != expected:
            raise SystemExit(
                f"error: {jar.url} does not match its published {algorithm} "
                f"({checked.hexdigest()} != {expected}); it was not installed, run "
                "`make install` again"
            )
        os.replace(partial, folder / jar.file_name)
    finally:
        partial.unlink(missing_ok=True)
    size = (folder / jar.file_name).stat().st_size
    print(f"downloaded {jar.coordinate} ({size / 1e6:.1f} MB, {algorithm} verified)")
    return {"coordinate": jar.coordinate, "size": size, "sha256": sha256.hexdigest()}


def install_folder(folder: Path, jars: list[Jar]) -> bool:
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
        files[jar.file_name] = download(jar, folder)
    temporary = folder / f".{MANIFEST}.part"
    temporary.write_text(json.dumps({"files": files}, indent=2, sort_keys=True) + "\n")
    os.replace(temporary, folder / MANIFEST)
    return True


def _intact(folder: Path, jar: Jar, manifest: dict[str, dict[str, object]]) -> bool:
    """The jar is in folder as the manifest recorded it (same coordinate, same size)."""
    entry = manifest.get(jar.file_name) or {}
    path = folder / jar.file_name
    return (
        entry.get("coordinate") == jar.coordinate
        and path.is_file()
        and path.stat().st_size == entry.get("size")
    )


def install(root: Path | None = None) -> None:
    root = root or jars_dir()
    for table_format, jars in pinned().items():
        if install_folder(root / table_format, jars):
            print(f"{table_format} jars ready in {root / table_format}")


if __name__ == "__main__":
    install()
    sys.exit(0)
