"""A warehouse on object storage: `LAKEHOUSE_WAREHOUSE=s3a://bucket/prefix`.

The table folders of a session target go to that URL instead of `$LAKEHOUSE_HOME/<format>/
warehouse`; the metastore stays what the target's settings say (the shared PostgreSQL one for
several processes). The store is reached through Hadoop's S3A connector, pinned in jars.json
with the AWS SDK modules it needs (`lakehouse jars` installs them into `<jars root>/s3`), and
configured from the standard AWS environment only, so no credential is ever in a file:

- `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` (`AWS_SESSION_TOKEN`), or any other source of
  S3A's default chain (an instance profile, a web identity), read by S3A itself;
- `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`: another endpoint than AWS's (an on-premises
  store); path-style addressing then, unless `LAKEHOUSE_S3_PATH_STYLE=false`;
- `AWS_REGION`, else `AWS_DEFAULT_REGION` (us-east-1 for another endpoint without one).

**The PostgreSQL metastore is required** (refused in one line before the JVM starts otherwise):
a bucket is shared, and the embedded Derby metastore is one machine's; a second Derby beside
the same bucket would not know its tables and would write into their folders.

**Several writers.** S3 gives no atomic put-if-absent through S3A, and Delta's own S3 log store
is safe for one writing process only: two processes committing version N of one table both
succeed, and one commit is lost (tests/test_object_storage.py shows it). So Delta on object
storage commits through `lakehouse.storage.PostgresLogStore` (storage/java), which takes each
commit's mutual exclusion from a row in the PostgreSQL metastore database: the protocol of
Delta's own external-store log stores (S3DynamoDBLogStore), which works on any S3-compatible
store, conditional writes or not. Iceberg commits through its catalog: the Hive metastore's
table lock (on with PostgreSQL) makes each commit a compare-and-swap of the metadata
location.

**Checked before anything is written** (`require_reachable`, right after the JVM starts): the
bucket is listed once, without S3A's retries; an endpoint that does not answer, credentials
the store refuses, no credentials at all, or a missing bucket stop the run with one line naming
the problem and the fix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from dbt_common.exceptions import DbtRuntimeError

WAREHOUSE_VARIABLE = "LAKEHOUSE_WAREHOUSE"
WAREHOUSE_SETTING = "spark.sql.warehouse.dir"
LOG_STORE_SETTING = "spark.delta.logStore.s3a.impl"
LOG_STORE = "lakehouse.storage.PostgresLogStore"
STORES = {"s3a": "s3"}  # URL scheme -> the connector's jar folder
DEFAULT_REGION = "us-east-1"
# the bucket check's own connector settings: one attempt, a short connect timeout
PROBE = {
    "fs.s3a.attempts.maximum": "1",
    "fs.s3a.retry.limit": "0",
    "fs.s3a.connection.establish.timeout": "5s",
    "fs.s3a.connection.timeout": "10s",
}


class StorageError(DbtRuntimeError):
    """The warehouse's object store cannot be used as configured; the message says the fix."""


def warehouse_url() -> str | None:
    """$LAKEHOUSE_WAREHOUSE, when set."""
    return (os.environ.get(WAREHOUSE_VARIABLE) or "").strip() or None


def store_of(url: str) -> str | None:
    """The object store a warehouse URL is on (`s3`), None for a local path; a URL of another
    scheme is refused with the fix."""
    scheme = urlparse(url).scheme
    if not scheme or scheme == "file" or len(scheme) == 1:  # a path, or a Windows drive
        return None
    if scheme in STORES:
        if not urlparse(url).netloc:
            raise StorageError(
                f"{WAREHOUSE_VARIABLE}={url} names no bucket: use s3a://bucket/prefix"
            )
        return STORES[scheme]
    hint = " (Hadoop's S3A connector: s3a://bucket/prefix)" if scheme in ("s3", "s3n") else ""
    raise StorageError(
        f"{WAREHOUSE_VARIABLE}={url}: the scheme {scheme}:// is not supported{hint}; supported: "
        + ", ".join(f"{name}://" for name in STORES)
    )


def s3_settings() -> dict[str, str]:
    """S3A's endpoint, addressing and region from the AWS environment (module docstring)."""
    env = os.environ.get
    endpoint = env("AWS_ENDPOINT_URL_S3") or env("AWS_ENDPOINT_URL")
    region = env("AWS_REGION") or env("AWS_DEFAULT_REGION")
    settings: dict[str, str] = {}
    if endpoint:
        settings["spark.hadoop.fs.s3a.endpoint"] = endpoint
        path_style = (env("LAKEHOUSE_S3_PATH_STYLE") or "true").lower()
        settings["spark.hadoop.fs.s3a.path.style.access"] = path_style
        region = region or DEFAULT_REGION
    if region:
        settings["spark.hadoop.fs.s3a.endpoint.region"] = region
    return settings


def warehouse_settings(table_format: str, url: str) -> dict[str, str]:
    """The settings of a warehouse at url beyond the jars: the warehouse folder, the store's
    connector settings and, for Delta, the log store that is safe with several writers."""
    settings = {WAREHOUSE_SETTING: url.rstrip("/"), **s3_settings()}
    if table_format == "delta":
        settings[LOG_STORE_SETTING] = LOG_STORE
    return settings


def require_safe(parameters: Mapping[str, str]) -> None:
    """Refuses, before the JVM starts, a warehouse on object storage without the PostgreSQL
    metastore: a bucket is shared, an embedded Derby metastore is one machine's (a second one
    beside the same bucket would not know its tables and write into their folders), and
    Delta's log store keeps its commits in that database."""
    warehouse = str(parameters.get(WAREHOUSE_SETTING) or "")
    if not warehouse or store_of(warehouse) is None:
        return
    url = str(parameters.get("spark.hadoop.javax.jdo.option.ConnectionURL") or "")
    if url.startswith("jdbc:postgresql:"):
        return
    delta = parameters.get(LOG_STORE_SETTING) == LOG_STORE
    why = (
        "Delta's commits from several processes are kept in that database (S3 has no atomic "
        "put-if-absent through S3A: two processes could both commit one version, and one "
        "commit would be lost), and "
        if delta
        else ""
    )
    raise StorageError(
        f"A warehouse on object storage ({warehouse}) needs the PostgreSQL metastore: {why}"
        "the embedded Derby metastore is one machine's, beside a bucket others share. Set "
        "LAKEHOUSE_METASTORE_URL=jdbc:postgresql://... (then `lakehouse metastore init` once), or "
        f"unset {WAREHOUSE_VARIABLE} to keep the warehouse on local disk."
    )


def _cause(error: Exception) -> tuple[str, str]:
    """(the Java exception class chain, the messages) of a py4j error."""
    java = getattr(error, "java_exception", None)
    names, messages = [], []
    while java is not None:
        names.append(str(java.getClass().getName()))
        messages.append(" ".join(str(java.getMessage() or "").split()))
        following = java.getCause()
        java = None if following is None or following.equals(java) else following
    return " ".join(names), " | ".join(messages) or " ".join(str(error).split())


def problem_of(error: Exception, url: str, endpoint: str) -> str:
    """One line for a failed bucket check, by what the connector raised."""
    names, messages = _cause(error)
    bucket = urlparse(url).netloc
    where = f"the object store at {endpoint}" if endpoint else "AWS S3"
    subject = where[:1].upper() + where[1:]
    text = f"{names} {messages}"
    if "NoAuthWithAWSException" in text or "No AWS Credentials" in text:
        return (
            f"No credentials for {where}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or "
            "run where an instance profile gives them); they are read from the environment only."
        )
    if "AccessDenied" in text or "InvalidAccessKeyId" in text or "SignatureDoesNotMatch" in text:
        return (
            f"{subject} refused the credentials for bucket {bucket} ({messages.split(' | ')[0]}): "
            "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and that they may list and write "
            "the bucket."
        )
    if "UnknownStoreException" in text or "NoSuchBucket" in text or "does not exist" in text:
        return (
            f"The bucket {bucket} of {WAREHOUSE_VARIABLE}={url} does not exist at {where}: "
            "create it, or correct the URL."
        )
    return (
        f"{subject} cannot be reached for {WAREHOUSE_VARIABLE}={url} ({messages.split(' | ')[-1]}): "
        "check AWS_ENDPOINT_URL (scheme, host, port) and that the store is running."
    )


def require_reachable(parameters: Mapping[str, str], jvm: Any, hadoop_conf: Any) -> None:
    """Lists the warehouse's bucket once with the session's connector and credentials, without
    retries; a StorageError naming the problem when that fails."""
    url = str(parameters.get(WAREHOUSE_SETTING) or "")
    if not url or store_of(url) is None:
        return
    conf = jvm.org.apache.hadoop.conf.Configuration(hadoop_conf)
    for key, value in PROBE.items():
        conf.set(key, value)
    root = jvm.java.net.URI(f"{urlparse(url).scheme}://{urlparse(url).netloc}/")
    endpoint = str(parameters.get("spark.hadoop.fs.s3a.endpoint") or "")
    try:
        store = jvm.org.apache.hadoop.fs.FileSystem.newInstance(root, conf)
        try:
            store.listStatus(jvm.org.apache.hadoop.fs.Path(root))
        finally:
            store.close()
    except Exception as error:  # py4j's Py4JJavaError: the connector's exception inside
        raise StorageError(problem_of(error, url, endpoint)) from None
