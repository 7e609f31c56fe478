"""The warehouse on object storage (S3Proxy, `retry_safe.s3`): what the storage alone decides.

Each runs its JVM in a process of its own (support/storage_jvm.py). Both in the Iceberg pass, the
shorter one: their outcome does not depend on the pass's format.

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
import subprocess
import sys
from pathlib import Path

import pytest
from support.processes import free_ports

from dbt.adapters.lakehouse.session.metastore import COMMIT_TABLE
from retry_safe.postgres import LOGIN, psql
from retry_safe.s3 import BUCKET

VERSIONS = 60
TABLE = f"s3a://{BUCKET}/race/events"
KILLED_ENTRY = {"commitInfo": {"writer": "killed", "version": VERSIONS}}
SCRIPT = Path(__file__).parent / "support" / "storage_jvm.py"


def storage_jvm(request: dict) -> subprocess.Popen:
    """support/storage_jvm.py in a process (and JVM) of its own."""
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), json.dumps(request)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def result_of(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=600)
    lines = [x for x in out.splitlines() if x.startswith("RESULT ")]
    assert process.returncode == 0 and lines, err[-3000:]
    return json.loads(lines[0].removeprefix("RESULT "))


@pytest.mark.format_independent(run_in="local_iceberg")  # the log store is Delta's alone
def test_two_processes_committing_every_version_each_win_different_versions(
    s3_store, fresh_metastore, tmp_path
):
    folder, s3 = s3_store
    cluster, database, metastore = fresh_metastore  # its commit table made by the init
    login = {
        "javax.jdo.option.ConnectionURL": metastore["LAKEHOUSE_METASTORE_URL"],
        "javax.jdo.option.ConnectionUserName": metastore["LAKEHOUSE_METASTORE_USER"],
        "javax.jdo.option.ConnectionPassword": metastore["LAKEHOUSE_METASTORE_PASSWORD"],
    }
    request = {
        "action": "race",
        "s3": s3,
        "metastore": login,
        "barrier": str(tmp_path / "barrier"),
        "table": TABLE,
        "versions": VERSIONS,
    }
    writers = [
        storage_jvm({**request, "name": "a", "killed": KILLED_ENTRY}),
        storage_jvm({**request, "name": "b"}),
    ]
    first, second = [result_of(writer) for writer in writers]
    a, b = set(first["won"]), set(second["won"])
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
    assert first["listed"] == [f"{v:020d}.json" for v in range(VERSIONS + 1)]
    assert json.loads((log / f"{VERSIONS:020d}.json").read_text()) == KILLED_ENTRY
    assert not list((log / ".tmp").glob("*")), "temporary objects were left"
    rows = psql(
        cluster,
        database,
        f"select count(*), bool_and(complete) from {LOGIN}.{COMMIT_TABLE} "
        f"where table_path = '{TABLE}'",
    )
    assert rows.strip() == f"{VERSIONS + 1}|t"


@pytest.mark.format_independent(run_in="local_iceberg")
def test_an_object_store_that_cannot_serve_is_one_line_naming_the_fix(s3_store):
    _, s3 = s3_store
    endpoint, secret = s3["AWS_ENDPOINT_URL"], s3["AWS_SECRET_ACCESS_KEY"]
    nowhere = f"http://127.0.0.1:{free_ports()[0]}"
    warehouse = f"s3a://{BUCKET}/w"
    cases = [
        {"url": warehouse, "endpoint": nowhere, "secret": secret},
        {"url": warehouse, "endpoint": endpoint, "secret": "wrong"},
        {"url": "s3a://no-such-bucket/w", "endpoint": endpoint, "secret": secret},
        {"url": warehouse, "endpoint": endpoint, "secret": secret},  # the right settings
    ]
    unreachable, refused, missing, right = result_of(
        storage_jvm({"action": "probe", "s3": s3, "cases": cases})
    )["messages"]
    assert unreachable.startswith(
        f"The object store at {nowhere} cannot be reached for LAKEHOUSE_WAREHOUSE={warehouse} ("
    )
    assert unreachable.endswith(
        "): check AWS_ENDPOINT_URL (scheme, host, port) and that the store is running."
    )
    assert refused.startswith(
        f"The object store at {endpoint} refused the credentials for bucket {BUCKET} ("
    )
    assert missing == (
        "The bucket no-such-bucket of LAKEHOUSE_WAREHOUSE=s3a://no-such-bucket/w does not "
        f"exist at the object store at {endpoint}: create it, or correct the URL."
    )
    assert right is None
