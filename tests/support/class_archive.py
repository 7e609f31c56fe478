"""A class-data archive for the JVMs of the steps that run in processes of their own.

Every scheduler-like process of the suite (a killed run, a concurrent writer, a server) starts a
JVM that loads and verifies the same twenty thousand classes of Spark, Hive and the table
format's jars: about six of a short step's twenty seconds on this machine. Java's class-data
sharing maps them from an archive instead.

The archive is written by the suite's own JVM, which has loaded those classes already: it starts
with -XX:+RecordDynamicDumpInfo (support/processes.py), and when the first step of a pass asks
for its JVM options, `ClassArchive.options` has it write the classes it loaded so far
(`jcmd <pid> VM.cds dynamic_dump`, Java 17+: about ten seconds, once per pass). The tests
before the first step have run the seeds, SQL and Python models, first loads and MERGEs, the
orders pipeline. The steps' JVMs then start from it (-XX:SharedArchiveFile).

It matches the pass's classpath only: a JVM on another classpath (the other format, a cluster's
daemons, the installed wheel's cache) starts as usual, without a word on its output (the JVMs'
cds logging is off). Without an archive (no JVM in this process yet, as when a step's test runs
alone; no jcmd; a failed dump) the steps start as before; a failure is a warning in pytest's
summary.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from pathlib import Path

# no cds line on a JVM's output: a dump's warnings about classes it leaves out, a step's
# fallback when its classpath is not the archive's
QUIET = "-Xlog:cds=off,cds+dynamic=off"
# what the suite's own JVM starts with so that it can write the archive while it runs
RECORD = f"-XX:+RecordDynamicDumpInfo {QUIET}"


class ClassArchive:
    """The archive of one pass, written by the suite's JVM on first use."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "classes.jsa"
        self._options: str | None = None

    def options(self) -> str:
        """The JVM options that use the archive; none if there is none (the steps then start
        as before)."""
        if self._options is None:
            self._options = self._dump()
        return self._options

    def _dump(self) -> str:
        from pyspark import SparkContext

        context = SparkContext._active_spark_context
        if context is None:
            return ""  # no JVM in this process yet: nothing loaded to archive
        problem = self._write(context._gateway.proc.pid)
        if problem:
            warnings.warn(f"no class-data archive: {problem}", stacklevel=3)
            return ""
        return f"-XX:SharedArchiveFile={self.path} {QUIET}"

    def _write(self, pid: int) -> str:
        """Has the JVM `pid` write the archive; what went wrong, if anything."""
        java_home = os.environ.get("JAVA_HOME")
        jcmd = str(Path(java_home, "bin", "jcmd")) if java_home else shutil.which("jcmd")
        if not jcmd or not Path(jcmd).exists():
            return "no jcmd (a JDK's tool) next to java"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [jcmd, str(pid), "VM.cds", "dynamic_dump", str(self.path)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0 or not self.path.exists():
            return f"jcmd exited {done.returncode}: {(done.stdout + done.stderr)[-500:]}"
        return ""
