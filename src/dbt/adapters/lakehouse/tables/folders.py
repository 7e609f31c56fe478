"""A dropped table's folder, removed once no file is left in it.

Iceberg's DROP TABLE ... PURGE deletes a table's data and metadata files, not their folders: on
a file system with folders (a local disk, HDFS), `<table>/data` and `<table>/metadata` stayed,
empty, for every staging table a Python model run dropped. Object stores have no folders to
leave. The embedded session's Hadoop file system (through py4j) removes the folder, only when
no file at all is left under it: a folder still holding a file (another table's, a writer's
in flight) is never touched.
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.lakehouse.python_submissions import active_session


def remove_if_empty(credentials: Any, location: str) -> bool:
    """Remove the folder at location (a Hadoop path) when no file is left under it; whether it
    was removed."""
    spark = active_session(credentials.server_side_parameters)
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
    if not fs.exists(path) or fs.listFiles(path, True).hasNext():
        return False
    return bool(fs.delete(path, True))
