"""`python -m retry_safe.bench storage` (`make bench-storage`): the re-merge on local disk and on
object storage, in one run.

Per format, the benchmark's `run` twice in processes of their own: the warehouse on local disk,
then in a bucket of a local S3-compatible server (S3Proxy, `retry_safe.s3`); both on one local
PostgreSQL server (`retry_safe.postgres`), each on a metastore database of its own made by the
package's `lakehouse metastore init`, since object storage needs that metastore and the two
sides must differ in the storage alone. The raw files are `<label>-local-<format>.json` and
`<label>-s3-<format>.json` (label `storage` by default); the report pairs them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from retry_safe.postgres import create_database, local_postgres, on_database
from retry_safe.project import PROJECT_DIR
from retry_safe.s3 import BUCKET, local_s3

SIDES = ("local", "s3")


def label_of(args: argparse.Namespace) -> str:
    return "storage" if args.label == "default" else args.label


def metastore(cluster: Path, environment: dict[str, str], name: str, table_format: str) -> dict:
    """A database `lakehouse metastore init` made for the format: the environment naming it."""
    create_database(cluster, name)
    metastore = on_database(environment, name)
    env = {**os.environ, **metastore}
    lakehouse = str(Path(sys.executable).with_name("lakehouse"))
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run(
            [lakehouse, "metastore", "init", "--format", table_format],
            env={**env, "LAKEHOUSE_HOME": home},
            check=False,
            capture_output=True,
            text=True,
        )
    if done.returncode:
        raise SystemExit(f"lakehouse metastore init failed:\n{done.stdout}{done.stderr}")
    return metastore


def compare(args: argparse.Namespace, run_flags: Callable[[argparse.Namespace], list[str]]) -> int:
    """Each format on local disk, then in the bucket; 1 if a run failed."""
    label = label_of(args)
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as scratch:
        servers = Path(scratch)
        servers.chmod(0o755)  # PostgreSQL runs as its own user
        with local_postgres(servers / "pg") as pg, local_s3(servers / "s3") as s3:
            for table_format in args.formats:
                for side in SIDES:
                    env = metastore(
                        servers / "pg", pg, f"bench_{table_format}_{side}", table_format
                    )
                    if side == "s3":
                        env |= s3 | {"LAKEHOUSE_WAREHOUSE": f"s3a://{BUCKET}/bench-{table_format}"}
                    one = argparse.Namespace(
                        **{**vars(args), "label": f"{label}-{side}", "warehouse": side}
                    )
                    command = [sys.executable, "-m", "retry_safe.bench", "run"]
                    command += ["--format", table_format, *run_flags(one)]
                    print(f"[bench] {table_format} on {side} storage", flush=True)
                    done = subprocess.run(command, cwd=PROJECT_DIR, env={**os.environ, **env})
                    if done.returncode:
                        return 1
    return 0
