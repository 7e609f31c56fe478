"""The machine and the versions a benchmark ran on, for the report."""

from __future__ import annotations

import os
import platform
from importlib import metadata
from typing import Any

from dbt.adapters.lakehouse.session.jars import jar_folders, read_manifest


def _first(path: str, prefix: str) -> str:
    try:
        with open(path) as handle:
            for line in handle:
                if line.startswith(prefix):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def machine() -> dict[str, Any]:
    mem_kib = _first("/proc/meminfo", "MemTotal").split()[0]
    return {
        "nproc": os.cpu_count(),
        "memory_gib": round(int(mem_kib) / 1024 / 1024, 1) if mem_kib.isdigit() else None,
        "cpu": _first("/proc/cpuinfo", "model name"),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }


def versions(spark: Any) -> dict[str, str]:
    found = {n: metadata.version(n) for n in ("pyspark", "dbt-core", "dbt-spark", "delta-spark")}
    found["jars"] = ", ".join(classpath_jars(spark))
    found["java"] = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")
    return found


def classpath_jars(spark: Any) -> list[str]:
    """The Maven coordinates of the table-format jars the driver loaded (their folder manifests)."""
    settings = {"spark.driver.extraClassPath": spark.conf.get("spark.driver.extraClassPath", "")}
    coordinates = []
    for folder in jar_folders(settings):
        files = read_manifest(folder) or {}
        coordinates += sorted(str(entry["coordinate"]) for entry in files.values())
    return coordinates
