"""`make airflow-demo`: the reference pipelines' days backfilled by a real Airflow, one task's
dbt killed mid-run, and what came out checked.

    python -m retry_safe.airflow_demo [--max-active-runs N] [--target local|local_iceberg]
                                      [--kill DAG.TASK@DAY | --no-kill] [--parallelism P]
                                      [--no-refused-day]

Everything lives in a folder of its own (.lakehouse/airflow-demo, made anew): a PostgreSQL
server (retry_safe.postgres) holding Airflow's metadata database and the Spark metastore that
the parallel tasks share, the warehouse, AIRFLOW_HOME and its logs. Then:

1. `lakehouse metastore init`, `dbt parse` (the manifest the DAGs are rendered from) and
   `airflow db migrate`; `airflow standalone` (scheduler, DAG processor, API server,
   triggerer; LocalExecutor) on orchestration/airflow/dags;
2. the seeds' DAG, triggered once;
3. every pipeline's backfill over its reference days (support/pipelines.py's plan), the four
   pipelines at once, each with up to N runs at once (--max-active-runs, never more than its
   DAG allows), the first day's (its tables' first load) among them; the DAGs' end_date is the
   last day, so the scheduler adds no run of its own;
4. one task's dbt (--kill, default the F1 pipeline's on November 2) SIGKILLed once its model
   has started: Airflow retries it;
5. the checks: every run succeeded, no task but the killed one needed a second attempt (none
   failed on a conflict), every table holds the reference rows, and `lakehouse intervals
   --json` lists each model's days as loaded with none missing;
6. bad input (--no-refused-day skips it): `airflow dags test` of October 5, a day without its
   change file, retries off: the run fails with the strategy's one line in the task's log, and
   every table still holds the reference rows.

It prints a summary (runs, task attempts, conflicts the strategy absorbed, whether partial
parsing held, wall time) and writes it to summary.json in the folder, then stops all it
started (Airflow and every process under it, PostgreSQL), also on a failure or Ctrl-C. Exit
status 0 when every check passed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from dbt.adapters.lakehouse.tables.ledger import iso
from retry_safe import postgres
from retry_safe.cluster import free_port
from retry_safe.project import PROJECT_DIR, SERVER_TARGETS, TARGETS, table_format

# Each pipeline's reference days (the first and the last, each a daily run), as the scenario
# plan loads them: tests/support/pipelines.py holds the tables after them.
DAYS = {
    "lakehouse_cart_abandonment": ("2026-01-01", "2026-01-03"),
    "lakehouse_order_changes": ("2026-10-03", "2026-10-04"),
    "lakehouse_f1_drivers": ("2026-11-01", "2026-11-03"),
    "lakehouse_customer_balances": ("2026-11-01", "2026-11-02"),
}
SEEDS_DAG = "lakehouse_seeds"
DEFAULT_KILL = "lakehouse_f1_drivers.f1_drivers_build@2026-11-02"
# what the strategy logs when it merged again after another writer's commit
ABSORBED = re.compile(r"committed on attempt (\d) of \d after a concurrent commit")
# an audited publish onto a table another run published since the stage (lakehouse_publish_audited)
AUDITED_AGAIN = re.compile(r"audited again on \S+ \S+ after another writer committed")
FULL_PARSE = "Unable to do partial parsing"
# a dbt model that started running, in the task's log
STARTED = re.compile(r"\d+ of \d+ START ")
# A day of order_changes without its change file (October 5): the staging model refuses it
REFUSED_DAY = "2026-10-06T00:00:00+00:00"  # the logical date whose data interval is October 5
NO_FILE = (
    "analytics.stg_order_change_lines: no change file for "
    "landing/orders/order_changes_20261005.csv. Nothing was loaded."
)
SHORT_RUN_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC"


class DemoFailed(Exception):
    """A check that did not hold: the message says which and what was seen."""


def say(text: str) -> None:
    print(f"[airflow-demo {time.strftime('%H:%M:%S')}] {text}", flush=True)


# ---- processes -------------------------------------------------------------------------------


def children() -> dict[int, list[int]]:
    """Every process's children, from /proc."""
    tree: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        parent = int(text.rsplit(")", 1)[1].split()[1])
        tree.setdefault(parent, []).append(int(stat.parent.name))
    return tree


def descendants(pid: int) -> list[int]:
    tree, found, todo = children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def stop_tree(process: subprocess.Popen, grace: float = 30) -> None:
    """process and every process under it (task processes, dbt, their JVMs: some start
    sessions of their own), SIGTERM first, then SIGKILL what is left."""
    if process.poll() is not None:
        return
    pids = [process.pid, *descendants(process.pid)]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    for pid in [*pids, *descendants(process.pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait()


def command_line(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return []


# ---- the demo --------------------------------------------------------------------------------


class Demo:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.folder: Path = args.folder.resolve()
        self.target: str = args.target
        self.airflow_bin = PROJECT_DIR / ".airflow-venv" / "bin"
        self.standalone: subprocess.Popen | None = None
        self.postgres_started = False
        self.env: dict[str, str] = {}
        self.killed: dict = {}
        self.runs_at_once: dict[str, int] = {}

    # -- setup

    def prepare(self) -> None:
        if not (self.airflow_bin / "airflow").is_file():
            raise DemoFailed("Airflow's .airflow-venv is not installed: run `make airflow`")
        if self.folder.exists():
            postgres.stop(self.folder / "pg")
            shutil.rmtree(self.folder)
        self.folder.mkdir(parents=True)
        pg = self.folder / "pg"
        # about 20 connections per task that runs at once (docs/operating.md), and Airflow's own
        metastore = postgres.start(pg, settings={"max_connections": "400"})
        self.postgres_started = True
        postgres.psql(pg, "postgres", "create database airflow")
        admin = (pg / "admin-password").read_text()
        airflow_db = (
            f"postgresql+psycopg2://{postgres.ADMIN}:{admin}@127.0.0.1:"
            f"{postgres.port_of(pg)}/airflow"
        )
        api_port = free_port()
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("DBT_TARGET_PATH", "LAKEHOUSE_SCHEMA", "DBT_TARGET")
        }
        env.update(metastore)
        # airflow standalone starts its parts as `airflow <part>`
        env["PATH"] = f"{self.airflow_bin}{os.pathsep}{env.get('PATH', '')}"
        env.setdefault("LAKEHOUSE_JAVA_OPTIONS", SHORT_RUN_JAVA_OPTIONS)
        env.setdefault("LAKEHOUSE_JARS_DIR", str(PROJECT_DIR / ".jars"))
        env.setdefault("LAKEHOUSE_DBT", str(Path(sys.executable).with_name("dbt")))
        last_day = max(last for _first, last in DAYS.values())
        env.update(
            {
                "DBT_PROFILES_DIR": str(PROJECT_DIR / "profiles"),
                "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
                "LAKEHOUSE_HOME": str(self.folder / "lakehouse"),
                "LAKEHOUSE_AIRFLOW_TARGET": self.target,
                "LAKEHOUSE_AIRFLOW_MANIFEST": str(self.folder / "manifest" / "manifest.json"),
                "LAKEHOUSE_AIRFLOW_RETRY_DELAY": str(self.args.retry_delay),
                "LAKEHOUSE_AIRFLOW_END_DATE": last_day,
                "AIRFLOW_HOME": str(self.folder / "airflow"),
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": airflow_db,
                "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
                "AIRFLOW__CORE__PARALLELISM": str(self.args.parallelism),
                "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__CORE__DAGS_FOLDER": str(PROJECT_DIR / "orchestration/airflow/dags"),
                "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
                "AIRFLOW__API__PORT": str(api_port),
                "AIRFLOW__API__HOST": "127.0.0.1",
                "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": (
                    f"http://127.0.0.1:{api_port}/execution/"
                ),
                "AIRFLOW__COSMOS__ENABLE_TELEMETRY": "False",
                "AIRFLOW__COSMOS__CACHE_DIR": str(self.folder / "cosmos"),
                "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
                # each task process parses the DAG file first: on a busy machine, with several
                # starting at once, that took more than the default 30 s
                "AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT": "300",
                "AIRFLOW__DAG_PROCESSOR__DAG_FILE_PROCESSOR_TIMEOUT": "300",
            }
        )
        self.env = env

        # the metadata database while the metastore's schema and the manifest are written
        migrate = self.spawn([str(self.airflow_bin / "airflow"), "db", "migrate"], "migrate")
        self.run(
            [self.tool("lakehouse"), "metastore", "init", "--format", table_format(self.target)]
        )
        self.run(
            [
                self.tool("dbt"),
                "parse",
                "--project-dir",
                str(PROJECT_DIR),
                "--target",
                self.target,
                "--target-path",
                str(self.folder / "manifest"),
            ]
        )
        if migrate.wait(timeout=900) != 0:
            raise DemoFailed(f"airflow db migrate failed: {self.tail('migrate')}")
        say("PostgreSQL (metadata and metastore), the manifest and the metastore schema ready")

    def tool(self, name: str) -> str:
        return str(Path(sys.executable).with_name(name))

    def spawn(self, command: list[str], name: str, **options) -> subprocess.Popen:
        log = (self.folder / f"{name}.log").open("w")
        return subprocess.Popen(
            command,
            cwd=PROJECT_DIR,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            **options,
        )

    def tail(self, name: str, lines: int = 30) -> str:
        path = self.folder / f"{name}.log"
        return "\n".join(path.read_text().splitlines()[-lines:]) if path.exists() else ""

    def run(self, command: list[str], timeout: float = 900) -> str:
        done = subprocess.run(
            command,
            cwd=PROJECT_DIR,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            shown = " ".join(Path(command[0]).name.split() + command[1:3])
            raise DemoFailed(f"{shown} failed:\n{(done.stdout + done.stderr)[-3000:]}")
        return done.stdout

    def airflow(self, *args: str) -> str:
        return self.run([str(self.airflow_bin / "airflow"), *args])

    def sql(self, query: str) -> list[list[str]]:
        out = postgres.psql(self.folder / "pg", "airflow", query)
        return [line.split("|") for line in out.splitlines() if line]

    def start_airflow(self) -> None:
        self.standalone = self.spawn(
            [str(self.airflow_bin / "airflow"), "standalone"], "standalone"
        )
        wanted = {SEEDS_DAG, *DAYS}
        deadline = time.monotonic() + 600
        while True:
            if self.standalone.poll() is not None:
                raise DemoFailed(f"airflow standalone stopped:\n{self.tail('standalone')}")
            try:
                errors = self.sql("select filename, stacktrace from import_error")
                found = {row[0] for row in self.sql("select dag_id from dag")}
            except RuntimeError:  # the tables are there once migrated; the server may lag
                errors, found = [], set()
            if errors:
                raise DemoFailed(f"the DAG file did not import: {errors[0][1][-2000:]}")
            if wanted <= found:
                break
            if "Traceback" in (self.folder / "standalone.log").read_text(errors="replace"):
                raise DemoFailed(f"airflow standalone failed:\n{self.tail('standalone', 60)}")
            if time.monotonic() > deadline:
                raise DemoFailed(f"the DAGs did not appear: {sorted(found)}")
            time.sleep(2)
        say(
            f"airflow standalone up (LocalExecutor, parallelism {self.args.parallelism}), DAGs parsed"
        )

    # -- runs

    def runs(self, dag_ids: list[str]) -> list[list[str]]:
        listed = ", ".join(f"'{dag}'" for dag in dag_ids)
        return self.sql(
            "select dag_id, run_id, state, to_char(data_interval_start at time zone 'UTC', "
            f"'YYYY-MM-DD') from dag_run where dag_id in ({listed}) order by 1, 4"
        )

    def wait_runs(self, dag_ids: list[str], expected: int, timeout: float) -> list[list[str]]:
        deadline = time.monotonic() + timeout
        shown = ""
        while True:
            rows = self.runs(dag_ids)
            states = Counter(row[2] for row in rows)
            now = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
            if now != shown:
                say(f"runs: {now}")
                shown = now
            if len(rows) >= expected and all(row[2] in ("success", "failed") for row in rows):
                return rows
            if self.standalone is not None and self.standalone.poll() is not None:
                raise DemoFailed(f"airflow standalone stopped:\n{self.tail('standalone')}")
            if time.monotonic() > deadline:
                raise DemoFailed(f"the runs did not end within {timeout:.0f} s: {now}")
            self.maybe_kill()
            time.sleep(1)

    def seed(self) -> None:
        self.airflow("dags", "unpause", SEEDS_DAG)
        self.airflow("dags", "trigger", SEEDS_DAG)
        rows = self.wait_runs([SEEDS_DAG], 1, 1200)
        if rows[0][2] != "success":
            raise DemoFailed(f"the seeds' run failed: {self.failed_logs([SEEDS_DAG])}")
        say("seeds loaded (lakehouse_seeds)")

    def backfill(self) -> float:
        """Every pipeline's days with up to --max-active-runs runs at once, the first day's
        among them: the seconds until every run ended."""
        limits = {
            row[0]: int(row[1]) for row in self.sql("select dag_id, max_active_runs from dag")
        }
        for dag in DAYS:
            self.airflow("dags", "unpause", dag)
        started = time.monotonic()
        self.backfills(
            {
                dag: (first, last, min(self.args.max_active_runs, limits[dag]))
                for dag, (first, last) in DAYS.items()
            }
        )
        expected = sum(days(first, last) for first, last in DAYS.values())
        self.wait_runs(list(DAYS), expected, self.args.timeout)
        return time.monotonic() - started

    def backfills(self, plan: dict[str, tuple[str, str, int]]) -> None:
        """`airflow backfill create` of each DAG's days, all at once."""
        creating = {}
        for dag, (first, last, runs_at_once) in plan.items():
            self.runs_at_once[dag] = runs_at_once
            say(f"backfill {dag} {first} .. {last}, up to {runs_at_once} runs at once")
            command = [
                str(self.airflow_bin / "airflow"),
                "backfill",
                "create",
                "--dag-id",
                dag,
                "--from-date",
                first,
                "--to-date",
                last,
                "--max-active-runs",
                str(runs_at_once),
                "--reprocess-behavior",
                "none",
            ]
            creating[dag] = self.spawn(command, f"backfill-{dag}-{first}")
        for dag, process in creating.items():
            if process.wait(timeout=600) != 0:
                name = f"backfill-{dag}-{plan[dag][0]}"
                raise DemoFailed(f"airflow backfill create {dag} failed:\n{self.tail(name)}")

    # -- the kill

    def maybe_kill(self) -> None:
        if self.args.no_kill or self.killed:
            return
        dag, rest = self.args.kill.split(".", 1)
        task, day = rest.split("@")
        # the task's first attempt in the run of that day (a run is named after its interval's
        # end), once dbt started its model
        flag = f"'--event-time-start', '{day}T00:00:00'"
        logs = [
            log
            for log in (self.folder / "airflow" / "logs" / f"dag_id={dag}").glob(
                f"run_id=*/task_id={task}/attempt=1.log"
            )
            if flag in (text := log.read_text(errors="replace")) and STARTED.search(text)
        ]
        if not logs:
            return
        # a model's task selects fqn:...<model>, a whole pipeline's path:models/<pipeline>
        if task.endswith("_model_build"):
            selected = f".{task.removesuffix('_model_build')}"
        else:
            selected = f"path:models/{task.removesuffix('_build')}"
        for pid in map(int, filter(str.isdigit, os.listdir("/proc"))):
            argv = command_line(pid)
            if (
                "build" in argv
                and any(arg.endswith(selected) for arg in argv)
                and "--event-time-start" in argv
                and argv[argv.index("--event-time-start") + 1] == f"{day}T00:00:00"
                and any(Path(arg).name in ("dbt", "lakehouse") for arg in argv[:3])
            ):
                time.sleep(self.args.kill_after)
                os.kill(pid, signal.SIGKILL)
                self.killed = {"dag": dag, "task": task, "day": day, "pid": pid}
                say(f"SIGKILL to {task}'s dbt (pid {pid}) on {day}, its model running")
                return

    # -- the checks

    def task_instances(self) -> list[list[str]]:
        listed = ", ".join(f"'{dag}'" for dag in DAYS)
        return self.sql(
            "select ti.dag_id, ti.task_id, to_char(dr.data_interval_start at time zone 'UTC', "
            "'YYYY-MM-DD'), ti.state, ti.try_number from task_instance ti join dag_run dr on "
            f"dr.dag_id = ti.dag_id and dr.run_id = ti.run_id where ti.dag_id in ({listed}) "
            "order by 1, 3, 2"
        )

    def task_logs(self, dags: list[str]) -> list[Path]:
        found: list[Path] = []
        for dag in dags:
            found += sorted((self.folder / "airflow" / "logs" / f"dag_id={dag}").rglob("*.log"))
        return found

    def failed_logs(self, dags: list[str]) -> str:
        lines = []
        for log in self.task_logs(dags):
            text = log.read_text(errors="replace")
            if "Task failed" in text or "ERROR" in text:
                lines.append(f"{log}:\n" + "\n".join(text.splitlines()[-15:]))
        return "\n".join(lines[-3:])

    def check(self, seconds: float) -> dict:
        problems: list[str] = []
        runs = self.runs(list(DAYS))
        failed_runs = [row for row in runs if row[2] != "success"]
        if failed_runs:
            problems.append(f"runs not successful: {failed_runs}")
        instances = self.task_instances()
        attempts = sum(int(row[4]) for row in instances)
        retried = [row for row in instances if int(row[4]) > 1]
        killed = (self.killed.get("dag"), self.killed.get("task"), self.killed.get("day"))
        unexpected = [row for row in retried if tuple(row[:3]) != killed]
        if unexpected:
            problems.append(f"tasks that failed an attempt besides the killed one: {unexpected}")
        if self.killed and not any(tuple(row[:3]) == killed for row in retried):
            problems.append(f"the killed task {killed} was not retried")
        if not self.args.no_kill and not self.killed:
            problems.append(f"the task to kill ({self.args.kill}) was never seen running")
        absorbed, audited_again, full_parses, attempt_logs = Counter(), 0, 0, 0
        for log in self.task_logs(list(DAYS)):
            text = log.read_text(errors="replace")
            attempt_logs += 1
            full_parses += FULL_PARSE in text
            for match in ABSORBED.finditer(text):
                absorbed[match.group(1)] += 1
            audited_again += len(AUDITED_AGAIN.findall(text))
        problems += self.check_tables()
        problems += self.check_ledger()
        summary = {
            "target": self.target,
            "max_active_runs": self.args.max_active_runs,
            "parallelism": self.args.parallelism,
            "runs": len(runs),
            "runs_succeeded": len(runs) - len(failed_runs),
            "tasks": len(instances),
            "task_attempts": attempts,
            "retried": [row[:3] + [f"{row[4]} attempts"] for row in retried],
            "killed": self.killed,
            "conflicts_absorbed": sum(absorbed.values()),
            "conflicts_by_attempt": dict(absorbed),
            "publishes_audited_again": audited_again,
            "task_logs": attempt_logs,
            "full_parses": full_parses,
            "backfill_seconds": round(seconds, 1),
            "runs_at_once": dict(self.runs_at_once),
            "timings": timings(self.task_logs(list(DAYS))),
            "load_average": os.getloadavg(),
            "problems": problems,
        }
        (self.folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        return summary

    def refused_day(self) -> list[str]:
        """Bad input through Airflow, after the backfill: `airflow dags test` of October 5, which
        has no change file, with retries off. The run fails, the task's log holds the strategy's
        one line, and every table still holds the reference rows (nothing written)."""
        done = subprocess.run(
            [str(self.airflow_bin / "airflow"), "dags", "test", "lakehouse_order_changes",
             REFUSED_DAY],
            cwd=PROJECT_DIR,
            env={**self.env, "LAKEHOUSE_AIRFLOW_RETRIES": "0"},
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )  # fmt: skip
        log = done.stdout + done.stderr
        (self.folder / "refused-day.log").write_text(log)
        if done.returncode == 0 or "state=failed" not in log:
            return [f"the day without its file did not fail its run: {log[-2000:]}"]
        if NO_FILE not in " ".join(log.split()):
            return [f"the refused day's log lacks the strategy's line {NO_FILE!r}"]
        say("refused day: October 5 (no change file) failed in the strategy's one line")
        return self.check_tables()

    def check_tables(self) -> list[str]:
        sys.path.insert(0, str(PROJECT_DIR / "tests"))
        from support.expected import as_text
        from support.pipelines import TABLES, columns_of

        env = {**self.env, "DBT_TARGET": self.target, "DBT_LOG_PATH": str(self.folder / "dbt-logs")}
        done = subprocess.run(
            [sys.executable, "-m", "retry_safe.scenario", "dump", *TABLES],
            cwd=PROJECT_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        lines = [x for x in done.stdout.splitlines() if x.startswith("DUMP ")]
        if done.returncode != 0 or not lines:
            return [f"reading the tables failed: {(done.stdout + done.stderr)[-2000:]}"]
        dumped = json.loads(lines[0].removeprefix("DUMP "))
        problems = []
        for table, (columns, expected, _key) in TABLES.items():
            rows = columns_of(dumped[table], columns)
            if rows != sorted(as_text(expected)):
                problems.append(
                    f"{table} is not the reference: {rows} != {sorted(as_text(expected))}"
                )
        if not problems:
            say(f"tables: all {len(TABLES)} hold exactly the reference rows")
        return problems

    def check_ledger(self) -> list[str]:
        since = min(first for first, _last in DAYS.values())
        until = next_day(max(last for _first, last in DAYS.values()))
        listing = json.loads(
            self.run(
                [
                    self.tool("lakehouse"),
                    "intervals",
                    "--select",
                    "path:models",
                    "--since",
                    since,
                    "--until",
                    until,
                    "--target",
                    self.target,
                    "--json",
                ]
            )
        )
        # each model's pipeline, from the manifest (models/<pipeline>/...)
        manifest = json.loads((self.folder / "manifest" / "manifest.json").read_text())
        dag_of = {
            node["unique_id"]: f"lakehouse_{Path(node['original_file_path']).parts[1]}"
            for node in manifest["nodes"].values()
            if node["resource_type"] == "model"
        }
        problems = []
        checked = 0
        for model in listing["models"]:
            dag = dag_of.get(model["unique_id"])
            if dag not in DAYS:
                continue
            first, last = DAYS[dag]
            wanted = [[instant(first), instant(next_day(last))]]
            # loaded is merged: exactly the days, so none of them missing (the listing's
            # missing covers the whole window, the days before and after too)
            if model["loaded"] != wanted:
                problems.append(
                    f"ledger of {model['model']}: loaded {model['loaded']}, expected {wanted}"
                )
            checked += 1
        if not problems:
            say(f"ledger: each of {checked} models has its days loaded, each once, none missing")
        return problems

    # -- teardown

    def stop(self) -> None:
        if self.standalone is not None:
            say("stopping Airflow")
            stop_tree(self.standalone)
        if self.postgres_started:
            postgres.stop(self.folder / "pg")
            say("PostgreSQL stopped")


def timings(logs: list[Path]) -> dict:
    """From the task attempts' logs (JSON lines): each attempt's wall time (its first line to its
    last), its dbt process's (Cosmos' "Running command" to "Command exited"), and the medians;
    the difference is what Airflow and Cosmos add to a bare `dbt build` of the same model and
    interval."""

    def moment(line: str) -> float | None:
        try:
            return datetime.fromisoformat(json.loads(line)["timestamp"]).timestamp()
        except (ValueError, KeyError, TypeError):
            return None

    attempts = []
    for log in logs:
        lines = log.read_text(errors="replace").splitlines()
        stamps = [t for t in map(moment, lines) if t is not None]
        started = next((moment(x) for x in lines if "Running command: " in x), None)
        ended = next((moment(x) for x in lines if "Command exited with return code" in x), None)
        if stamps and started and ended:
            attempts.append((stamps[-1] - stamps[0], ended - started))
    if not attempts:
        return {}
    tasks = sorted(a for a, _ in attempts)
    dbts = sorted(d for _, d in attempts)
    overheads = sorted(a - d for a, d in attempts)
    middle = len(attempts) // 2
    return {
        "attempts_timed": len(attempts),
        "task_median_s": round(tasks[middle], 1),
        "dbt_median_s": round(dbts[middle], 1),
        "overhead_median_s": round(overheads[middle], 1),
        "overhead_min_s": round(overheads[0], 1),
        "overhead_max_s": round(overheads[-1], 1),
    }


def instant(day: str) -> str:
    """Midnight UTC of a day, as `lakehouse intervals --json` writes it."""
    return iso(datetime.fromisoformat(day).replace(tzinfo=UTC))


def days(first: str, last: str) -> int:
    return (date.fromisoformat(last) - date.fromisoformat(first)).days + 1


def next_day(text: str) -> str:
    return (date.fromisoformat(text) + timedelta(days=1)).isoformat()


def report(summary: dict) -> str:
    lines = [
        f"airflow-demo ({summary['target']}, up to {summary['max_active_runs']} runs at once "
        f"per backfill):",
        f"  runs: {summary['runs_succeeded']} of {summary['runs']} succeeded",
        f"  tasks: {summary['tasks']}, attempts: {summary['task_attempts']}"
        + (f" (retried: {summary['retried']})" if summary["retried"] else ""),
        f"  killed: {summary['killed'] or 'none'}",
        f"  conflicts absorbed by the strategy: {summary['conflicts_absorbed']} "
        f"{summary['conflicts_by_attempt'] or ''}".rstrip(),
        f"  audited publishes staged and tested again (their table had moved): "
        f"{summary['publishes_audited_again']}",
        f"  attempts that parsed the project in full: {summary['full_parses']} of "
        f"{summary['task_logs']}",
        f"  a task (median): {summary['timings'].get('task_median_s')} s, its dbt "
        f"{summary['timings'].get('dbt_median_s')} s, Airflow and Cosmos "
        f"{summary['timings'].get('overhead_median_s')} s",
        f"  backfill wall time: {summary['backfill_seconds']} s, runs at once per DAG "
        f"{summary['runs_at_once']} (load average "
        f"{', '.join(f'{x:.1f}' for x in summary['load_average'])})",
    ]
    if summary["problems"]:
        lines += ["  FAILED:", *(f"  - {problem}" for problem in summary["problems"])]
    else:
        lines.append("  every check passed")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m retry_safe.airflow_demo", description=__doc__)
    top.add_argument("--max-active-runs", type=int, default=3, help="per backfill (default 3)")
    top.add_argument(
        "--no-refused-day",
        action="store_true",
        help="skip the last check: a day without its file fails in one line, nothing written",
    )
    top.add_argument(
        "--target",
        default=os.environ.get("LAKEHOUSE_AIRFLOW_TARGET", "local"),
        choices=[t for t in TARGETS if t not in SERVER_TARGETS.values() and "cluster" not in t],
    )
    top.add_argument("--kill", default=DEFAULT_KILL, help="DAG.TASK@DAY whose dbt to SIGKILL")
    top.add_argument("--no-kill", action="store_true", help="kill nothing")
    top.add_argument("--kill-after", type=float, default=2.0, help="seconds after its START")
    top.add_argument("--parallelism", type=int, default=8, help="Airflow's task slots")
    top.add_argument("--retry-delay", type=int, default=10, help="seconds before a retry")
    top.add_argument("--timeout", type=float, default=3600, help="seconds for the backfills")
    top.add_argument("--folder", type=Path, default=PROJECT_DIR / ".lakehouse" / "airflow-demo")
    return top


def interrupted(_signum: int, _frame: object) -> None:
    """SIGTERM as Ctrl-C: main's finally stops everything the demo started."""
    raise KeyboardInterrupt


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    demo = Demo(args)
    signal.signal(signal.SIGTERM, interrupted)
    try:
        demo.prepare()
        demo.start_airflow()
        demo.seed()
        seconds = demo.backfill()
        summary = demo.check(seconds)
        if not args.no_refused_day:
            refused = demo.refused_day()
            summary["refused_day"] = refused or "failed in one line, nothing written"
            summary["problems"] += refused
            (demo.folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    except DemoFailed as problem:
        say(f"FAILED: {problem}")
        return 1
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    finally:
        demo.stop()
    print(report(summary))
    return 1 if summary["problems"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
