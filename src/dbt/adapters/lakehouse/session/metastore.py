"""A Hive metastore on PostgreSQL: made once by `lakehouse metastore init`, checked at each start.

The embedded Derby metastore admits one process; a team's parallel runs, its server and its
cluster share a metastore database instead, and the production backend of Spark's built-in
Hive 2.3 client is PostgreSQL (`LAKEHOUSE_METASTORE_URL=jdbc:postgresql://host:port/db`, the
login in `LAKEHOUSE_METASTORE_USER` / `_PASSWORD`, the driver pinned in jars.json).

- **The schema is made by one explicit step**, `lakehouse metastore init`: DataNucleus creates
  the metastore's tables (what Hive's schematool script holds for this version) and records
  the schema version, and Hive's `TxnDbUtil.prepDb` adds the lock tables (`HIVE_LOCKS`,
  `NEXT_LOCK_ID`, ...), which Iceberg's Hive commit lock needs and which DataNucleus never
  makes. Every other session starts with schema verification on and auto-create off, so no
  run ever issues DDL against the metastore.
- **Every session checks the database first** (`require_ready`), right after its JVM starts and
  before any statement: a server that is down, a wrong password, a missing database, a missing
  schema, a schema of another Hive version or missing lock tables is one line naming the cause
  and the fix, and nothing is written. Without it Hive retries ten times, two seconds apart,
  and the run ends in a page of stack traces.

The checks use the very driver and login the metastore uses, through the JVM (py4j), so there
is no second database client to install or to disagree with.
"""

from __future__ import annotations

import atexit
import functools
import re
import threading
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.session.settings import (
    HIVE_LOCK_TIMEOUT,
    LOCK_TIMEOUT_SETTING,
    POSTGRESQL_URL,
)
from dbt.adapters.lakehouse.storage.object_store import LOG_STORE_SETTING

URL = "spark.hadoop.javax.jdo.option.ConnectionURL"
USER = "spark.hadoop.javax.jdo.option.ConnectionUserName"
PASSWORD = "spark.hadoop.javax.jdo.option.ConnectionPassword"
ICEBERG_LOCKS = "spark.hadoop.iceberg.engine.hive.lock-enabled"
# The metastore schema of Spark's built-in Hive client (hive-metastore 2.3.x)
HIVE_SCHEMA_VERSION = "2.3.0"
# The lock and transaction tables of Hive 2.3's metastore, for PostgreSQL: the statements of
# Hive's TxnDbUtil.prepDb (which targets Derby: `varchar(...) for bit data` is PostgreSQL's
# bytea here), unquoted as in Hive's PostgreSQL script, so lower case, as its TxnHandler
# queries them. Run in one transaction: all of them or none.
LOCK_TABLES_DDL = (
    "create table txns (txn_id bigint primary key, txn_state char(1) not null, "
    "txn_started bigint not null, txn_last_heartbeat bigint not null, "
    "txn_user varchar(128) not null, txn_host varchar(128) not null)",
    "create table txn_components (tc_txnid bigint references txns (txn_id), "
    "tc_database varchar(128) not null, tc_table varchar(128), tc_partition varchar(767), "
    "tc_operation_type char(1) not null)",
    "create table completed_txn_components (ctc_txnid bigint, "
    "ctc_database varchar(128) not null, ctc_table varchar(128), ctc_partition varchar(767))",
    "create table next_txn_id (ntxn_next bigint not null)",
    "insert into next_txn_id values (1)",
    "create table hive_locks (hl_lock_ext_id bigint not null, hl_lock_int_id bigint not null, "
    "hl_txnid bigint, hl_db varchar(128) not null, hl_table varchar(128), "
    "hl_partition varchar(767), hl_lock_state char(1) not null, "
    "hl_lock_type char(1) not null, hl_last_heartbeat bigint not null, "
    "hl_acquired_at bigint, hl_user varchar(128) not null, hl_host varchar(128) not null, "
    "hl_heartbeat_count integer, hl_agent_info varchar(128), hl_blockedby_ext_id bigint, "
    "hl_blockedby_int_id bigint, primary key (hl_lock_ext_id, hl_lock_int_id))",
    "create index hl_txnid_index on hive_locks (hl_txnid)",
    "create table next_lock_id (nl_next bigint not null)",
    "insert into next_lock_id values (1)",
    "create table compaction_queue (cq_id bigint primary key, "
    "cq_database varchar(128) not null, cq_table varchar(128) not null, "
    "cq_partition varchar(767), cq_state char(1) not null, cq_type char(1) not null, "
    "cq_tblproperties varchar(2048), cq_worker_id varchar(128), cq_start bigint, "
    "cq_run_as varchar(128), cq_highest_txn_id bigint, cq_meta_info bytea, "
    "cq_hadoop_job_id varchar(32))",
    "create table next_compaction_queue_id (ncq_next bigint not null)",
    "insert into next_compaction_queue_id values (1)",
    "create table completed_compactions (cc_id bigint primary key, "
    "cc_database varchar(128) not null, cc_table varchar(128) not null, "
    "cc_partition varchar(767), cc_state char(1) not null, cc_type char(1) not null, "
    "cc_tblproperties varchar(2048), cc_worker_id varchar(128), cc_start bigint, "
    "cc_end bigint, cc_run_as varchar(128), cc_highest_txn_id bigint, cc_meta_info bytea, "
    "cc_hadoop_job_id varchar(32))",
    "create table aux_table (mt_key1 varchar(128) not null, mt_key2 bigint not null, "
    "mt_comment varchar(255), primary key (mt_key1, mt_key2))",
    "create table write_set (ws_database varchar(128) not null, "
    "ws_table varchar(128) not null, ws_partition varchar(767), ws_txnid bigint not null, "
    "ws_commit_id bigint not null, ws_operation_type char(1) not null)",
)
LOCK_TABLES = tuple(
    statement.split()[2] for statement in LOCK_TABLES_DDL if statement.startswith("create table")
)
# Delta's commits to object storage (storage/java/PostgresLogStore.java): one row per commit
# file, whose primary key lets one writer of a version win
COMMIT_TABLE = "lakehouse_delta_commits"
COMMIT_TABLE_DDL = (
    f"create table {COMMIT_TABLE} (table_path text not null, file_name text not null, "
    "temp_path text not null, complete boolean not null, expire_time bigint, "
    "primary key (table_path, file_name))"
)
INIT = "lakehouse metastore init"
CONNECT_TIMEOUT_SECONDS = "10"


class MetastoreError(DbtRuntimeError):
    """The metastore database cannot serve this session; the message says why and what to do."""


def is_postgresql(parameters: Mapping[str, str]) -> bool:
    return str(parameters.get(URL) or "").startswith(POSTGRESQL_URL)


def shown(url: str) -> str:
    """The URL without its query string, which may hold a password."""
    return url.split("?", 1)[0]


def _jvm() -> Any:
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is None:
        raise RuntimeError("no SparkContext: the metastore is checked after the JVM started")
    return context._jvm


def _sql_state(error: Exception) -> str:
    java = getattr(error, "java_exception", None)
    try:
        return str(java.getSQLState() or "") if java is not None else ""
    except Exception:  # not a SQLException
        return ""


def _message(error: Exception) -> str:
    java = getattr(error, "java_exception", None)
    text = str(java.getMessage()) if java is not None else str(error)
    return " ".join(text.split())


def connect(parameters: Mapping[str, str]) -> Any:
    """A JDBC connection to the metastore database with the session's driver and login."""
    jvm = _jvm()
    properties = jvm.java.util.Properties()
    for key, name in ((USER, "user"), (PASSWORD, "password")):
        if parameters.get(key):
            properties.setProperty(name, parameters[key])
    properties.setProperty("connectTimeout", CONNECT_TIMEOUT_SECONDS)
    driver_class = jvm.org.postgresql.Driver
    if not callable(driver_class):  # py4j's JavaPackage: the class is not on the classpath
        raise MetastoreError(
            f"The PostgreSQL JDBC driver is not on the session's classpath for the metastore "
            f"{shown(parameters[URL])}: run `lakehouse jars` (it installs the pinned driver), "
            "or set LAKEHOUSE_METASTORE_CLASSPATH to the driver jar."
        )
    return driver_class().connect(parameters[URL], properties)


def _login(parameters: Mapping[str, str]) -> str:
    return str(parameters.get(USER) or "the URL's user")


def connection_problem(error: Exception, parameters: Mapping[str, str]) -> str:
    """One line for a failed connection, by PostgreSQL's SQLSTATE."""
    url, state = shown(parameters[URL]), _sql_state(error)
    if state.startswith("08"):
        return (
            f"The metastore database {url} is unreachable ({_message(error)}). Start its "
            "PostgreSQL server, or set LAKEHOUSE_METASTORE_URL to one that runs."
        )
    if state in ("28P01", "28000"):
        return (
            f"PostgreSQL refused the metastore login {_login(parameters)} at {url} "
            f"({_message(error)}). Set LAKEHOUSE_METASTORE_USER and LAKEHOUSE_METASTORE_PASSWORD "
            "to a login of that database."
        )
    if state == "3D000":
        return (
            f"The metastore database of {url} does not exist. Create it (`create database ...` "
            f"as a PostgreSQL superuser), then run `{INIT}` once."
        )
    return f"Cannot open the metastore database {url}: {_message(error)}"


def _scalar(connection: Any, query: str) -> str | None:
    statement = connection.createStatement()
    try:
        result = statement.executeQuery(query)
        return str(result.getString(1)) if result.next() else None
    finally:
        statement.close()


def schema_version(connection: Any) -> str | None:
    """The Hive schema version the metastore records; None when it has no schema (yet)."""
    from py4j.protocol import Py4JJavaError

    try:
        return _scalar(connection, 'select "SCHEMA_VERSION" from "VERSION"') or ""
    except Py4JJavaError as error:
        if _sql_state(error) == "42P01":  # undefined table
            return None
        raise


def missing_tables(connection: Any, tables: tuple[str, ...]) -> list[str]:
    """Those of tables the login's schema lacks, in one listing of the schema. Names compare
    without case: DataNucleus creates the mapping's names in upper case (its
    `Skewed_STRING_LIST` too), the lock tables are lower case."""
    found = connection.getMetaData().getTables(None, connection.getSchema(), None, None)
    present = set()
    try:
        while found.next():
            present.add(str(found.getString("TABLE_NAME")).upper())
    finally:
        found.close()
    return [table for table in tables if table.upper() not in present]


def missing_lock_tables(connection: Any) -> list[str]:
    return missing_tables(connection, LOCK_TABLES)


def schema_problem(connection: Any, parameters: Mapping[str, str]) -> str | None:
    url = shown(parameters[URL])
    version = schema_version(connection)
    if version is None:
        return (
            f"The metastore database {url} has no Hive metastore schema (login "
            f"{_login(parameters)}). Run `{INIT}` once with the same settings."
        )
    if version != HIVE_SCHEMA_VERSION:
        return (
            f"The metastore database {url} holds a Hive {version or '(unrecorded)'} schema; "
            f"Spark's Hive client needs {HIVE_SCHEMA_VERSION}. Use a metastore database of "
            f"that version (a new database and `{INIT}`), not this one."
        )
    unmade = missing_tables(connection, metastore_tables())
    if unmade:
        return (
            f"The metastore schema in {url} is incomplete ({len(unmade)} tables missing, e.g. "
            f"{', '.join(unmade[:3])}): its `{INIT}` did not finish. Run `{INIT}` again: it "
            "adds what is missing."
        )
    if parameters.get(LOG_STORE_SETTING) and missing_tables(connection, (COMMIT_TABLE,)):
        return (
            f"The metastore database {url} has no {COMMIT_TABLE} table, which Delta's commits "
            f"to object storage are kept in. Run `{INIT}` once: it adds it."
        )
    if str(parameters.get(ICEBERG_LOCKS)) == "true" and missing_lock_tables(connection):
        return (
            f"The metastore database {url} has no lock tables ({', '.join(LOCK_TABLES)}), "
            f"which Iceberg's Hive commit lock needs. Run `{INIT}` once: it adds them."
        )
    return None


def problem(parameters: Mapping[str, str]) -> str | None:
    """One line saying why the session's PostgreSQL metastore cannot serve it, or None."""
    from py4j.protocol import Py4JJavaError

    if not is_postgresql(parameters):
        return None
    try:
        connection = connect(parameters)
    except Py4JJavaError as error:
        return connection_problem(error, parameters)
    try:
        return schema_problem(connection, parameters)
    finally:
        connection.close()


def require_ready(parameters: Mapping[str, str]) -> None:
    found = problem(parameters)
    if found:
        raise MetastoreError(found)


def init_settings(parameters: Mapping[str, str]) -> dict[str, str]:
    """A session's settings for the one step that may create the schema."""
    return {
        **parameters,
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        "spark.hadoop.hive.metastore.schema.verification": "false",
        "spark.hadoop.hive.metastore.schema.verification.record.version": "true",
    }


@functools.cache
def _mapping() -> tuple[Path, str]:
    """The Hive metastore's object mapping (package.jdo in Spark's hive-metastore jar)."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    jar = next(iter(sorted(jars.glob("hive-metastore-*.jar"))))
    return jar, zipfile.ZipFile(jar).read("package.jdo").decode()


def metastore_classes() -> list[str]:
    """The Hive metastore's persistent classes, as its mapping (package.jdo) names them."""
    jar, mapping = _mapping()
    package = re.search(r'<package name="([^"]+)"', mapping)
    if package is None:
        raise MetastoreError(f"{jar} holds no metastore mapping (package.jdo)")
    return [f"{package.group(1)}.{name}" for name in re.findall(r'<class name="(\w+)"', mapping)]


def metastore_tables() -> tuple[str, ...]:
    """Every table the mapping names (classes, join tables): what init makes. An embedded-only
    class is stored in its owner's table and has none of its own."""
    mapping = _mapping()[1]
    embedded = re.findall(r'<class [^>]*embedded-only="true"[^>]*table="(\w+)"', mapping)
    return tuple(sorted(set(re.findall(r'table="(\w+)"', mapping)) - set(embedded)))


def create_metastore_tables() -> None:
    """Every table of the metastore schema, now, in this session's metastore database.

    The first metastore call makes DataNucleus create the tables it needs and record the
    schema version (init_settings); DataNucleus makes the others only when a class is first
    used, which in a later run, without auto-create, fails ("Required table missing: TBL_PRIVS"
    on a Delta table's first CREATE). So the tables of every mapped class are created here,
    through the metastore's own persistence manager factory and its settings.
    """
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    spark.catalog.listDatabases()
    jvm = spark._jvm
    store = jvm.java.lang.Class.forName("org.apache.hadoop.hive.metastore.ObjectStore")
    field = store.getDeclaredField("pmf")
    field.setAccessible(True)
    classes = jvm.java.util.HashSet()
    for name in metastore_classes():
        classes.add(name)
    manager = field.get(None).getNucleusContext().getStoreManager()
    manager.createSchemaForClasses(classes, jvm.java.util.Properties())


def create_tables(parameters: Mapping[str, str], statements: tuple[str, ...]) -> None:
    """The statements in one transaction, with the session's driver and login."""
    connection = connect(parameters)
    try:
        connection.setAutoCommit(False)
        statement = connection.createStatement()
        for sql in statements:
            statement.execute(sql)
        connection.commit()
    finally:
        connection.close()


def initialize(parameters: Mapping[str, str]) -> str:
    """Create the metastore schema, its lock tables and the Delta commit table once; what was
    done, in one line.

    Runs in a session started with init_settings(parameters). An existing schema of this
    version is left alone (its missing lock tables are added); another version is refused.
    """
    from py4j.protocol import Py4JJavaError

    url = shown(parameters[URL])
    try:
        connection = connect(parameters)
    except Py4JJavaError as error:
        raise MetastoreError(connection_problem(error, parameters)) from None
    try:
        version = schema_version(connection)
        missing = missing_lock_tables(connection)
        unmade = missing_tables(connection, metastore_tables())
        no_commits = bool(missing_tables(connection, (COMMIT_TABLE,)))
    finally:
        connection.close()
    if version is not None and version != HIVE_SCHEMA_VERSION:
        raise MetastoreError(
            f"The metastore database {url} already holds a Hive {version or '(unrecorded)'} "
            f"schema; this package's Hive client needs {HIVE_SCHEMA_VERSION}. Nothing was "
            "changed: use another database."
        )
    if version is not None and not missing and not unmade and not no_commits:
        return f"The metastore schema in {url} is ready (Hive {version}); nothing to do."
    if missing and len(missing) < len(LOCK_TABLES):
        raise MetastoreError(
            f"The metastore database {url} has some lock tables but not {', '.join(missing)}: "
            "it was changed by hand. Nothing was changed; drop the lock tables it has and run "
            f"`{INIT}` again."
        )
    try:
        # also after an init that was stopped once the version was recorded: DataNucleus
        # creates only the tables that are missing
        if version is None or unmade:
            create_metastore_tables()
        if missing:
            create_tables(parameters, LOCK_TABLES_DDL)
        if no_commits:
            create_tables(parameters, (COMMIT_TABLE_DDL,))
    except Py4JJavaError as error:
        if _sql_state(error) == "42501" or "permission denied" in _message(error):
            raise MetastoreError(
                f"The metastore login {_login(parameters)} may not create tables in {url} "
                f"({_message(error)}). As the database's owner: `create schema <login> "
                "authorization <login>` (PostgreSQL 15 grants no CREATE on public), then run "
                f"`{INIT}` again."
            ) from None
        raise
    problem_left = problem(parameters)
    if problem_left:
        raise MetastoreError(problem_left)
    if version is not None:  # an init that did not finish, or one of an earlier release
        return (
            f"Completed the metastore schema (Hive {HIVE_SCHEMA_VERSION}) in {url}: added "
            f"{len(unmade)} metastore, {len(missing)} lock and {int(no_commits)} commit tables."
        )
    return (
        f"Created the metastore schema (Hive {HIVE_SCHEMA_VERSION}), its lock tables and the "
        f"Delta commit table in {url}."
    )


# -- expiring a dead writer's Hive lock ---------------------------------------------------

REAPER_PERIOD_SECONDS = 10.0
_reaper: threading.Thread | None = None


def _txn_store(parameters: Mapping[str, str]) -> Any:
    jvm = _jvm()
    conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
    for key, value in parameters.items():
        if key.startswith("spark.hadoop.") and ("jdo" in key or "datanucleus" in key):
            conf.set(key.removeprefix("spark.hadoop."), value)
    conf.set("hive.txn.timeout", parameters.get(LOCK_TIMEOUT_SETTING) or HIVE_LOCK_TIMEOUT)
    return jvm.org.apache.hadoop.hive.metastore.txn.TxnUtils.getTxnStore(conf)


def start_lock_reaper(parameters: Mapping[str, str]) -> None:
    """Expire the Hive locks of dead writers while this session lives.

    An Iceberg writer killed while it holds Hive's commit lock leaves the lock row behind, and
    Hive 2.3 expires locks only in its metastore server's housekeeping
    (`TxnHandler.performTimeOuts`), which an embedded client never runs: every later commit
    of the table would wait Iceberg's lock timeout and fail. So each session on a PostgreSQL
    metastore with Hive locks runs that housekeeping itself, every REAPER_PERIOD_SECONDS: a lock
    without a heartbeat for `hive.txn.timeout` (HIVE_LOCK_TIMEOUT) goes; a live writer
    heartbeats well within it (ICEBERG_LOCK_HEARTBEAT_MS).
    """
    global _reaper
    if _reaper is not None or not is_postgresql(parameters):
        return
    if str(parameters.get(ICEBERG_LOCKS)) != "true":
        return
    store = _txn_store(parameters)
    stopping = threading.Event()
    atexit.register(stopping.set)

    def reap() -> None:
        while not stopping.wait(REAPER_PERIOD_SECONDS):
            try:
                store.performTimeOuts()
            except Exception:  # never the run's problem; the next round tries again
                if stopping.is_set():
                    return

    _reaper = threading.Thread(target=reap, name="hive-lock-reaper", daemon=True)
    _reaper.start()
