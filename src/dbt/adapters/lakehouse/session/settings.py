"""The Spark settings a session target (`method: session`) starts Spark with.

A profile names its table format (`table_format: delta` or `iceberg`, what `dbt init` writes)
and the adapter fills in the rest, so a new project needs no Spark setting and no environment
variable:

- embedded Spark (`local[*]`), the format's SQL extension and session catalog;
- the warehouse and its Derby metastore together under `$LAKEHOUSE_HOME/<format>/` (default
  `.lakehouse`; a relative path is taken from the dbt project's folder, as dbt takes its
  `target-path`, so `dbt --project-dir D` from anywhere and `lakehouse serve --project-dir D`
  all open the same warehouse; together because a fresh metastore over an old warehouse would
  silently reuse old table folders), or a shared metastore
  (`LAKEHOUSE_METASTORE_URL`, `_DRIVER`, `_CLASSPATH` for its JDBC driver jar): on PostgreSQL
  (`jdbc:postgresql://...`) the pinned driver (`lakehouse jars`), the login from
  `LAKEHOUSE_METASTORE_USER` / `_PASSWORD`, schema verification on and no DDL at start
  (`lakehouse metastore init` makes the schema once; metastore.py checks it first);
- the format's jars from the jars root (`lakehouse jars`, jars.py), on the driver's classpath,
  and shipped to the executors when the master is not local;
- `LAKEHOUSE_WAREHOUSE`: the warehouse elsewhere, a local folder or object storage
  (`s3a://bucket/prefix`: the connector's jars, its settings from the AWS environment and, on
  Delta, the log store that is safe with several writers; storage/object_store.py);
- the package's log configuration: Spark, Hive and DataNucleus below ERROR stay off the console;
- UTC session time, no Spark UI or progress bars;
- on a local master, tasks sized to the machine (`local_parallelism`): Spark's 200 shuffle
  partitions and Delta's 50 log-replay tasks are a cluster's defaults; in one process they
  turn each statement on a small table into hundreds of tiny tasks (a new project's first
  MERGE through the server took 10 s for a handful of rows, about 1 s with these);
- on Iceberg, Hive commit locks off with the embedded Derby metastore (they stall each commit
  for minutes, and one process is its only writer) and on with PostgreSQL, where parallel
  writers share it (`LAKEHOUSE_HIVE_LOCKS` decides either way).
- on Iceberg, the session catalog's table cache off: a cached table keeps the snapshot it was
  first loaded at, so a session that outlives another process's commit (the server, a run
  whose model is also written by a scheduled run) would read that old snapshot, and its MERGE,
  planned on it, fails Iceberg's validation ("Found conflicting files") instead of merging
  on the current one. Each statement loads the table's current metadata instead.

The profile's `server_side_parameters` win over every default. A profile without
`table_format` gets no default but `ALWAYS` (it sets everything itself, as before).

`ALWAYS`, `hive.metastore.disallow.incompatible.col.type.changes=false`: Spark registers a Delta
table in the Hive metastore in its own format, with one placeholder column,
`col array<string>`. When an existing Delta table is replaced (a `table` model's rerun,
`create or replace table` on `--full-refresh`), Delta writes the new schema to the metastore
(UpdateCatalog.replaceTable), and Spark first tries to store it the Hive-compatible way
(HiveExternalCatalog.alterTableDataSchema). Hive 2.3's default refuses a column whose type
differs from the old column at the same position, so the metastore logged
`ERROR HiveAlterHandler: Failed to alter table ... types incompatible ...` and a Java stack trace
of about 130 lines; Spark then stored the schema in its own format and the run succeeded.
With the check off the first attempt succeeds: nothing is logged. Spark itself refuses
incompatible column type changes of its own tables, so no check is lost for them; Iceberg
tables in a Hive metastore need the same setting to change a column's type.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from dbt.adapters.lakehouse.session.jars import driver_folder, jars_root, storage_folder
from dbt.adapters.lakehouse.storage.object_store import (
    StorageError,
    store_of,
    warehouse_settings,
    warehouse_url,
)
from dbt.include.lakehouse import PACKAGE_PATH

HOME_VARIABLE = "LAKEHOUSE_HOME"
POSTGRESQL_URL = "jdbc:postgresql:"
# A Hive lock without a heartbeat this long is a dead writer's (Hive's default: 300 s), and
# Iceberg heartbeats the lock it holds or waits for this often (its default: 4 minutes)
LOCK_TIMEOUT_SETTING = "spark.hadoop.hive.txn.timeout"
HIVE_LOCK_TIMEOUT = "60s"
ICEBERG_LOCK_HEARTBEAT_MS = "20000"
# Connections per pool to a PostgreSQL metastore. Hive's default, 10, opens every pool in full
# at start: 47 connections per Iceberg session (its metastore client's pools and Hive's lock
# store's), so a server and one writer filled PostgreSQL's default 100 and a third process was
# refused ("remaining connection slots are reserved"). With 3: 19 per Iceberg session.
POOL_SIZE_SETTING = "spark.hadoop.datanucleus.connectionPool.maxPoolSize"
METASTORE_POOL_SIZE = "3"
# environment variable -> Hive setting: the metastore database's login
METASTORE_CREDENTIALS = {
    "LAKEHOUSE_METASTORE_USER": "javax.jdo.option.ConnectionUserName",
    "LAKEHOUSE_METASTORE_PASSWORD": "javax.jdo.option.ConnectionPassword",
}
DEFAULT_HOME = ".lakehouse"
LOG_CONFIG = Path(PACKAGE_PATH) / "log4j2.properties"
ALWAYS: dict[str, str] = {
    "spark.hadoop.hive.metastore.disallow.incompatible.col.type.changes": "false",
}
CATALOGS: dict[str, dict[str, str]] = {
    "delta": {
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    },
    "iceberg": {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.spark_catalog": "org.apache.iceberg.spark.SparkSessionCatalog",
        "spark.sql.catalog.spark_catalog.type": "hive",
        # Iceberg's own metastore client would pool connections with BoneCP, which Spark does
        # not ship (a shared metastore fails with NoClassDefFoundError BoneCPConfig)
        "spark.hadoop.datanucleus.connectionPoolingType": "HikariCP",
        # every statement reads the table's current snapshot (module docstring)
        "spark.sql.catalog.spark_catalog.cache-enabled": "false",
    },
}


def project_folder() -> Path:
    """The dbt project's folder, as dbt's flags hold it (--project-dir, else the folder dbt
    found the project in); the current folder outside a dbt invocation."""
    from dbt.flags import get_flags

    chosen = getattr(get_flags(), "PROJECT_DIR", None)
    return Path(chosen).expanduser() if chosen else Path.cwd()


def lakehouse_home() -> Path:
    """Where the warehouses and their metastores live: $LAKEHOUSE_HOME, else .lakehouse; a
    relative path from the dbt project's folder."""
    home = Path(os.environ.get(HOME_VARIABLE) or DEFAULT_HOME).expanduser()
    if not home.is_absolute():
        home = project_folder() / home
    return home.resolve()


def _join(separator: str, *parts: str | None) -> str:
    return separator.join(part for part in parts if part)


def storage_jar() -> str:
    """The package's storage classes (Delta's log store for object storage), compiled on
    first use in a source checkout."""
    from dbt.adapters.lakehouse.java_classes import STORAGE, CompileError, bundle_jar

    try:
        return str(bundle_jar(STORAGE))
    except CompileError as error:
        raise StorageError(f"the package's storage classes are missing: {error}") from None


def format_defaults(table_format: str) -> dict[str, str]:
    """The defaults of a session target of this table format (module docstring)."""
    home = lakehouse_home() / table_format
    jars = jars_root() / table_format
    env = os.environ.get
    warehouse = warehouse_url()
    store = store_of(warehouse) if warehouse else None
    derby = f"jdbc:derby:;databaseName={home}/metastore_db;create=true"
    url = env("LAKEHOUSE_METASTORE_URL") or derby
    postgresql = url.startswith(POSTGRESQL_URL)
    defaults = {
        "spark.master": "local[*]",
        "spark.app.name": "dbt-lakehouse",
        **CATALOGS[table_format],
        "spark.sql.warehouse.dir": f"{home}/warehouse",
        "spark.hadoop.javax.jdo.option.ConnectionURL": url,
        "spark.hadoop.javax.jdo.option.ConnectionDriverName": env("LAKEHOUSE_METASTORE_DRIVER")
        or ("org.postgresql.Driver" if postgresql else "org.apache.derby.jdbc.EmbeddedDriver"),
        # Spark's own Hive client never records the metastore schema version; Iceberg's catalog
        # opens the embedded metastore with its own client, which would then refuse it. A
        # PostgreSQL metastore was created once by `lakehouse metastore init`, which records it.
        "spark.hadoop.hive.metastore.schema.verification": "true" if postgresql else "false",
        "spark.driver.extraClassPath": _join(
            os.pathsep,
            f"{jars}/*",
            f"{storage_folder(store)}/*" if store else None,
            storage_jar() if store and table_format == "delta" else None,
            env("LAKEHOUSE_METASTORE_CLASSPATH")
            or (f"{driver_folder('postgresql')}/*" if postgresql else None),
        ),
        "spark.driver.extraJavaOptions": _join(
            " ",
            f"-Dderby.system.home={home}",
            "-Dderby.stream.error.file=derby.log",
            f"-Dlog4j2.configurationFile={LOG_CONFIG}",
            env("LAKEHOUSE_JAVA_OPTIONS"),
        ),
        "spark.sql.session.timeZone": "UTC",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }
    if postgresql:
        defaults.update(postgresql_metastore())
    if store:
        defaults.update(warehouse_settings(table_format, warehouse))
    elif warehouse:
        defaults["spark.sql.warehouse.dir"] = warehouse
    if table_format == "iceberg":
        defaults["spark.hadoop.iceberg.engine.hive.lock-enabled"] = env("LAKEHOUSE_HIVE_LOCKS") or (
            "true" if postgresql else "false"
        )
        if postgresql:
            # a dead writer's lock expires after a minute without heartbeat (metastore.py)
            defaults[LOCK_TIMEOUT_SETTING] = HIVE_LOCK_TIMEOUT
            defaults["spark.hadoop.iceberg.hive.lock-heartbeat-interval-ms"] = (
                ICEBERG_LOCK_HEARTBEAT_MS
            )
    return defaults


def postgresql_metastore() -> dict[str, str]:
    """A PostgreSQL metastore: its user and password from the environment (never a file), and
    no DDL at start: the schema is made once by `lakehouse metastore init` (metastore.py), and
    every session checks it before anything runs."""
    settings = {
        "spark.hadoop.datanucleus.schema.autoCreateAll": "false",
        POOL_SIZE_SETTING: METASTORE_POOL_SIZE,
    }
    for variable, key in METASTORE_CREDENTIALS.items():
        if os.environ.get(variable):
            settings[f"spark.hadoop.{key}"] = os.environ[variable]
    return settings


def local_cores(master: str) -> int | None:
    """The cores a local master runs tasks on (`local` 1, `local[N]` N, `local[*]` all of this
    machine's), or None for any other master."""
    match = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?", master.strip())
    if match is None:
        return None
    chosen = match.group(1)
    if chosen is None:
        return 1
    return (os.cpu_count() or 1) if chosen == "*" else max(int(chosen), 1)


def local_parallelism(table_format: str, cores: int) -> dict[str, str]:
    """Task counts for a local master (module docstring): twice the cores per shuffle (adaptive
    execution merges small outputs further), one Delta log-replay task per core, and twice the
    cores for Delta's VACUUM, which lists a table's folder in as many tasks as Spark's
    parallel partition discovery allows (10,000 by default: a VACUUM of a table of four files
    took 18 to 47 s on two cores, 1.3 to 2.8 s with four tasks)."""
    settings = {"spark.sql.shuffle.partitions": str(2 * cores)}
    if table_format == "delta":
        settings["spark.databricks.delta.snapshotPartitions"] = str(cores)
        settings["spark.sql.sources.parallelPartitionDiscovery.parallelism"] = str(2 * cores)
    return settings


def session_settings(
    table_format: str | None, parameters: Mapping[str, str] | None
) -> dict[str, str]:
    """The settings a session target starts Spark with: ALWAYS, the defaults of its table
    format, then its server_side_parameters (which win). On a master that is not local the
    executors get the format's jars too (spark.jars), unless the profile says otherwise; on a
    local one, task counts sized to its cores (local_parallelism), unless the profile sets
    them."""
    settings = {**ALWAYS, **(format_defaults(table_format) if table_format else {})}
    settings.update(parameters or {})
    master = settings.get("spark.master", "")
    if table_format and not master.startswith("local") and "spark.jars" not in settings:
        store = store_of(str(settings.get("spark.sql.warehouse.dir") or ""))
        # the executors read Delta's log too (its history in a job): the log store's class
        settings["spark.jars"] = ",".join(
            [f"{jars_root() / table_format}/*.jar"]
            + ([f"{storage_folder(store)}/*.jar"] if store else [])
            + ([storage_jar()] if store and table_format == "delta" else [])
        )
    cores = local_cores(master)
    if table_format and cores is not None:
        for key, value in local_parallelism(table_format, cores).items():
            settings.setdefault(key, value)
    return settings
