"""A warehouse on object storage (storage/object_store.py, session/settings.py): the URL's
checks, the connector's settings from the AWS environment only, the jars, Delta's log store
and its refusal without the PostgreSQL metastore, and the bucket check's one-line messages."""

from __future__ import annotations

import pytest

from dbt.adapters.lakehouse.session import settings as session_settings_module
from dbt.adapters.lakehouse.session.jars import pinned_storage
from dbt.adapters.lakehouse.session.settings import session_settings
from dbt.adapters.lakehouse.storage.object_store import (
    StorageError,
    problem_of,
    require_safe,
    store_of,
)

AWS = (
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "LAKEHOUSE_S3_PATH_STYLE",
    "LAKEHOUSE_WAREHOUSE",
    "LAKEHOUSE_METASTORE_URL",
    "LAKEHOUSE_METASTORE_CLASSPATH",
)
PG = "jdbc:postgresql://db.example:5432/metastore"


@pytest.fixture
def environment(monkeypatch):
    for name in AWS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LAKEHOUSE_JARS_DIR", "/opt/jars")
    monkeypatch.setenv("LAKEHOUSE_HOME", "/srv/lakehouse")
    # the compiled log store's jar (a checkout compiles it with javac on first use)
    monkeypatch.setattr(
        session_settings_module, "storage_jar", lambda: "/opt/lakehouse-storage.jar"
    )
    return monkeypatch


@pytest.mark.parametrize(
    ("url", "store"),
    [("s3a://bucket/warehouse", "s3"), ("/data/warehouse", None), ("file:///data/w", None)],
)
def test_a_warehouse_url_names_its_store(url, store):
    assert store_of(url) == store


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "s3://bucket/w",
            "LAKEHOUSE_WAREHOUSE=s3://bucket/w: the scheme s3:// is not supported (Hadoop's S3A "
            "connector: s3a://bucket/prefix); supported: s3a://",
        ),
        (
            "gs://bucket/w",
            "LAKEHOUSE_WAREHOUSE=gs://bucket/w: the scheme gs:// is not supported; supported: "
            "s3a://",
        ),
        ("s3a:///w", "LAKEHOUSE_WAREHOUSE=s3a:///w names no bucket: use s3a://bucket/prefix"),
    ],
)
def test_a_warehouse_url_the_package_cannot_use_is_refused_with_the_fix(url, message):
    with pytest.raises(StorageError) as raised:
        store_of(url)
    assert raised.value.msg == message


def test_delta_on_s3_gets_the_connector_the_endpoint_and_the_log_store(environment):
    environment.setenv("LAKEHOUSE_WAREHOUSE", "s3a://lake/prod/")
    environment.setenv("LAKEHOUSE_METASTORE_URL", PG)
    environment.setenv("AWS_ENDPOINT_URL", "http://store.internal:9000")
    environment.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    environment.setenv("AWS_SECRET_ACCESS_KEY", "never-in-a-setting")
    settings = session_settings("delta", {})
    assert settings["spark.sql.warehouse.dir"] == "s3a://lake/prod"
    assert settings["spark.hadoop.fs.s3a.endpoint"] == "http://store.internal:9000"
    assert settings["spark.hadoop.fs.s3a.path.style.access"] == "true"
    assert settings["spark.hadoop.fs.s3a.endpoint.region"] == "us-east-1"
    assert settings["spark.delta.logStore.s3a.impl"] == "lakehouse.storage.PostgresLogStore"
    assert settings["spark.driver.extraClassPath"] == (
        "/opt/jars/delta/*:/opt/jars/s3/*:/opt/lakehouse-storage.jar:/opt/jars/postgresql/*"
    )
    # credentials stay in the environment, where S3A's own chain reads them
    assert not [value for value in settings.values() if "never-in-a-setting" in value]
    require_safe(settings)  # the PostgreSQL metastore keeps the commits: accepted
    # a cluster's executors get the connector and the log store (they read the log too)
    cluster = session_settings("delta", {"spark.master": "spark://master:7077"})
    assert cluster["spark.jars"] == (
        "/opt/jars/delta/*.jar,/opt/jars/s3/*.jar,/opt/lakehouse-storage.jar"
    )


def test_iceberg_on_aws_s3_takes_the_region_and_no_endpoint(environment):
    environment.setenv("LAKEHOUSE_WAREHOUSE", "s3a://lake/prod")
    environment.setenv("LAKEHOUSE_METASTORE_URL", PG)
    environment.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    settings = session_settings("iceberg", {"spark.master": "spark://master:7077"})
    assert settings["spark.hadoop.fs.s3a.endpoint.region"] == "eu-west-1"
    assert "spark.hadoop.fs.s3a.endpoint" not in settings
    assert "spark.delta.logStore.s3a.impl" not in settings
    # the executors get the connector too
    assert settings["spark.jars"] == "/opt/jars/iceberg/*.jar,/opt/jars/s3/*.jar"
    require_safe(settings)


def test_an_endpoint_of_its_own_names_endpoint_and_addressing(environment):
    environment.setenv("LAKEHOUSE_WAREHOUSE", "s3a://lake/w")
    environment.setenv("AWS_ENDPOINT_URL", "http://general:9000")
    environment.setenv("AWS_ENDPOINT_URL_S3", "https://s3.internal")
    environment.setenv("AWS_REGION", "eu-central-1")
    environment.setenv("LAKEHOUSE_S3_PATH_STYLE", "false")
    settings = session_settings("iceberg", {})
    assert settings["spark.hadoop.fs.s3a.endpoint"] == "https://s3.internal"
    assert settings["spark.hadoop.fs.s3a.path.style.access"] == "false"
    assert settings["spark.hadoop.fs.s3a.endpoint.region"] == "eu-central-1"


def test_a_local_warehouse_url_moves_the_folder_only(environment):
    environment.setenv("LAKEHOUSE_WAREHOUSE", "/data/warehouse")
    settings = session_settings("delta", {})
    assert settings["spark.sql.warehouse.dir"] == "/data/warehouse"
    assert "spark.delta.logStore.s3a.impl" not in settings
    assert settings["spark.driver.extraClassPath"] == "/opt/jars/delta/*"


@pytest.mark.parametrize("table_format", ["delta", "iceberg"])
def test_object_storage_without_the_postgresql_metastore_is_refused(environment, table_format):
    environment.setenv("LAKEHOUSE_WAREHOUSE", "s3a://lake/w")
    with pytest.raises(StorageError) as raised:
        require_safe(session_settings(table_format, {}))
    delta = (
        "Delta's commits from several processes are kept in that database (S3 has no atomic "
        "put-if-absent through S3A: two processes could both commit one version, and one "
        "commit would be lost), and "
    )
    assert raised.value.msg == (
        "A warehouse on object storage (s3a://lake/w) needs the PostgreSQL metastore: "
        + (delta if table_format == "delta" else "")
        + "the embedded Derby metastore is one machine's, beside a bucket others share. Set "
        "LAKEHOUSE_METASTORE_URL=jdbc:postgresql://... (then `lakehouse metastore init` once), or "
        "unset LAKEHOUSE_WAREHOUSE to keep the warehouse on local disk."
    )
    # a local warehouse keeps the embedded metastore
    environment.setenv("LAKEHOUSE_WAREHOUSE", "/data/warehouse")
    require_safe(session_settings(table_format, {}))


def test_the_s3_connector_is_pinned_without_what_pyspark_ships():
    coordinates = [jar.coordinate for jar in pinned_storage()["s3"]]
    assert "org.apache.hadoop:hadoop-aws:3.4.2" in coordinates
    assert "software.amazon.awssdk:s3:2.29.52" in coordinates
    assert not [c for c in coordinates if c.startswith(("io.netty:", "org.slf4j:"))]
    assert all(jar.sha256 and jar.size for jar in pinned_storage()["s3"])


class JavaError:
    """What py4j hands over: the exception and its causes, by class name and message."""

    def __init__(self, chain: list[tuple[str, str]]) -> None:
        self.chain = chain

    @property
    def java_exception(self) -> _Java:
        return _Java(self.chain)


class _Java:
    def __init__(self, chain: list[tuple[str, str]]) -> None:
        self.chain = chain

    def getClass(self) -> _Java:  # noqa: N802 (Java's names)
        return self

    def getName(self) -> str:  # noqa: N802
        return self.chain[0][0]

    def getMessage(self) -> str:  # noqa: N802
        return self.chain[0][1]

    def getCause(self) -> _Java | None:  # noqa: N802
        return _Java(self.chain[1:]) if len(self.chain) > 1 else None

    def equals(self, other: object) -> bool:
        return False


def test_no_credentials_at_all_names_the_variables():
    error = JavaError(
        [("org.apache.hadoop.fs.s3a.auth.NoAuthWithAWSException", "No AWS Credentials provided")]
    )
    assert problem_of(error, "s3a://lake/w", "") == (
        "No credentials for AWS S3: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or run "
        "where an instance profile gives them); they are read from the environment only."
    )
