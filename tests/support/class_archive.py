"""A class-data archive for the JVMs of the steps that run in processes of their own.

Every scheduler-like process of the suite (a killed run, a concurrent writer, a server) starts a
JVM that loads and verifies the same twenty thousand classes of Spark, Hive and the table
format's jars: about six of a short step's nineteen seconds on this machine. Java's class-data
sharing maps them from an archive instead. At the start of a pass, `start` runs the pipelines'
first steps (the seeds, a SQL and a Python model, a first load and a MERGE) in a process whose JVM
writes the classes it loaded to an archive as it exits (-XX:ArchiveClassesAtExit, Java 13+);
`options` gives the later steps' JVMs that archive. It is written for the pass's table format
and its classpath: a JVM on another classpath (the other format, a cluster's worker) starts
as usual, without a word on its output (the JVM's cds warnings are off).

Run as a script, it runs the steps, then stops the JVM and waits for its exit: the archive is
complete when this process ends (a scenario step's process does not wait for its JVM).
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

STEPS = [
    ["seed"],
    ["retail_daily_product_cart_abandonment", "2026-01-01", "2026-01-02"],
    ["retail_daily_product_cart_abandonment_df", "2026-01-01", "2026-01-02"],
    ["retail_daily_product_cart_abandonment", "2026-01-02", "2026-01-03"],
    ["path:models/order_changes", "2026-10-03", "2026-10-04"],
]
QUIET = "-Xlog:cds=off,cds+dynamic=off"


class ClassArchive:
    """The archive of one pass, written by a process started in the background."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.path = folder / "classes.jsa"
        self.log = log = folder / "class-archive.log"
        self.warned = False
        folder.mkdir(parents=True, exist_ok=True)
        java_options = f"{env.get('LAKEHOUSE_JAVA_OPTIONS', '')} {QUIET}"
        with log.open("w") as output:
            self.process = subprocess.Popen(
                [sys.executable, __file__, json.dumps(STEPS)],
                env={
                    **env,
                    "LAKEHOUSE_HOME": str(folder / "lakehouse"),
                    "LAKEHOUSE_SCHEMA": "analytics",
                    "DBT_LOG_PATH": str(folder / "logs"),
                    "DBT_TARGET_PATH": str(folder / "target"),
                    "LAKEHOUSE_JAVA_OPTIONS": f"{java_options} "
                    f"-XX:ArchiveClassesAtExit={self.path}",
                },
                stdout=output,
                stderr=subprocess.STDOUT,
            )

    def options(self) -> str:
        """The JVM options that use the archive, once written; none (and a warning in pytest's
        summary, with the run's log) if it could not be: the steps then start as before."""
        if self.process.wait(timeout=600) != 0 or not self.path.exists():
            if not self.warned:
                self.warned = True
                warnings.warn(f"no class-data archive, see {self.log}", stacklevel=2)
            return ""
        return f"-XX:SharedArchiveFile={self.path} {QUIET}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def main(plan: list[list[str]]) -> int:
    from pyspark import SparkContext

    from retry_safe.project import configure_environment
    from retry_safe.scenario import steps

    configure_environment()
    steps(plan)
    context = SparkContext._active_spark_context
    jvm = context._gateway.proc
    context.stop()
    context._gateway.shutdown()
    jvm.stdin.close()  # the JVM exits when its standard input closes, writing the archive
    return jvm.wait(timeout=300)


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
