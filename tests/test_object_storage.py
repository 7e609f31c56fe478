"""The warehouse on object storage (S3Proxy, `retry_safe.s3`): what the storage alone decides.

- Delta's commits from several processes: two JVMs write every version of one table's log at
  the same time through the package's log store (`lakehouse.storage.PostgresLogStore`, the
  mutual exclusion in the PostgreSQL metastore database); each version has exactly one
  writer, whose entry is the one in the bucket, and no temporary object is left. With Delta's
  own `S3SingleDriverLogStore` in its place the same test fails: both writers "committed" 33 of
  60 versions (2026-12-06). A writer killed after its commit's row was recorded leaves no hole:
  the next listing of the log puts its entry in place.
- A store that cannot serve the warehouse stops the session in one line, from the very check
  a session runs right after its JVM starts (`object_store.require_reachable`), with the real
  connector against the real server: nothing answers at the endpoint, a wrong secret, a bucket
  that does not exist.

The pipelines on object storage (exact rows, kills, concurrent writers, the server, `lakehouse
maintain`, on both formats) are the concurrency and killed-runs tests', which run there.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from py4j.protocol import Py4JJavaError
from support.processes import free_ports

from dbt.adapters.lakehouse.java_classes import STORAGE, bundle_jar
from dbt.adapters.lakehouse.session.jars import driver_folder, storage_folder
from dbt.adapters.lakehouse.session.metastore import COMMIT_TABLE
from dbt.adapters.lakehouse.storage import object_store
from retry_safe.postgres import LOGIN, psql
from retry_safe.s3 import BUCKET

VERSIONS = 60
TABLE = f"s3a://{BUCKET}/race/events"


def jvm_with_s3(jars_root: Path):
    """A JVM of its own (py4j's gateway, no SparkContext) with the S3 connector, Delta's
    storage jar, the package's log store and the PostgreSQL driver on its classpath."""
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    classpath = [
        f"{storage_folder('s3')}/*",
        f"{jars_root / 'delta'}/*",
        str(bundle_jar(STORAGE)),
        f"{driver_folder('postgresql')}/*",
    ]
    conf = SparkConf().set("spark.driver.extraClassPath", ":".join(classpath))
    conf.set("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
    return launch_gateway(conf)


def hadoop_conf(jvm, s3: dict[str, str], metastore: dict[str, str] | None = None):
    conf = jvm.org.apache.hadoop.conf.Configuration()
    conf.set("fs.s3a.endpoint", s3["AWS_ENDPOINT_URL"])
    conf.set("fs.s3a.path.style.access", "true")
    conf.set("fs.s3a.endpoint.region", s3["AWS_REGION"])
    conf.set("fs.s3a.access.key", s3["AWS_ACCESS_KEY_ID"])
    conf.set("fs.s3a.secret.key", s3["AWS_SECRET_ACCESS_KEY"])
    for key, value in (metastore or {}).items():
        conf.set(key, value)
    return conf


def write_every_version(gateway, conf, name: str, start: threading.Barrier) -> list[int]:
    """Tries to commit each version 0..VERSIONS-1 of TABLE's log; the versions it won."""
    jvm = gateway.jvm
    store = jvm.lakehouse.storage.PostgresLogStore(conf)
    log = f"{TABLE}/_delta_log"
    won = []
    start.wait(timeout=120)
    for version in range(VERSIONS):
        actions = jvm.java.util.ArrayList()
        actions.add(json.dumps({"commitInfo": {"writer": name, "version": version}}))
        try:
            store.write(jvm.org.apache.hadoop.fs.Path(f"{log}/{version:020d}.json"),
                        actions.iterator(), False, conf)  # fmt: skip
        except Py4JJavaError as error:
            if error.java_exception.getClass().getName() != (
                "java.nio.file.FileAlreadyExistsException"
            ):
                raise
            continue
        won.append(version)
    return won


KILLED_ENTRY = {"commitInfo": {"writer": "killed", "version": VERSIONS}}


def recover_a_killed_commit(gateway, conf) -> list[str]:
    """A writer killed right after its commit's row was recorded: its temporary object and its
    incomplete row, and no entry in the log. The next listing of the log (what every reader
    and writer of the table does first) puts the entry in place; the commit files it lists."""
    jvm = gateway.jvm
    name = f"{VERSIONS:020d}.json"
    temp = f".tmp/{name}.killed-writer"
    path = jvm.org.apache.hadoop.fs.Path
    store = jvm.lakehouse.storage.PostgresLogStore(conf)
    fs = path(TABLE).getFileSystem(conf)
    out = fs.create(path(f"{TABLE}/_delta_log/{temp}"), True)
    out.write(bytearray(json.dumps(KILLED_ENTRY) + "\n", "utf-8"))
    out.close()
    connection = jvm.java.sql.DriverManager.getConnection(
        conf.get("javax.jdo.option.ConnectionURL"),
        conf.get("javax.jdo.option.ConnectionUserName"),
        conf.get("javax.jdo.option.ConnectionPassword"),
    )
    try:
        connection.createStatement().executeUpdate(
            f"insert into {COMMIT_TABLE} values ('{TABLE}', '{name}', '{temp}', false, null)"
        )
    finally:
        connection.close()
    listed = store.listFrom(path(f"{TABLE}/_delta_log/{0:020d}.json"), conf)
    names = []
    while listed.hasNext():
        names.append(str(listed.next().getPath().getName()))
    return [n for n in names if n.endswith(".json")]


@pytest.mark.format_independent  # the log store is Delta's; the pass's format does not matter
def test_two_processes_committing_every_version_each_win_different_versions(
    s3_store, fresh_metastore
):
    folder, s3 = s3_store
    cluster, database, metastore = fresh_metastore  # its commit table made by the init
    login = {
        "javax.jdo.option.ConnectionURL": metastore["LAKEHOUSE_METASTORE_URL"],
        "javax.jdo.option.ConnectionUserName": metastore["LAKEHOUSE_METASTORE_USER"],
        "javax.jdo.option.ConnectionPassword": metastore["LAKEHOUSE_METASTORE_PASSWORD"],
    }
    root = storage_folder("s3").parent
    gateways = [jvm_with_s3(root), jvm_with_s3(root)]
    try:
        start = threading.Barrier(2)
        results: dict[str, list[int] | str] = {}

        def writer(name: str, gateway) -> None:
            conf = hadoop_conf(gateway.jvm, s3, login)
            try:
                results[name] = write_every_version(gateway, conf, name, start)
            except Exception as error:  # shown by the assertion below
                results[name] = f"{type(error).__name__}: {error}"

        threads = [
            threading.Thread(target=writer, args=(name, gateway))
            for name, gateway in zip(("a", "b"), gateways, strict=True)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        killed = recover_a_killed_commit(gateways[0], hadoop_conf(gateways[0].jvm, s3, login))
    finally:
        for gateway in gateways:
            gateway.shutdown()
    assert all(isinstance(won, list) for won in results.values()), results
    a, b = set(results["a"]), set(results["b"])
    assert not a & b, f"versions both committed: {sorted(a & b)}"
    assert a | b == set(range(VERSIONS))
    assert a and b, "the two writers never met: no version was contested"
    # each version's entry in the bucket is its winner's, whole
    log = folder / "data" / BUCKET / "race" / "events" / "_delta_log"
    for version in range(VERSIONS):
        entry = json.loads((log / f"{version:020d}.json").read_text())
        winner = "a" if version in a else "b"
        assert entry == {"commitInfo": {"writer": winner, "version": version}}, version
    # the killed writer's commit was put in place by the next listing of the log
    assert killed == [f"{v:020d}.json" for v in range(VERSIONS + 1)]
    assert json.loads((log / f"{VERSIONS:020d}.json").read_text()) == KILLED_ENTRY
    assert not list((log / ".tmp").glob("*")), "temporary objects were left"
    rows = psql(
        cluster,
        database,
        f"select count(*), bool_and(complete) from {LOGIN}.{COMMIT_TABLE} "
        f"where table_path = '{TABLE}'",
    )
    assert rows.strip() == f"{VERSIONS + 1}|t"


@pytest.mark.format_independent
def test_an_object_store_that_cannot_serve_is_one_line_naming_the_fix(s3_store):
    _, s3 = s3_store
    gateway = jvm_with_s3(storage_folder("s3").parent)
    try:
        jvm = gateway.jvm

        def problem(url: str, endpoint: str, secret: str) -> str:
            settings = {"spark.sql.warehouse.dir": url, "spark.hadoop.fs.s3a.endpoint": endpoint}
            conf = hadoop_conf(jvm, {**s3, "AWS_ENDPOINT_URL": endpoint,
                                     "AWS_SECRET_ACCESS_KEY": secret})  # fmt: skip
            with pytest.raises(object_store.StorageError) as raised:
                object_store.require_reachable(settings, jvm, conf)
            return str(raised.value.msg)

        endpoint, secret = s3["AWS_ENDPOINT_URL"], s3["AWS_SECRET_ACCESS_KEY"]
        nowhere = f"http://127.0.0.1:{free_ports()[0]}"
        assert problem(f"s3a://{BUCKET}/w", nowhere, secret).startswith(
            f"The object store at {nowhere} cannot be reached for "
            f"LAKEHOUSE_WAREHOUSE=s3a://{BUCKET}/w ("
        )
        assert problem(f"s3a://{BUCKET}/w", nowhere, secret).endswith(
            "): check AWS_ENDPOINT_URL (scheme, host, port) and that the store is running."
        )
        assert problem(f"s3a://{BUCKET}/w", endpoint, "wrong").startswith(
            f"The object store at {endpoint} refused the credentials for bucket {BUCKET} ("
        )
        assert problem("s3a://no-such-bucket/w", endpoint, secret) == (
            "The bucket no-such-bucket of LAKEHOUSE_WAREHOUSE=s3a://no-such-bucket/w does not "
            f"exist at the object store at {endpoint}: create it (`make s3` makes `lakehouse`), "
            "or correct the URL."
        )
        # and the right settings pass
        conf = hadoop_conf(jvm, s3)
        object_store.require_reachable({"spark.sql.warehouse.dir": f"s3a://{BUCKET}/w"}, jvm, conf)
    finally:
        gateway.shutdown()
