"""The JVM side of tests/test_object_storage.py, run in a process of its own: a test's pytest
process has a SparkContext, and pyspark's handler for Java exceptions would look the other
JVM's exceptions up in that one. Reads one JSON request from its argument, prints one JSON
line: `race` (commit every version of one Delta log through the package's log store, after
meeting the other writer at a file barrier; then, for writer "a", a killed commit recovered)
or `probe` (the session's bucket check against a store's settings).

    python tests/support/storage_jvm.py '{"action": "race", ...}'
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from py4j.protocol import Py4JJavaError

from dbt.adapters.lakehouse.java_classes import STORAGE, bundle_jar
from dbt.adapters.lakehouse.session.jars import driver_folder, jars_root, storage_folder
from dbt.adapters.lakehouse.session.metastore import COMMIT_TABLE
from dbt.adapters.lakehouse.storage import object_store


def jvm_with_s3():
    """A JVM (py4j's gateway, no SparkContext) with the S3 connector, Delta's storage jar, the
    package's log store and the PostgreSQL driver on its classpath."""
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    classpath = [
        f"{storage_folder('s3')}/*",
        f"{jars_root() / 'delta'}/*",
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


def meet(barrier: Path, name: str) -> None:
    barrier.mkdir(parents=True, exist_ok=True)
    (barrier / name).touch()
    deadline = time.monotonic() + 120
    while len(list(barrier.iterdir())) < 2:
        if time.monotonic() > deadline:
            raise TimeoutError("the other writer never came")
        time.sleep(0.005)


def write_every_version(jvm, conf, table: str, versions: int, name: str) -> list[int]:
    """Tries to commit each version of the table's log; the versions it won."""
    store = jvm.lakehouse.storage.PostgresLogStore(conf)
    won = []
    for version in range(versions):
        actions = jvm.java.util.ArrayList()
        actions.add(json.dumps({"commitInfo": {"writer": name, "version": version}}))
        path = jvm.org.apache.hadoop.fs.Path(f"{table}/_delta_log/{version:020d}.json")
        try:
            store.write(path, actions.iterator(), False, conf)
        except Py4JJavaError as error:
            if error.java_exception.getClass().getName() != (
                "java.nio.file.FileAlreadyExistsException"
            ):
                raise
            continue
        won.append(version)
    return won


def recover_a_killed_commit(jvm, conf, table: str, version: int, entry: dict) -> list[str]:
    """A writer killed right after its commit's row was recorded: its temporary object and its
    incomplete row, and no entry in the log. The next listing of the log (what every reader
    and writer of the table does first) puts the entry in place; the commit files it lists."""
    name = f"{version:020d}.json"
    temp = f".tmp/{name}.killed-writer"
    path = jvm.org.apache.hadoop.fs.Path
    store = jvm.lakehouse.storage.PostgresLogStore(conf)
    fs = path(table).getFileSystem(conf)
    out = fs.create(path(f"{table}/_delta_log/{temp}"), True)
    out.write(bytearray(json.dumps(entry) + "\n", "utf-8"))
    out.close()
    connection = jvm.java.sql.DriverManager.getConnection(
        conf.get("javax.jdo.option.ConnectionURL"),
        conf.get("javax.jdo.option.ConnectionUserName"),
        conf.get("javax.jdo.option.ConnectionPassword"),
    )
    try:
        connection.createStatement().executeUpdate(
            f"insert into {COMMIT_TABLE} values ('{table}', '{name}', '{temp}', false, null)"
        )
    finally:
        connection.close()
    listed = store.listFrom(path(f"{table}/_delta_log/{0:020d}.json"), conf)
    names = []
    while listed.hasNext():
        names.append(str(listed.next().getPath().getName()))
    return [n for n in names if n.endswith(".json")]


def probe(jvm, request: dict) -> list[str | None]:
    """The bucket check's message for each case (None: it passed)."""
    found = []
    for case in request["cases"]:
        settings = {
            "spark.sql.warehouse.dir": case["url"],
            "spark.hadoop.fs.s3a.endpoint": case["endpoint"],
        }
        s3 = {**request["s3"], "AWS_ENDPOINT_URL": case["endpoint"]}
        s3["AWS_SECRET_ACCESS_KEY"] = case["secret"]
        try:
            object_store.require_reachable(settings, jvm, hadoop_conf(jvm, s3))
            found.append(None)
        except object_store.StorageError as error:
            found.append(str(error.msg))
    return found


def main(request: dict) -> dict:
    gateway = jvm_with_s3()
    try:
        jvm = gateway.jvm
        if request["action"] == "probe":
            return {"messages": probe(jvm, request)}
        conf = hadoop_conf(jvm, request["s3"], request["metastore"])
        meet(Path(request["barrier"]), request["name"])
        won = write_every_version(jvm, conf, request["table"], request["versions"], request["name"])
        result: dict = {"won": won}
        if request.get("killed"):
            result["listed"] = recover_a_killed_commit(
                jvm, conf, request["table"], request["versions"], request["killed"]
            )
        return result
    finally:
        gateway.shutdown()


if __name__ == "__main__":
    print("RESULT " + json.dumps(main(json.loads(sys.argv[1]))))
