# Research smoke (docs/design/object-storage.md), run 2026-12-06 on this machine: paths under
# /tmp/s3-research, S3Proxy started beforehand on the port in /tmp/s3-research/port, boto3 from
# a scratch virtualenv. Evidence for the design, not part of the product or the test suite.
# Its sections import what each needs where it starts.
# ruff: noqa: E402
import json
import os
import sys
import threading
import time

T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


from pyspark.sql import SparkSession

R = "/tmp/s3-research"
with open(f"{R}/port") as handle:
    port = handle.read().strip()
PJ = [
    p for p in __import__("glob").glob("/work/main/.venv/lib/python3*/site-packages/pyspark/jars")
][0]
jars = (
    [f"{R}/hadoop-aws-3.4.2.jar"]
    + ([] if os.environ.get("NOBUNDLE") else [f"{R}/bundle-2.29.52.jar"])
    + [
        "/work/main/.jars/delta/delta-spark_4.1_2.13-4.4.0.jar",
        "/work/main/.jars/delta/delta-storage-4.4.0.jar",
        "/work/main/.jars/iceberg/iceberg-spark-runtime-4.1_2.13-1.12.0.jar",
        f"{R}/logstore/conditional-logstore.jar",
    ]
    + sys.argv[1:]
)
conf = {
    "spark.master": "local[1]",
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.ui.showConsoleProgress": "false",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2",
    "spark.driver.extraClassPath": ":".join(jars),
    "spark.driver.extraJavaOptions": f"-Dderby.system.home={R}/run -XX:+UseSerialGC -XX:TieredStopAtLevel=1",
    "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={R}/run/metastore_db;create=true",
    "spark.sql.catalogImplementation": "hive",
    "spark.sql.warehouse.dir": "s3a://lakehouse/smoke/warehouse",
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension,org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    "spark.sql.catalog.ice": "org.apache.iceberg.spark.SparkCatalog",
    "spark.sql.catalog.ice.type": "hadoop",
    "spark.sql.catalog.ice.warehouse": "s3a://lakehouse/smoke/iceberg",
    # S3A: endpoint, path style, credentials from the environment only
    "spark.hadoop.fs.s3a.endpoint": f"http://127.0.0.1:{port}",
    "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
    "spark.hadoop.fs.s3a.path.style.access": "true",
    "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
    "spark.hadoop.fs.s3a.aws.credentials.provider": "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider",
    "spark.hadoop.fs.s3a.multipart.size": "5M",
    "spark.hadoop.fs.s3a.multipart.threshold": "5M",
    "spark.delta.logStore.s3a.impl": "io.lakehouse.ConditionalPutLogStore",
    "spark.databricks.delta.retentionDurationCheck.enabled": "false",
}
b = SparkSession.builder
for k, v in conf.items():
    b = b.config(k, v)
spark = b.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
log("session up")
jvm = spark._jvm
hconf = spark._jsc.hadoopConfiguration()
P = jvm.org.apache.hadoop.fs.Path
import boto3
from botocore.config import Config

s3 = boto3.client(
    "s3",
    endpoint_url=f"http://127.0.0.1:{port}",
    region_name="us-east-1",
    config=Config(s3={"addressing_style": "path"}),
)
RUN = str(int(time.time()))


def body(key):
    return s3.get_object(Bucket="lakehouse", Key=key)["Body"].read()


# --- 1. raw S3A: plain create(overwrite=false) race vs conditional create
p = P("s3a://lakehouse/race/" + RUN + "/plain.json")
fs = p.getFileSystem(hconf)
log(
    "fs",
    fs.getClass().getName(),
    "conditional capability:",
    fs.hasPathCapability(p, "fs.option.create.conditional.overwrite"),
)
a = fs.create(p, False)
b2 = fs.create(p, False)
a.write(bytearray(b"writer A\n"))
b2.write(bytearray(b"writer B\n"))
a.close()
b2.close()
log(
    "plain create(overwrite=false) x2, both closed OK; object now holds:",
    body("race/" + RUN + "/plain.json"),
)
p2 = P("s3a://lakehouse/race/" + RUN + "/conditional.json")


def cond():
    return (
        fs.createFile(p2)
        .overwrite(True)
        .must("fs.option.create.conditional.overwrite", True)
        .build()
    )


a = cond()
b2 = cond()
a.write(bytearray(b"writer A\n"))
b2.write(bytearray(b"writer B\n"))
a.close()
try:
    b2.close()
    log("conditional: second close succeeded (NOT SAFE)")
except Exception as e:
    m = [line for line in str(e).split("\n") if "Exception" in line][:3]
    log("conditional: second close refused:", m)
log("conditional object holds:", body("race/" + RUN + "/conditional.json"))
# multipart through S3A (5 MB parts)
p3 = P("s3a://lakehouse/race/big.bin")
fs3 = P("s3a://lakehouse/").getFileSystem(hconf)
o = fs3.create(p3, True)
chunk = bytearray(1024 * 1024)
for _ in range(12):
    o.write(chunk)
o.close()
log(
    "12 MB write, size",
    fs3.getFileStatus(p3).getLen(),
    "stats:",
    str(o.toString())[-300:] if False else "",
)
st = str(fs3.getIOStatistics())
import re

log(
    "s3a counters:",
    re.findall(
        r"\((object_multipart_initiated|multipart_upload_completed|conditional_create|conditional_create_failed|object_put_request)=(\d+)\)",
        st,
    ),
)
# --- 2. Delta through the metastore catalog, table at s3a
spark.sql("create database if not exists smoke")
spark.sql(
    "create or replace table smoke.d4 (id bigint, v string) using delta location 's3a://lakehouse/smoke/delta/d4'"
)
spark.sql("insert into smoke.d4 values (1,'a'),(2,'b')")
spark.sql(
    "merge into smoke.d4 t using (select 2 id, 'B' v union all select 3, 'c') s on t.id=s.id when matched then update set * when not matched then insert *"
)
log("delta rows", spark.table("smoke.d4").orderBy("id").collect())
# --- 3. a writer from another process (boto3) takes the next version while Delta's transaction runs
import boto3
from botocore.config import Config

s3 = boto3.client(
    "s3",
    endpoint_url=f"http://127.0.0.1:{port}",
    region_name="us-east-1",
    config=Config(s3={"addressing_style": "path"}),
)
ver = spark.sql("describe history smoke.d4").agg({"version": "max"}).collect()[0][0]
key = f"smoke/delta/d4/_delta_log/{ver + 1:020d}.json"


def foreign():
    time.sleep(3)
    s3.put_object(
        Bucket="lakehouse",
        Key=key,
        IfNoneMatch="*",
        Body=json.dumps(
            {
                "commitInfo": {
                    "timestamp": int(time.time() * 1000),
                    "operation": "FOREIGN WRITE",
                    "operationParameters": {},
                    "isBlindAppend": True,
                }
            }
        ).encode()
        + b"\n",
    )
    log("foreign process committed version", ver + 1)


th = threading.Thread(target=foreign)
th.start()
from pyspark.sql.functions import udf


@udf("bigint")
def slow(x):
    import time

    time.sleep(6)
    return x


spark.range(10, 11).select(slow("id").alias("id")).selectExpr("id", "'slow' v").write.format(
    "delta"
).mode("append").saveAsTable("smoke.d4")
th.join()
h = (
    spark.sql("describe history smoke.d4")
    .select("version", "operation")
    .orderBy("version")
    .collect()
)
log("history after race", [(r.version, r.operation) for r in h])
log("delta rows", spark.table("smoke.d4").orderBy("id").collect())
if os.environ.get("SHORT"):
    spark.stop()
    sys.exit(0)
# --- 4. Delta VACUUM (orphans)
fs.create(P("s3a://lakehouse/smoke/delta/d4/part-orphan.parquet"), True).close()
spark.sql("vacuum smoke.d4 retain 0 hours")
log(
    "after vacuum, orphan exists?",
    fs.exists(P("s3a://lakehouse/smoke/delta/d4/part-orphan.parquet")),
)
# --- 5. Iceberg (Hadoop catalog, HadoopFileIO over S3A)
spark.sql("create namespace if not exists ice.smoke")
spark.sql("create or replace table ice.smoke.i2 (id bigint, v string) using iceberg")
spark.sql("insert into ice.smoke.i2 values (1,'a'),(2,'b')")
spark.sql(
    "merge into ice.smoke.i2 t using (select 2L id, 'B' v union all select 3L, 'c') s on t.id=s.id when matched then update set * when not matched then insert *"
)
log("iceberg rows", spark.table("ice.smoke.i2").orderBy("id").collect())
log("iceberg io", spark.sql("select * from ice.smoke.i2.snapshots").count(), "snapshots")
loc = spark.sql("describe table extended ice.smoke.i2").where("col_name='Location'").collect()[0][1]
fs.create(P(loc + "/data/orphan.parquet"), True).close()
ts = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() + 60))
t = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, "ice.smoke.i2")
res = (
    jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)
    .deleteOrphanFiles(t)
    .olderThan(int(time.time() * 1000) + 60000)
    .execute()
)
log("iceberg deleteOrphanFiles removed", [str(x) for x in res.orphanFileLocations()])
log("iceberg rows after", spark.table("ice.smoke.i2").count())
spark.stop()
log("done")
