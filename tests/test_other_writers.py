"""Another run creates the table while this one runs.

A scheduler runs several dbt processes at once on one metastore (through the lakehouse server,
or on a cluster): two runs of one model for different intervals may both start before the table
exists, and both find "no table" in the relation cache dbt fills when a run starts. The second
first load must not replace the first one's rows: it merges into them. (A listing of the schema while other runs
create and drop tables: tests/adapter/test_schema_listing.py.)
"""

from __future__ import annotations

from support.tables import rows

from retry_safe.project import run_dbt
from retry_safe.scratch import write_project

# A first load whose pre-hook plays another run of the same model that created the table (with
# a newer version of key 1) after this run started: dbt's cache still says "no table".
RACED_MODEL = """\
{{
    config(
        materialized='incremental',
        incremental_strategy='idempotent_merge',
        unique_key='id',
        version_column='version',
        pre_hook="create table if not exists {{ this }} using {{ config.get('file_format') }} as
            select 1L as id, 'from the other run' as name, 2L as version",
    )
}}

select * from {{ target.schema }}.src
"""


def test_a_first_load_merges_into_a_table_another_run_created_meanwhile(
    spark, target, schema, table_format, tmp_path
):
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(
        f"create table {schema}.src (id bigint, name string, version bigint) using {table_format}"
    )
    spark.sql(f"insert into {schema}.src values (1, 'this run', 1), (2, 'this run', 1)")
    root = write_project(tmp_path / "project", {"raced.sql": RACED_MODEL})

    # the other run's table is never replaced: this run merges into it, as its rerun would:
    # key 2 added, key 1 kept (the other run's version is newer)
    run_dbt(["run"], target, project_dir=root)
    columns = ["id", "name", "version"]
    assert rows(spark, f"{schema}.raced", columns) == [
        (1, "from the other run", 2),
        (2, "this run", 1),
    ]
