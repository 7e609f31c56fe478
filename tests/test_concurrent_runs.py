"""Two runs of one model at the same time against one table: the same interval, and overlapping
intervals. Each commits: a commit the format refuses because the other committed first is
planned and merged again (conflicts.py), and says so in the run's log.

The embedded Derby metastore admits one process, so the two writers share a Hive metastore on
PostgreSQL and a warehouse on object storage (S3Proxy, `retry_safe.s3`), as in production: a local server (retry_safe.postgres) whose schema the package's
`lakehouse metastore init` made (the pass's initialized database, copied for this test: the
`fresh_metastore` fixture), and, on Iceberg, Hive's commit locks on (the default
with PostgreSQL). The first process
loads the setup while the second starts its session; both meet at a barrier, then run the same
steps together, made to collide: the first writer is frozen while its MERGE writes (a data file
written, no commit yet); meanwhile the second commits the same additive batch, and later, in
the first's MERGE of the cart days, its own cart days and `lakehouse maintain` (a compaction,
and on the bucket's store without atomic rename the deletion of a ten-day-old object a killed
writer left, while the frozen writer's uncommitted data file, minutes old, stays);
the first, let go each time, meets those commits: the format refuses its commit (Delta's
concurrent-delete check, Iceberg's serializable validation), and it plans again (the batch:
found applied, nothing committed). They meet again when both are done, and the tables must
hold exactly the documents' rows as the concurrent runs left them: an additive batch applied
once, every cart day once.

A lakehouse server on the same metastore serves analysts throughout: it starts before any
schema exists (the first writer waits for it), and afterwards an analyst reads, over JDBC, the
table the writers created and merged meanwhile: no restart, no refresh.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.analysts import jdbc_query
from support.expected import ADDITIVE_RESULT, CART, JAN_1, JAN_2, JAN_3, as_text
from support.passes import SOAK
from support.processes import free_ports, metastore_init, step_env
from support.tables import plant_orphan

from retry_safe.postgres import psql
from retry_safe.project import EMBEDDED_TARGETS, PROJECT_DIR
from retry_safe.s3 import BUCKET
from retry_safe.scenario import command
from retry_safe.server_process import spawn, stop

SETUP = [
    ["seed"],
    ["customer_balances_additive", "2026-11-01", "2026-11-02"],
    [CART, "2026-01-01", "2026-01-02"],
]
# The same additive batch twice at once, then two overlapping intervals of the cart model.
CONCURRENT = [
    [
        ["customer_balances_additive", "2026-11-02", "2026-11-03"],
        [CART, "2026-01-01", "2026-01-03"],
    ],
    [
        ["customer_balances_additive", "2026-11-02", "2026-11-03"],
        [CART, "2026-01-02", "2026-01-04"],
    ],
]
# The documents' tables, as the dump prints them: Ben's 200 plus batch 2's 25 once (applied
# batches 1 and 2); the cart days 1 to 3.
ADDITIVE = as_text(ADDITIVE_RESULT)
CART_ROWS = as_text(JAN_1 + JAN_2 + JAN_3)


def writers_env(
    home: Path,
    target: str,
    table_format: str,
    metastore: dict,
    storage: dict | None = None,
    initialized: bool = False,
) -> dict[str, str]:
    """The writers' environment on the PostgreSQL metastore, whose schema `lakehouse metastore
    init` (the package's command) made (here, unless initialized), and on the object store
    storage names (its AWS environment and LAKEHOUSE_WAREHOUSE), if any."""
    env = step_env(**metastore, **(storage or {}), LAKEHOUSE_HOME=str(home))
    env.update(LAKEHOUSE_SCHEMA="analytics", DBT_TARGET=target)
    # the driver from `lakehouse jars`, as a user's session finds it; Hive's locks by default
    for name in ("LAKEHOUSE_METASTORE_CLASSPATH", "LAKEHOUSE_HIVE_LOCKS"):
        env.pop(name, None)
    if not initialized:
        made = metastore_init(env, "--format", table_format)
        assert made.startswith("Created the metastore schema (Hive 2.3.0)"), made
    return env


class Writer:
    """A scheduler's process running a plan of steps; its output goes to files (the two writers
    wait for each other, so neither may block on a full pipe)."""

    def __init__(self, env: dict[str, str], plan: list, dump: list[str], name: str) -> None:
        home = Path(env["LAKEHOUSE_HOME"])
        home.mkdir(parents=True, exist_ok=True)
        self.out, self.err = home / f"{name}.out", home / f"{name}.err"
        with self.out.open("w") as out, self.err.open("w") as err:
            self.process = subprocess.Popen(
                command(plan, dump, keep_going=True),
                cwd=PROJECT_DIR,
                env={**env, "DBT_LOG_PATH": str(home / f"logs-{name}")},
                stdout=out,
                stderr=err,
                start_new_session=True,  # its group (the JVM too) is frozen and let go as one
            )
        self.log = home / f"logs-{name}" / "dbt.log"

    def outcomes(self) -> tuple[list[dict], dict]:
        """Its STEP lines and its DUMP, once it ended."""
        self.process.wait(timeout=900)
        lines = self.out.read_text().splitlines()
        steps = [json.loads(x[5:]) for x in lines if x.startswith("STEP ")]
        dumps = [json.loads(x[5:]) for x in lines if x.startswith("DUMP ")]
        assert steps or dumps, self.err.read_text()[-3000:]
        return steps, (dumps[0] if dumps else {})


@pytest.mark.slow
def test_concurrent_runs_all_commit_the_loser_planning_again_and_never_duplicate(
    tmp_path, target, table_format, fresh_metastore, s3_store
):
    # on object storage, as a team's parallel runs share one: every table in the bucket
    bucket, storage = s3_store[0] / "data" / BUCKET, s3_store[1]
    prefix = f"concurrent-{table_format}"
    storage = {**storage, "LAKEHOUSE_WAREHOUSE": f"s3a://{BUCKET}/{prefix}"}
    cluster, database, metastore = fresh_metastore
    env = writers_env(
        tmp_path / "lakehouse", target, table_format, metastore, storage, initialized=True
    )
    # The first writer waits for the server, loads the setup while the second starts its
    # session; both then meet at the barrier and run their steps together, and meet again when
    # both are done. On Iceberg the first then meets this test (which leaves a dead writer's
    # lock behind, below) and seeds. The tables are dumped after that: as the concurrent runs
    # left them (no rerun, which would repair a lost row before the check).
    barriers = ("served", "start", "done", "dead", "frozen", "compact")
    served, start, done, dead, frozen, compact = [
        ["barrier", str(tmp_path / name), 2] for name in barriers
    ]
    additive, cart = CONCURRENT[1]
    dead_lock = [dead, ["seed"]] if table_format == "iceberg" else []
    plans = [
        [served, *SETUP, start, *CONCURRENT[0], done, *dead_lock],
        # while the first is frozen mid-MERGE (collide): the second commits the same batch;
        # then, in the first's MERGE of the cart days, its own cart days and a compaction
        [start, frozen, additive, compact, cart, ["maintain", CART], done],
    ]
    dump = [CART, "customer_balances_additive"]
    writers = [
        Writer(env, plan, dump if n == 0 else [], f"writer{n}") for n, plan in enumerate(plans)
    ]
    server = None
    try:
        # the server starts while the writers start their sessions, before any schema exists
        server, analyst = serve(env, tmp_path / "server", table_format)
        assert [row for row in analyst("show schemas") if row[0] == "analytics"] == []
        Path(served[1]).mkdir(parents=True, exist_ok=True)
        (Path(served[1]) / "test").touch()
        tables = bucket / prefix / "analytics.db"
        collide(writers, tables / "customer_balances_additive", Path(frozen[1]), additive)
        # a ten-day-old object a killed writer left in the cart table's folder of the bucket
        orphan = plant_orphan(tables / CART, table_format, {"id": [9]})
        collide(writers, tables / CART, Path(compact[1]), ["maintain", CART])
        if dead_lock:
            meet(Path(dead[1]), writers[0], cluster, database)
        (first, tables), (second, _) = [writer.outcomes() for writer in writers]
        served_rows = as_text(analyst(f"select * from analytics.{CART}"))
    finally:
        for writer in writers:
            if writer.process.poll() is None:
                writer.process.kill()
                writer.process.wait()
        if server is not None:
            stop(server)

    setup = first[: len(SETUP)]
    concurrent = [first[len(SETUP) : len(SETUP) + 2], second]
    assert [step["step"] for step in second] == [additive, cart, ["maintain", CART]]
    assert all(step["ok"] for step in setup), setup
    # every concurrent step committed or found nothing to do: no conflict failed a run
    assert all(step["ok"] for steps in concurrent for step in steps), concurrent
    # the frozen writer's commits met the other's (a MERGE, then a MERGE and a compaction),
    # and it planned again each time
    log = writers[0].log.read_text()
    for table in ("customer_balances_additive", CART):
        assert f"idempotent_merge analytics.{table}: attempt 1 of 5 met a concurrent commit" in log
    assert tables["customer_balances_additive"]["rows"] == ADDITIVE
    assert tables[CART]["rows"] == CART_ROWS
    # on Iceberg the seed replaced its tables although a dead writer's lock was left on one
    assert first[len(SETUP) + 2 :] == ([{"step": ["seed"], "ok": True}] if dead_lock else [])
    # the server, started before the schema existed, serves what the writers committed
    assert served_rows == CART_ROWS
    # the maintenance deleted the killed writer's ten-day-old object, not the data file the
    # frozen writer had just written for its commit (its rows are in the table above)
    assert not orphan.exists()
    # the tables are in the bucket, and nothing of them on local disk
    assert {p.name for p in (bucket / prefix / "analytics.db").iterdir()} >= {
        CART,
        "customer_balances_additive",
    }
    assert not list((tmp_path / "lakehouse").glob(f"{table_format}/warehouse/**/*.parquet"))


def collide(writers: list[Writer], table: Path, barrier: Path, step: list) -> None:
    """Freeze the first writer while its MERGE into table writes (a data file written, its
    commit not yet made), let the second writer through barrier until it has run step, then
    let the first go on: its commit meets what the second committed."""
    first, second = writers
    marker = f"merge into analytics.{table.name} as target"
    while not (first.log.exists() and marker in first.log.read_text()):
        assert first.process.poll() is None, first.err.read_text()[-3000:]
        time.sleep(0.01)
    before = data_files(table)
    os.killpg(first.process.pid, signal.SIGSTOP)
    try:
        while not data_files(table) - before:
            assert first.process.poll() is None, first.err.read_text()[-3000:]
            os.killpg(first.process.pid, signal.SIGCONT)
            time.sleep(0.01)
            os.killpg(first.process.pid, signal.SIGSTOP)
        barrier.mkdir(parents=True, exist_ok=True)
        (barrier / "test").touch()
        while f'"step": {json.dumps(step)}' not in second.out.read_text():
            assert second.process.poll() is None, second.err.read_text()[-3000:]
            time.sleep(0.05)
    finally:
        os.killpg(first.process.pid, signal.SIGCONT)


def data_files(table: Path) -> set[Path]:
    return {p for p in table.rglob("*.parquet") if "_delta_log" not in p.parts}


def serve(env: dict[str, str], logs: Path, table_format: str):
    """`lakehouse serve` on the writers' metastore and warehouse (the Popen, once it serves) and
    an analyst's JDBC query function."""
    ports = free_ports()
    password = "password-for-the-tests"
    server_env = {
        **env,
        "LAKEHOUSE_SERVER_TOKEN": "token-for-the-tests",
        "LAKEHOUSE_THRIFT_PASSWORD": password,
        "LAKEHOUSE_CONNECT_PORT": str(ports[0]),
        "LAKEHOUSE_THRIFT_PORT": str(ports[1]),
    }
    process = spawn(EMBEDDED_TARGETS[table_format], server_env, logs)
    return process, jdbc_query("127.0.0.1", ports[1], password)


def meet(folder: Path, writer: Writer, cluster: Path, database: str) -> None:
    """Wait for the writer at the barrier in folder; leave the Hive lock an Iceberg writer
    killed 50 s ago (SIGKILL while it held the commit lock of a seed table) leaves behind, as
    hive_locks holds it (Delta takes no metastore lock); then let the writer go on. Its session expires the lock (a lock
    without a heartbeat for a minute is a dead writer's) and its seed commits; without that,
    Iceberg waits three minutes for the lock and the seed fails."""
    while not folder.exists() or not any(folder.iterdir()):
        assert writer.process.poll() is None, writer.err.read_text()[-3000:]
        time.sleep(0.05)
    psql(
        cluster,
        database,
        # its id from the lock sequence, as Hive took it: a lock waits only on earlier ones
        "with taken as (update lakehouse.next_lock_id set nl_next = nl_next + 1 "
        "returning nl_next - 1 as id) "
        "insert into lakehouse.hive_locks (hl_lock_ext_id, hl_lock_int_id, hl_txnid, hl_db, "
        "hl_table, hl_lock_state, hl_lock_type, hl_last_heartbeat, hl_acquired_at, hl_user, "
        "hl_host, hl_agent_info) select id, 1, 0, 'analytics', 'customer_balance_batches', "
        "'a', 'e', ms, ms, 'killed', 'elsewhere', 'Iceberg-killed' from taken, (select "
        "(extract(epoch from now()) * 1000)::bigint - 50000 as ms) as killed",
    )
    (folder / "test").touch()


@pytest.mark.slow
@pytest.mark.skipif(not SOAK, reason="make soak: a real kill, then a minute for the lock to expire")
def test_a_writer_killed_holding_the_commit_lock_blocks_no_later_run(
    tmp_path, target, table_format, postgres
):
    """The dead writer of `meet` above for real (Iceberg; Delta takes no metastore lock): a
    seed process frozen as a table's new metadata file appears, stepped in 2 ms slices until
    hive_locks holds its lock, and killed there. The lock stays behind; the next process's seed
    commits once its session has expired it (no heartbeat for hive.txn.timeout, 60 s)."""
    if table_format != "iceberg":
        pytest.skip("Delta commits through its log: no metastore lock to leave behind")
    home = tmp_path / "lakehouse"
    env = writers_env(home, target, table_format, postgres[1])
    ready = tmp_path / "ready"
    process = subprocess.Popen(
        command([["barrier", str(ready), "1"], ["seed"]]),
        cwd=PROJECT_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        while not ready.exists() or not any(ready.iterdir()):
            assert process.poll() is None, "the writer ended before its session started"
            time.sleep(0.05)
        assert kill_holding_a_lock(process, home / "iceberg" / "warehouse", postgres[0])
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert locks(postgres[0]) >= 1  # the dead writer's lock, left behind

    steps, _ = Writer(env, [["seed"]], [], "rerun").outcomes()
    assert steps == [{"step": ["seed"], "ok": True}], steps
    assert locks(postgres[0]) == 0


def locks(cluster: Path) -> int:
    return int(psql(cluster, "metastore", "select count(*) from lakehouse.hive_locks"))


def kill_holding_a_lock(process: subprocess.Popen, warehouse: Path, cluster: Path) -> bool:
    """SIGKILL the process group while it holds a Hive lock; False if it ended first."""

    def metadata() -> set[Path]:
        return set(warehouse.glob("*/*/metadata/*.metadata.json"))

    known = metadata()
    while process.poll() is None:
        if metadata() - known:
            os.killpg(process.pid, signal.SIGSTOP)
            for _ in range(50):
                if locks(cluster):
                    os.killpg(process.pid, signal.SIGKILL)
                    return True
                os.killpg(process.pid, signal.SIGCONT)
                time.sleep(0.002)
                os.killpg(process.pid, signal.SIGSTOP)
            os.killpg(process.pid, signal.SIGCONT)
            known = metadata()
        time.sleep(0.002)
    return False
