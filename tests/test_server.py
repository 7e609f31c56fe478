"""The lakehouse server: dbt, analysts and BI tools on the same tables at the same time.

One server per format (`lakehouse serve --target local|local_iceberg`, what `make serve` runs)
on a warehouse of its own, started with a token and a password on 127.0.0.1 and free ports, so one start covers
dbt through Spark Connect, the analysts' endpoints and the authentication. dbt runs as a
scheduler runs it: processes of their own (`--target server` / `server_iceberg`), which start
no JVM. The tests run in file order on the one server: those after the pipelines test read the
tables it wrote, and the last one stops the server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.analysts import JdbcReader, as_text, jdbc_query
from support.docs import documented_columns_missing
from support.expected import CART, JAN_1, JAN_2, JAN_3, ORDERS, ORDERS_AFTER_OCT_3
from support.passes import SOAK
from support.pipelines import ORDERS_STEP, PLAN, TABLES, columns_of
from support.processes import children_of, free_ports, step_env

from dbt.adapters.lakehouse.commands.runner import CLIENT_LEFT
from dbt.adapters.lakehouse.server.profile import load_target
from dbt.adapters.lakehouse.session.metastore_lock import metastore_problem
from retry_safe.project import EMBEDDED_TARGETS, PROJECT_DIR, SERVER_TARGETS, interval_flags
from retry_safe.scenario import command
from retry_safe.server_process import serve_command, spawn, spawn_runner, stop, through_runner

TOKEN = "token-for-the-tests"
PASSWORD = "password-for-the-tests"
ANALYSTS = os.path.join(os.path.dirname(__file__), "support", "analysts.py")
# Every committed state an analyst may see while the plan runs (None: not created yet).
STATES = {
    f"analytics.{CART}": [None, as_text(JAN_1), as_text(JAN_1 + JAN_2 + JAN_3)],
    "analytics.orders": [None, as_text(ORDERS_AFTER_OCT_3), as_text(ORDERS)],
}
CART_STEPS = [step for step in PLAN if step[0] in (CART, f"{CART}_df")]
# `make test`: the orders pipeline beside the cart (the two the analysts read: a SQL and a
# Python model each, a first load and a MERGE each); `make soak`: every other pipeline too (F1
# drivers, customer balances), as the embedded suite runs them.
OTHER_STEPS = [
    step
    for step in PLAN
    if step not in CART_STEPS and step[0] != "seed" and (SOAK or step[0] == ORDERS_STEP)
]
# the orders file of October 4 as `dbt build`: the audited orders staged (Iceberg: a branch;
# Delta: views of the Connect session), tested and published through the server while the
# analysts read
OTHER_STEPS[1] = ["build", *OTHER_STEPS[1]]
SERVED = {
    table: expected
    for table, expected in TABLES.items()
    if SOAK or table.startswith(CART) or table in ("orders", "rejected_orders")
}
# Reruns once everything is loaded, out of order (no change, no commit): `make test` the first
# interval of the cart and of the orders after their later ones; `make soak` every interval.
RERUNS = (
    [CART_STEPS[2], CART_STEPS[0], OTHER_STEPS[1], OTHER_STEPS[0]]
    if SOAK
    else [CART_STEPS[0], OTHER_STEPS[0]]
)


@dataclass
class Server:
    process: subprocess.Popen
    env: dict[str, str]
    connect_port: int
    thrift_port: int
    banner: str
    home: Path

    @property
    def url(self) -> str:
        return f"sc://localhost:{self.connect_port}/;token={TOKEN}"

    def run(self, args: list[str], **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            args,
            cwd=PROJECT_DIR,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )

    def steps(self, plan: list[list[str]], dump: list[str] = ()) -> dict:
        done = self.run(command(plan, dump))
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        # dbt's own lines only: nothing from pyspark's Connect client or pandas-on-Spark
        assert done.stderr == "", done.stderr[-3000:]
        lines = [x for x in done.stdout.splitlines() if x.startswith("DUMP ")]
        return json.loads(lines[0].removeprefix("DUMP ")) if lines else {}

    def jdbc(self, password: str = PASSWORD):
        return jdbc_query("127.0.0.1", self.thrift_port, password)


@pytest.fixture(scope="module")
def server(tmp_path_factory, table_format) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("server") / "lakehouse"
    connect_port, thrift_port = free_ports()
    env = step_env(
        LAKEHOUSE_HOME=str(home),
        LAKEHOUSE_SCHEMA="analytics",
        LAKEHOUSE_SERVER_TOKEN=TOKEN,
        LAKEHOUSE_THRIFT_PASSWORD=PASSWORD,
        LAKEHOUSE_CONNECT_PORT=str(connect_port),
        LAKEHOUSE_THRIFT_PORT=str(thrift_port),
        DBT_TARGET=SERVER_TARGETS[table_format],
        DBT_LOG_PATH=str(home / "logs"),
    )
    process = spawn(EMBEDDED_TARGETS[table_format], env, home / "logs")
    banner = (home / "logs" / "server.out").read_text()
    served = Server(process, env, connect_port, thrift_port, banner, home)
    yield served
    stop(served.process)  # the module's server, or the one started after the kill


@pytest.mark.format_independent
def test_another_address_without_secrets_is_refused_before_anything_starts(tmp_path):
    env = {**step_env(LAKEHOUSE_HOME=str(tmp_path)), "LAKEHOUSE_SERVER_TOKEN": ""}
    done = subprocess.run(
        serve_command("local", "--bind", "0.0.0.0"),
        cwd=PROJECT_DIR,
        env={key: value for key, value in env.items() if key != "LAKEHOUSE_THRIFT_PASSWORD"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "lakehouse serve: Refusing to listen on 0.0.0.0 without authentication: anyone who can "
        "reach that address could read and write every table. Set LAKEHOUSE_SERVER_TOKEN and "
        "LAKEHOUSE_THRIFT_PASSWORD (the Spark Connect token and the JDBC password), or bind to "
        "127.0.0.1."
    )
    assert not (tmp_path / "delta").exists()


def test_the_banner_says_how_to_connect_and_never_the_secrets(server):
    assert f"sc://localhost:{server.connect_port}/;token=$LAKEHOUSE_SERVER_TOKEN" in server.banner
    assert f"jdbc:hive2://127.0.0.1:{server.thrift_port}/analytics" in server.banner
    assert '-n analyst -p "$LAKEHOUSE_THRIFT_PASSWORD"' in server.banner
    assert TOKEN not in server.banner and PASSWORD not in server.banner


def test_a_second_server_on_the_same_home_is_refused_naming_the_first(server, table_format):
    done = server.run(serve_command(EMBEDDED_TARGETS[table_format]))
    assert done.returncode == 2, done.stderr
    assert "A lakehouse server already serves" in done.stderr
    assert f"sc://localhost:{server.connect_port}" in done.stderr
    assert f"kill {server.process.pid}" in done.stderr


def test_an_embedded_run_meanwhile_stops_in_one_line_naming_the_server(server, target):
    done = server.run(command([["seed"]]), DBT_TARGET=target)
    assert done.returncode != 0
    assert "is in use by process" in done.stdout + done.stderr
    assert "lakehouse serve" in done.stdout + done.stderr


def test_pipelines_through_the_server_while_analysts_read_give_the_documents_tables(
    server, tmp_path
):
    """Two dbt processes at once (cart; orders and customer balances), then reruns, while an
    analyst on JDBC and one on Spark Connect read the cart and orders tables in a loop."""
    server.steps([["seed"]])
    tables = list(STATES)
    jdbc = JdbcReader("127.0.0.1", server.thrift_port, PASSWORD, tables)
    jdbc.start()
    stop_file = tmp_path / "stop"
    connect_log = tmp_path / "connect-analyst.log"  # pyspark logs each failed read there
    connect = subprocess.Popen(
        [sys.executable, ANALYSTS, "connect", server.url, str(stop_file), *tables],
        cwd=PROJECT_DIR,
        env=server.env,
        stdout=subprocess.PIPE,
        stderr=connect_log.open("w"),
        text=True,
    )
    try:
        logs = [tmp_path / "cart-writer.log", tmp_path / "other-writer.log"]
        writers = [
            subprocess.Popen(
                command(plan),
                cwd=PROJECT_DIR,
                env=server.env,
                stdout=log.open("w"),
                stderr=subprocess.STDOUT,
            )
            for plan, log in zip((CART_STEPS, OTHER_STEPS), logs, strict=True)
        ]
        try:
            for writer, log in zip(writers, logs, strict=True):
                writer.wait(timeout=900)
                assert writer.returncode == 0, log.read_text()[-3000:]
        finally:
            for writer in writers:
                if writer.poll() is None:
                    writer.kill()
                    writer.wait()
        result = server.steps(RERUNS, list(SERVED))  # every model the writers built
    finally:
        stop_file.touch()
        jdbc.done.set()
        try:
            connect_output = connect.communicate(timeout=300)[0]
        finally:
            if connect.poll() is None:
                connect.kill()
                connect.wait()
        jdbc.join(timeout=60)
    assert jdbc.error is None, jdbc.error
    line = next((x for x in connect_output.splitlines() if x.startswith("READS ")), None)
    assert line, connect_log.read_text()[-3000:]
    reads = {"JDBC": jdbc.reads, "Spark Connect": json.loads(line.removeprefix("READS "))}
    for client, client_reads in reads.items():
        for table in tables:
            of_table = [read["rows"] for read in client_reads if read["table"] == table]
            assert len(of_table) >= 5, f"{client} read {table} only {len(of_table)} times"
            wrong = [rows for rows in of_table if rows not in STATES[table]]
            assert wrong == [], f"{client} saw a state of {table} never committed: {wrong[0]}"
            # once created, the table never vanishes (no first load replaces it: on Iceberg's
            # session catalog `create or replace` drops the table, then creates it again)
            created = next(
                (n for n, rows in enumerate(of_table) if rows is not None), len(of_table)
            )
            assert None not in of_table[created:], f"{client} saw {table} vanish after it existed"
            # the reads ran while the commits happened (not all before or all after them)
            states = {json.dumps(rows) for rows in of_table}
            assert len(states) >= 2, f"{client} saw only one state of {table}: {states}"
    # shown with pytest -s: how much the analysts read while dbt wrote
    print("analyst reads:", {client: len(client_reads) for client, client_reads in reads.items()})
    for table, (columns, expected, _) in SERVED.items():
        assert columns_of(result[table], columns) == as_text(expected), table
    # the first load and one MERGE each; the reruns committed nothing
    assert len(result[CART]["history"]) == len(result["orders"]["history"]) == 2


def test_docs_generate_through_the_server_catalogs_every_model_with_its_columns(server):
    """Runs after the pipelines: every model they built has its table and columns; a model
    not built (outside `make soak`) has no catalog entry."""
    target_path = server.home / "docs"
    done = server.run(
        [
            sys.executable,
            "-m",
            "dbt.cli.main",
            "docs",
            "generate",
            "--target-path",
            str(target_path),
        ],
        DBT_WRITE_JSON="true",  # the manifest, which the check reads beside the catalog
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    not_built = [f"model.retry_safe.{name}" for name in TABLES if name not in SERVED]
    assert documented_columns_missing(target_path) == dict.fromkeys(not_built, [])


@pytest.mark.parametrize(
    ("token", "message"),
    [(None, "No authentication token provided"), ("wrong", "Invalid authentication token")],
)
def test_spark_connect_without_the_token_is_refused(server, token, message):
    url = f"sc://localhost:{server.connect_port}" + (f"/;token={token}" if token else "")
    code = (
        "import sys; from pyspark.sql import SparkSession; "
        "SparkSession.builder.remote(sys.argv[1]).getOrCreate().sql('select 1').collect()"
    )
    done = server.run([sys.executable, "-c", code, url])
    assert done.returncode != 0
    assert message in done.stderr


@pytest.mark.parametrize("password", ["wrong", ""])
def test_jdbc_with_a_wrong_password_is_refused(server, password):
    with pytest.raises(Exception) as refused:
        server.jdbc(password)("select 1")
    assert "Error validating the login" in str(refused.value) or "wrong password" in str(
        refused.value
    ), refused.value


# Each statement an analyst tries on JDBC (the last one of a list is the one refused).
REFUSED = {
    "drop": ["drop table analytics.orders"],
    "insert": ["insert into analytics.orders select * from analytics.orders"],
    "merge": [
        "merge into analytics.orders as target using analytics.orders as source "
        "on target.order_id = source.order_id when matched then delete"
    ],
    "delete": ["delete from analytics.orders"],
    "update": ["update analytics.orders set status = 'lost'"],
    "create": ["create table analytics.analyst_copy as select * from analytics.orders"],
    "alter": ["alter table analytics.orders add columns (note string)"],
    "truncate": ["truncate table analytics.orders"],
    "call": ["call spark_catalog.system.expire_snapshots(table => 'analytics.orders')"],
    "reflect": ["select reflect('java.lang.System', 'getProperty', 'user.dir')"],
    # the server's environment holds its token: files are read through tables only
    "file by path": ["select * from binaryFile.`/proc/self/environ`"],
    # a JDBC session claiming to be a Spark Connect operation
    "spoofed tag": [
        "set spark.job.tags=SparkConnect_OperationTag_x",
        "drop table analytics.orders",
    ],
}
REFUSALS = {
    "drop": "DROP TABLE (DropTable) is a write",
    "insert": "INSERT (AppendData) is a write",
    "call": "CALL (Call) is a write",
    "reflect": "reflect() can call any Java method",
    "file by path": "reading files by path (binaryFile.`/proc/self/environ`) is not allowed",
    "spoofed tag": "DROP TABLE (DropTable) is a write",
}


@pytest.mark.parametrize("attempt", list(REFUSED))
def test_an_analyst_on_jdbc_cannot_change_a_table_nor_read_the_servers_files(
    server, table_format, attempt
):
    """After the pipelines test: the orders table exists with the documents' rows."""
    query = server.jdbc()
    history = (
        "select * from analytics.orders.snapshots"
        if table_format == "iceberg"
        else "describe history analytics.orders"
    )
    commits = len(query(history))
    *before, refused_statement = REFUSED[attempt]
    for statement in before:
        query(statement)
    with pytest.raises(Exception) as refused:
        query(refused_statement)
    message = str(refused.value)
    assert "lakehouse server: " in message
    assert "JDBC/Thrift sessions are read-only" in message
    assert REFUSALS.get(attempt, " is a write") in message
    assert as_text(query("select * from analytics.orders")) == as_text(ORDERS)
    assert len(query(history)) == commits
    assert "analyst_copy" not in str(query("show tables in analytics"))


def test_the_printed_beeline_command_reads_the_tables(server):
    line = next(x for x in server.banner.splitlines() if "beeline:" in x)
    beeline = line.split("beeline:", 1)[1].strip()  # as printed, password variable included
    done = server.run(
        [
            "bash",
            "-c",
            f"{beeline} --silent=true --outputformat=csv2 -e "
            "'select count(*) as n from analytics.orders'",
        ],
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # beeline's output ends with the CSV result: its header, then the count
    assert done.stdout.split()[-2:] == ["n", str(len(ORDERS))]


def gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not Path(f"/proc/{pid}").exists()


# What is under test is the runner's processes (arguments, streams, exit status, a killed
# client's dbt ended); a kill's commit on either format is test_killed_runs' business: one pass.
@pytest.mark.format_independent(run_in="local_iceberg")
def test_a_scheduler_through_the_warm_runner_loads_intervals_and_a_killed_client_ends_its_dbt(
    server, tmp_path
):
    """`lakehouse dbt` as a scheduler runs it: the cart's January 1, then January 2 killed
    mid-run (its client SIGKILLed: the dbt it started must end with it), then retried."""
    # the clients' environment, not the runner's, is their dbt's: its schema and its log folder
    env = {
        **server.env,
        "LAKEHOUSE_SCHEMA": "through_runner",
        "DBT_LOG_PATH": str(tmp_path / "client-logs"),
    }
    socket_path = tmp_path / "runner.sock"

    def lakehouse_dbt(*args: str) -> list[str]:
        return [*through_runner(socket_path), *args]

    def interval(day: int) -> list[str]:
        start, end = f"2026-01-{day:02d}", f"2026-01-{day + 1:02d}"
        return lakehouse_dbt("run", "--select", CART, *interval_flags(start, end))

    runner = spawn_runner(socket_path, server.env, tmp_path)
    try:
        for step in (lakehouse_dbt("seed", "--select", "retail_session_products"), interval(1)):
            done = server.run(step, **env)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        # dbt wrote to the client's own stdout, and its log where the client's environment says
        assert "Completed successfully" in done.stdout
        assert (tmp_path / "client-logs" / "dbt.log").exists()

        killed = subprocess.Popen(
            interval(2),
            cwd=PROJECT_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not (dbt_pids := children_of(runner.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert dbt_pids, "the runner started no dbt for the client"
        time.sleep(1.0)  # dbt is running (parsing, or its first statements)
        killed.kill()
        killed.wait()
        assert gone(dbt_pids[0], 2), "the killed client's dbt is still running"
        said = (tmp_path / "runner.out").read_text()
        assert f"{CLIENT_LEFT} dbt {dbt_pids[0]} and its processes killed" in said

        retried = server.run(interval(2), **env)
        assert retried.returncode == 0, retried.stdout[-3000:] + retried.stderr[-3000:]
    finally:
        stop(runner)
    assert not socket_path.exists()  # the runner removes its socket when it stops
    result = server.run(command([], [CART]), LAKEHOUSE_SCHEMA="through_runner")
    assert result.returncode == 0, result.stderr[-3000:]
    dumped = json.loads(next(x for x in result.stdout.splitlines() if x.startswith("DUMP "))[5:])
    columns = TABLES[CART][0]
    assert columns_of(dumped[CART], columns) == as_text(JAN_1 + JAN_2)
    # the first load and Jan 2's MERGE, once: by the killed run, or else by the retry
    assert len(dumped[CART]["history"]) == 2


# What is under test is the processes (the client's line, the server's exit, the restart); the
# killed run re-applies a loaded interval, so no commit of either format is at stake: one pass,
# and `make soak` only (about 100 s: the client's 25 s of retries, a cold server, a cold rerun).
# `make test` keeps the client's line (tests/unit/test_connect_method.py renders it from the
# error pyspark raises) and a kill of each format's writes mid-commit (tests/test_killed_runs.py).
@pytest.mark.format_independent(run_in="local_iceberg")
@pytest.mark.skipif(not SOAK, reason="make soak: the server's JVM killed mid-run, then restarted")
def test_a_server_killed_mid_run_ends_the_run_in_one_line_and_serves_again_at_once(
    server, table_format
):
    """The module's server, its JVM killed (SIGKILL) while a scheduler's `dbt run` of a cart
    interval writes through it: the client gives up within 60 seconds in one line and exits;
    the server's process exits with status 3 and one line; `lakehouse serve` starts again at
    once on the same warehouse (the last test stops it); the rerun leaves the tables exact."""
    logs = server.home / "logs"
    served = server.process
    selector, start, end = CART_STEPS[2]
    output = server.home / "killed-run.out"
    with output.open("w") as stdout:
        client = subprocess.Popen(
            [str(Path(sys.executable).with_name("dbt")), "run", "--select", selector,
             f"{selector}_df", *interval_flags(start, end)],
            cwd=PROJECT_DIR, env=server.env, stdout=stdout, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while " START " not in output.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        jvm = subprocess.run(
            ["pgrep", "-x", "java", "-P", str(served.pid)], capture_output=True, text=True
        )
        os.kill(int(jvm.stdout.split()[0]), signal.SIGKILL)
        killed = time.monotonic()
        client.wait(timeout=120)
        assert time.monotonic() - killed < 60
    finally:
        if client.poll() is None:
            client.kill()
        stop(served)  # the lakehouse serve process, if it did not end on its own
    said = output.read_text()
    assert client.returncode == 1, said[-3000:]
    assert (
        f"The lakehouse server at localhost:{server.connect_port} stopped answering during "
        "this run (connection lost, retried for 25 seconds). Each model's change commits whole "
        "or not at all, so rerunning the same selection and interval is safe once a server "
        "serves again"
    ) in " ".join(said.split()), said[-3000:]
    for noise in ("StatusCode", "RETRIES_EXCEEDED", "Traceback"):  # pyspark's, not ours
        assert noise not in said, said[-3000:]
    assert served.returncode == 3
    assert (
        "lakehouse serve: the server's JVM exited while serving (killed by signal 9). The "
        "tables hold only committed runs"
    ) in (logs / "server.err").read_text()

    # no lock left behind; the last test stops this one
    server.process = spawn(EMBEDDED_TARGETS[table_format], server.env, logs)
    result = server.steps(CART_STEPS[2:], [CART, f"{CART}_df"])
    for table in (CART, f"{CART}_df"):
        columns, expected, _ = TABLES[table]
        assert columns_of(result[table], columns) == as_text(expected), table
        assert len(result[table]["history"]) == 2, table  # the kill and the rerun: no commit


def test_ctrl_c_stops_the_server_and_releases_the_metastore(server, table_format, monkeypatch):
    """Last: stops the server (under `make soak`, in the Iceberg pass, the one started again
    after the kill)."""
    assert stop(server.process) == 0, (server.home / "logs" / "server.err").read_text()[-3000:]
    assert "Stopping the lakehouse server." in (server.home / "logs" / "server.out").read_text()
    monkeypatch.setenv("LAKEHOUSE_HOME", str(server.home))
    served = load_target(str(PROJECT_DIR), None, EMBEDDED_TARGETS[table_format])
    assert metastore_problem(served.settings) is None
    java = subprocess.run(["pgrep", "-f", str(server.home)], capture_output=True, text=True)
    assert java.stdout.strip() == "", f"a process still uses the server's home: {java.stdout}"
    assert not (server.home / table_format / "server.json").exists()
