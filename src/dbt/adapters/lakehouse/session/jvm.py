"""Start the embedded Spark JVM without the one line of noise that no setting turns off.

Spark's launcher always starts the driver with `--add-modules=jdk.incubator.vector`
(org.apache.spark.launcher.JavaModuleOptions), and Java then prints
`WARNING: Using incubator modules: jdk.incubator.vector` on standard error while it boots;
neither Spark nor Java has a switch for it. So the JVM is started with a pipe as its standard
error, and a thread copies every line to the real standard error except that one. Everything
else the JVM writes there (log4j's ERROR lines, a crash report) passes unchanged while dbt
runs. The JVM's standard output goes into the same pipe: nothing of dbt's is on it (dbt writes
from Python), but Delta's VACUUM prints a line per table there (`Deleted 0 files and
directories in a total of 1 directories.`), which landed in the middle of dbt's output and of
`lakehouse maintain --json`'s JSON. Those lines are dropped too: maintain reports what it
deleted in its own words. Once this process has begun to exit (dbt has reported), the JVM's
lines are dropped: they can only come from its own shutdown, which nobody asked about. The thread
never raises: an exception in it would end the run with a Python traceback.
"""

from __future__ import annotations

import atexit
import glob
import os
import re
import sys
import threading
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lakehouse.session.metastore import require_ready as require_ready_metastore
from dbt.adapters.lakehouse.session.metastore import start_lock_reaper
from dbt.adapters.lakehouse.session.metastore_lock import require_free_metastore
from dbt.adapters.lakehouse.storage import object_store

#: The lines dropped (module docstring): Java's incubator warning; Delta's VACUUM per table,
#: and as a dry run
DROPPED = (
    re.compile(rb"WARNING: Using incubator modules: .*\s*"),
    re.compile(rb"Deleted \d+ files .*and directories in a total of \d+ directories\.\s*"),
    re.compile(rb"Found \d+ files .*in a total of \d+ directories that are safe to delete\.\s*"),
)
JVM_EXITED = (
    "Spark's JVM exited while starting; Java's own reason is printed above. Check the target's "
    "server_side_parameters (spark.driver.memory, spark.driver.extraJavaOptions) and the Java "
    "installation."
)
PIN_THREAD = "PYSPARK_PIN_THREAD"
#: What makes PySpark's builder return a Spark Connect client instead of starting Spark:
#: SPARK_REMOTE (a user's, e.g. for Databricks Connect), or the mark a Connect client leaves in
#: its process's environment, which the processes it starts inherit
CONNECT_CLIENT_VARIABLES = ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")
_exiting = threading.Event()
atexit.register(_exiting.set)


def _forward(read_end: int, real_stderr: int) -> None:
    with (
        suppress(OSError),
        open(read_end, "rb") as source,
        open(real_stderr, "wb", buffering=0) as sink,
    ):
        for line in source:
            if _exiting.is_set() or any(p.fullmatch(line) for p in DROPPED):
                continue
            # On a write error keep reading all the same: a full pipe would block the JVM.
            with suppress(OSError):
                sink.write(line)


@contextmanager
def filtered_child_output() -> Iterator[threading.Thread]:
    """Processes started inside the block write their standard error, and their standard
    output, through the filter to the real standard error.

    The process's own standard error and output are the real ones again after the block; the
    thread runs until the last child holding the pipe has exited. The block gets that thread.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    real_stdout, real_stderr = os.dup(1), os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 1)  # inheritable: the children get the pipe as their fd 1 and fd 2
    os.dup2(write_end, 2)
    os.close(write_end)
    forwarder = threading.Thread(
        target=_forward, args=(read_end, real_stderr), name="jvm-output", daemon=True
    )
    forwarder.start()
    try:
        yield forwarder
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(real_stdout, 1)
        os.close(real_stdout)
        os.dup2(real_stderr, 2)


@contextmanager
def shared_jvm_threads() -> Iterator[None]:
    """A JVM started inside lets dbt's Python threads share the gateway's JVM threads
    (PYSPARK_PIN_THREAD=false, read as the gateway starts, unless the environment sets it; the
    variable is gone again afterwards, so processes started later do not inherit it).

    PySpark's default pins each Python thread to a JVM thread of its own, and dbt runs every
    invocation's statements in new threads (the adapter cache's pool, one per model). The Hive
    metastore client keeps its persistence manager per JVM thread, so the first metastore call
    of each new thread built one again (DataNucleus metadata, the direct-SQL checks): 0.2 to
    0.4 s on Iceberg for each invocation's `show databases`, its first `describe extended` and
    its cache listing. Unpinned, the statements run on the gateway's reused threads. The
    adapter sets no thread-local Spark property (job groups, local properties) that pinning
    would keep. Only dbt's sessions: the server's statements run in Spark Connect's threads,
    and the server, which stops its JVM itself, printed py4j's ERROR for a call after the stop
    when it ran unpinned (the pinned client prints nothing); `lakehouse metastore init` and
    the benchmark's job, which start sessions too, keep PySpark's default.
    """
    if PIN_THREAD in os.environ:
        yield
        return
    os.environ[PIN_THREAD] = "false"
    try:
        yield
    finally:
        os.environ.pop(PIN_THREAD, None)


def connect_client_problem(environ: Mapping[str, str]) -> str | None:
    """Why an embedded session cannot start in this environment: PySpark would hand back a
    Spark Connect client of whatever server the environment names (the run's SQL on another
    Spark, a target's settings ignored), or fail with its CONNECT_URL_NOT_SET; None if it can."""
    found = [name for name in CONNECT_CLIENT_VARIABLES if name in environ]
    if not found:
        return None
    named = ", ".join(f"{name}={environ[name]}" for name in found)
    return (
        f"{named} is set, which makes PySpark connect to a Spark Connect server instead of "
        "starting the embedded Spark this target (method: session) runs on. Unset "
        f"{' and '.join(found)} for this command, or reach a lakehouse server through a target "
        "with method: connect."
    )


def start_session(parameters: Mapping[str, str], check_metastore: bool = True) -> None:
    """Start the SparkSession dbt-spark's session cursor starts on its first statement.

    Same builder, same settings, only earlier and with the JVM's standard error filtered;
    the cursor's own getOrCreate() then finds it running. Nothing happens when a SparkContext
    already runs in this process.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    quiet_pandas_on_spark()
    if SparkContext._active_spark_context is not None:
        return
    problem = connect_client_problem(os.environ)
    if problem:
        raise DbtRuntimeError(problem)
    # another process's JVM holding the embedded metastore: one line now, not 22,000 later
    require_free_metastore(parameters)
    # Delta on object storage without the metastore its commits are kept in
    object_store.require_safe(parameters)
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in expand_jar_patterns(parameters).items():
        builder = builder.config(key, value)
    from pyspark.errors import PySparkRuntimeError

    try:
        with filtered_child_output() as forwarder:
            builder.getOrCreate()
    except PySparkRuntimeError as error:  # a Python traceback otherwise
        if error.getCondition() != "JAVA_GATEWAY_EXITED":
            raise
        forwarder.join(timeout=10)  # Java's own reason first: the pipe ends with the JVM
        raise DbtRuntimeError(JVM_EXITED) from None
    # a warehouse bucket that cannot be listed: one line before any statement
    session = SparkSession.getActiveSession()
    object_store.require_reachable(
        parameters, session.sparkContext._jvm, session.sparkContext._jsc.hadoopConfiguration()
    )
    if check_metastore:
        # a shared metastore database that cannot serve: one line before any statement
        require_ready_metastore(parameters)
        # and the Hive locks of dead writers expire while this session lives
        start_lock_reaper(parameters)


def quiet_pandas_on_spark() -> None:
    """dbt-spark's Python model code imports pandas-on-Spark, which prints a UserWarning on the
    user's console unless PYARROW_IGNORE_TIMEZONE is set, and in the driver before the
    SparkContext starts (it then sets it itself): called before any session starts, embedded
    or Spark Connect. A Python model that returns pandas reaches the table through
    pandas-on-Spark's to_spark(), which warns that the pandas index is dropped: dbt-spark drops
    it on purpose (a table has no index), so that advice stays off the console too."""
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    warnings.filterwarnings("ignore", message="If `index_col` is not specified for `to_spark`")


def expand_jar_patterns(parameters: Mapping[str, str]) -> dict[str, str]:
    """The settings with the local wildcards of spark.jars replaced by the files they match.

    spark-submit expands `--jars /folder/*.jar` itself, but a SparkSession built from Python
    hands its spark.jars to SparkContext as it is, which then looks for a file named `*.jar`
    (the cluster target ships the format's jars to the executors that way).
    """
    value = parameters.get("spark.jars")
    if not value:
        return dict(parameters)
    entries: list[str] = []
    for entry in (part.strip() for part in value.split(",")):
        if "://" not in entry and any(char in entry for char in "*?["):
            entries += sorted(glob.glob(entry))
        elif entry:
            entries.append(entry)
    return {**parameters, "spark.jars": ",".join(entries)}
