"""The table-format jars: pinned in the package (coordinates and SHA-256), downloaded once by
`lakehouse jars` and verified, on the driver's classpath from the jars root (LAKEHOUSE_JARS_DIR,
else a per-user cache), and a missing or partial folder refused in one line naming the command."""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import socket
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pyspark
import pytest

from dbt.adapters.lakehouse.session import jars
from dbt.adapters.lakehouse.session import jars as check
from dbt.adapters.lakehouse.session.jvm import expand_jar_patterns
from dbt.adapters.lakehouse.session.settings import session_settings


def fix(root: Path) -> str:
    return f"run `lakehouse jars` (it downloads them once into {root})"


def test_pins_name_the_two_delta_jars_and_the_iceberg_runtime_for_this_spark():
    pins = jars.pinned()
    spark_line = ".".join(pyspark.__version__.split(".")[:2])
    assert {fmt: [j.artifact for j in pinned] for fmt, pinned in pins.items()} == {
        "delta": [f"delta-spark_{spark_line}_2.13", "delta-storage"],
        "iceberg": [f"iceberg-spark-runtime-{spark_line}_2.13"],
    }
    delta_spark = pins["delta"][0]
    assert delta_spark.url(jars.maven_central()) == (
        "https://repo1.maven.org/maven2/io/delta/"
        f"delta-spark_{spark_line}_2.13/{delta_spark.version}/"
        f"delta-spark_{spark_line}_2.13-{delta_spark.version}.jar"
    )
    # every jar is pinned to the bytes verified when it was first downloaded
    assert all(
        len(jar.sha256 or "") == 64 and jar.size for pinned in pins.values() for jar in pinned
    )


def test_the_jars_root_is_the_variable_else_a_per_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("LAKEHOUSE_JARS_DIR", str(tmp_path / "mine"))
    assert jars.jars_root() == tmp_path / "mine"
    monkeypatch.delenv("LAKEHOUSE_JARS_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert jars.jars_root() == tmp_path / "cache" / "dbt-lakehouse" / "jars"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert jars.jars_root() == tmp_path / "home" / ".cache" / "dbt-lakehouse" / "jars"


@pytest.mark.parametrize("table_format", ["delta", "iceberg"])
def test_a_session_target_puts_its_format_folder_on_the_driver_classpath(monkeypatch, table_format):
    monkeypatch.setenv("LAKEHOUSE_JARS_DIR", "/opt/lakehouse-jars")
    monkeypatch.delenv("LAKEHOUSE_METASTORE_CLASSPATH", raising=False)
    settings = session_settings(table_format, {})
    assert settings["spark.driver.extraClassPath"] == f"/opt/lakehouse-jars/{table_format}/*"
    assert "spark.jars.packages" not in settings
    assert "spark.jars" not in settings  # a local master: the driver is the executor
    # with a shared metastore its JDBC driver is appended, and no empty entry (= the current
    # directory for Java) is left when it is not set
    monkeypatch.setenv("LAKEHOUSE_METASTORE_CLASSPATH", "/opt/derbyclient.jar")
    assert session_settings(table_format, {})["spark.driver.extraClassPath"] == (
        f"/opt/lakehouse-jars/{table_format}/*:/opt/derbyclient.jar"
    )


def test_a_cluster_master_ships_the_jars_to_the_executors(monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_JARS_DIR", "/opt/lakehouse-jars")
    cluster = session_settings("delta", {"spark.master": "spark://10.0.0.1:7077"})
    assert cluster["spark.jars"] == "/opt/lakehouse-jars/delta/*.jar"
    # the profile's own list wins
    chosen = session_settings("delta", {"spark.master": "yarn", "spark.jars": "/x/y.jar"})
    assert chosen["spark.jars"] == "/x/y.jar"


# --- the downloader, against a small Maven repository served on 127.0.0.1 ---

JAR_BYTES = b"PK\x05\x06" + bytes(18)  # an empty zip file
PIN = jars.Jar("org.example", "tiny-runtime", "1.0", hashlib.sha256(JAR_BYTES).hexdigest(), 22)
UNPINNED = jars.Jar("org.example", "tiny-runtime", "1.0")  # verified by the published checksum


@pytest.fixture
def maven(tmp_path) -> Iterator[tuple[Path, list[str], str]]:
    """A Maven layout with PIN and its SHA-256 (no SHA-512), the list of paths requested, and
    the repository's URL."""
    root = tmp_path / "maven"
    folder = root / "org" / "example" / "tiny-runtime" / "1.0"
    folder.mkdir(parents=True)
    (folder / PIN.file_name).write_bytes(JAR_BYTES)
    digest = hashlib.sha256(JAR_BYTES).hexdigest()
    (folder / f"{PIN.file_name}.sha256").write_text(f"{digest}  {PIN.file_name}\n")
    requested: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_request(self, code="-", size="-"):
            requested.append(self.path)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(Handler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield folder, requested, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_download_is_verified_against_its_pin_and_recorded_then_left_alone(tmp_path, maven):
    _, requested, repository = maven
    target = tmp_path / "jars" / "tiny"
    assert jars.install_folder(target, [PIN], repository) is True
    assert (target / PIN.file_name).read_bytes() == JAR_BYTES
    assert json.loads((target / check.MANIFEST).read_text()) == {
        "files": {
            "tiny-runtime-1.0.jar": {
                "coordinate": "org.example:tiny-runtime:1.0",
                "size": 22,
                "sha256": hashlib.sha256(JAR_BYTES).hexdigest(),
            }
        }
    }
    assert sorted(p.name for p in target.iterdir()) == ["manifest.json", "tiny-runtime-1.0.jar"]
    assert check.folder_problem(target) is None
    # the pin is the reference: no checksum file was asked for
    assert [p.rsplit("/", 1)[1] for p in requested] == ["tiny-runtime-1.0.jar"]
    requested.clear()
    assert jars.install_folder(target, [PIN], repository) is False
    assert requested == []


def test_an_unpinned_jar_is_verified_against_the_strongest_published_checksum(tmp_path, maven):
    _, requested, repository = maven
    target = tmp_path / "jars" / "tiny"
    assert jars.install_folder(target, [UNPINNED], repository) is True
    assert (target / PIN.file_name).read_bytes() == JAR_BYTES
    # sha512 is absent, sha256 present
    assert [p.rsplit("/", 1)[1] for p in requested] == [
        "tiny-runtime-1.0.jar.sha512",
        "tiny-runtime-1.0.jar.sha256",
        "tiny-runtime-1.0.jar",
    ]


def test_a_jar_that_does_not_match_its_pin_is_not_installed(tmp_path, maven):
    folder, _, repository = maven
    (folder / PIN.file_name).write_bytes(JAR_BYTES + b"tampered")
    target = tmp_path / "jars" / "tiny"
    with pytest.raises(jars.JarsError, match="does not match its pinned sha256"):
        jars.install_folder(target, [PIN], repository)
    assert list(target.iterdir()) == []


def test_an_unreachable_repository_stops_the_download_naming_the_url(tmp_path, monkeypatch):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("LAKEHOUSE_JARS_DIR", str(tmp_path / "jars"))
    target = tmp_path / "jars" / "tiny"
    url = f"http://127.0.0.1:{port}/org/example/tiny-runtime/1.0/tiny-runtime-1.0.jar"
    with pytest.raises(jars.JarsError, match=f"could not download {re.escape(url)}: "):
        jars.install_folder(target, [PIN], f"http://127.0.0.1:{port}")
    assert list(target.iterdir()) == []
    assert check.folder_problem(target) == (
        f"The table-format jars in {target} are incomplete (no manifest.json: the download did "
        f"not finish); {fix(tmp_path / 'jars')}."
    )


def test_a_missing_jar_is_downloaded_again_and_an_unpinned_one_removed(tmp_path, maven):
    _, _, repository = maven
    target = tmp_path / "jars" / "tiny"
    jars.install_folder(target, [PIN], repository)
    (target / PIN.file_name).unlink()
    (target / "tiny-runtime-0.9.jar").write_bytes(JAR_BYTES)
    assert jars.install_folder(target, [PIN], repository) is True
    assert sorted(p.name for p in target.iterdir()) == ["manifest.json", "tiny-runtime-1.0.jar"]
    assert check.folder_problem(target) is None


# --- the one-line check the adapter runs before it starts the JVM ---


def complete_folder(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True)
    files = {}
    for name in names:
        (folder / name).write_bytes(JAR_BYTES)
        files[name] = {"coordinate": f"x:{name}:1", "size": len(JAR_BYTES), "sha256": "-"}
    (folder / check.MANIFEST).write_text(json.dumps({"files": files}))


@pytest.fixture
def jars_root(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "jars"
    monkeypatch.setenv("LAKEHOUSE_JARS_DIR", str(root))
    return root


def test_missing_folder(jars_root):
    settings = {"spark.driver.extraClassPath": f"{jars_root}/delta/*"}
    assert check.jars_problem(settings) == (
        f"The table-format jars are missing: {jars_root}/delta does not exist; {fix(jars_root)}."
    )


def test_interrupted_download_has_no_manifest(jars_root):
    (jars_root / "delta").mkdir(parents=True)
    (jars_root / "delta" / "delta-storage-4.4.0.jar").write_bytes(JAR_BYTES)
    settings = {"spark.driver.extraClassPath": f"{jars_root}/delta/*"}
    assert check.jars_problem(settings) == (
        f"The table-format jars in {jars_root}/delta are incomplete (no manifest.json: "
        f"the download did not finish); {fix(jars_root)}."
    )


def test_partial_folder_names_the_missing_and_the_damaged_jars(jars_root):
    folder = jars_root / "delta"
    complete_folder(folder, ["a.jar", "b.jar", "c.jar"])
    (folder / "a.jar").unlink()
    (folder / "c.jar").write_bytes(b"short")
    settings = {"spark.driver.extraClassPath": f"{folder}/*"}
    assert check.jars_problem(settings) == (
        f"The table-format jars in {folder} are incomplete (a.jar, c.jar missing or damaged); "
        f"{fix(jars_root)}."
    )


def test_complete_folders_and_other_classpath_entries_pass(jars_root, tmp_path):
    complete_folder(jars_root / "delta", ["a.jar", "b.jar"])
    settings = {
        # another folder wildcard (a JDBC driver folder, say) is not the project's to check
        "spark.driver.extraClassPath": f"{jars_root}/delta/*:{tmp_path}/elsewhere/*:/x/y.jar",
        "spark.jars": f"{jars_root}/delta/*.jar",
    }
    assert check.jar_folders(settings) == [jars_root / "delta"]
    assert check.jars_problem(settings) is None


def test_spark_jars_folder_is_checked_too(jars_root):
    settings = {"spark.jars": f"{jars_root}/iceberg/*.jar"}
    assert check.jars_problem(settings) == (
        f"The table-format jars are missing: {jars_root}/iceberg does not exist; {fix(jars_root)}."
    )


def test_spark_jars_wildcards_are_expanded_before_the_session_starts(tmp_path):
    # SparkContext would look for a file literally named `*.jar` (the cluster target's setting)
    complete_folder(tmp_path / "delta", ["b.jar", "a.jar"])
    settings = {
        "spark.master": "local[*]",
        "spark.jars": f"{tmp_path}/delta/*.jar, s3a://bucket/x-*.jar,/opt/plain.jar",
    }
    assert expand_jar_patterns(settings) == {
        "spark.master": "local[*]",
        "spark.jars": f"{tmp_path}/delta/a.jar,{tmp_path}/delta/b.jar,s3a://bucket/x-*.jar,"
        "/opt/plain.jar",
    }
    assert expand_jar_patterns({"spark.master": "local[*]"}) == {"spark.master": "local[*]"}
