"""`lakehouse maintain` (the package's command, run in this process): the selected tables
compacted, the files of no version of the retention window deleted, the interval ledger kept;
what would be done, changing nothing; refusals before anything changes. Maintenance beside a
running MERGE: tests/test_concurrent_runs.py.

A table loaded by three daily runs holds a few small files; a data file a killed MERGE left in
its folder, ten days old, is in no version (the retention is seven days). Every expected row is
written by hand.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from support.tables import commit_count, plant_orphan, rows

from dbt.adapters.lakehouse.commands import cli
from retry_safe.project import interval_flags, run_dbt
from retry_safe.scratch import write_project

VISITS_SQL = """\
{{ config(materialized='incremental', incremental_strategy='idempotent_merge',
          unique_key='id', interval_column='day', delete_missing_in_interval=true) }}
select id, day, pages from {{ target.schema }}.src where {{ in_interval('day', 'date') }}
"""
D1, D2, D3 = date(2026, 11, 1), date(2026, 11, 2), date(2026, 11, 3)
LOADED = [(1, D1, 3), (2, D1, 5), (3, D2, 1), (4, D3, 7)]


def maintain(project: Path, target: str, *options: str) -> int:
    return cli.main(
        ["maintain", "--select", "visits", "--project-dir", str(project), "--target", target]
        + list(options)
    )


@pytest.fixture
def visits(spark, target, schema, table_format, tmp_path) -> Path:
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(f"create table {schema}.src (id bigint, day date, pages bigint) using {table_format}")
    spark.sql(
        f"insert into {schema}.src values (1, date'2026-11-01', 3), (2, date'2026-11-01', 5),"
        " (3, date'2026-11-02', 1), (4, date'2026-11-03', 7)"
    )
    project = write_project(tmp_path / "project", {"visits.sql": VISITS_SQL})
    for day in ("01", "02", "03"):
        end = f"2026-11-0{int(day) + 1}"
        run_dbt(["run", *interval_flags(f"2026-11-{day}", end)], target, project_dir=project)
    return project


def data_files(folder: Path) -> set[Path]:
    return {
        path
        for path in folder.rglob("*.parquet")
        if "_delta_log" not in path.parts and "metadata" not in path.parts
    }


def test_maintain_compacts_deletes_what_no_version_holds_and_keeps_the_ledger(
    spark, target, schema, table_format, visits, capsys
):
    relation = f"{schema}.visits"
    warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
    folder = warehouse / f"{schema}.db" / "visits"
    files = data_files(folder)
    assert len(files) >= 3  # a file or more per run
    # a killed MERGE's data file, ten days old: no version of the table holds it
    orphan = plant_orphan(folder, table_format, {"id": [9], "day": [D1], "pages": [99]})
    commits = commit_count(spark, relation, table_format)

    # a dry run says what it would do and changes nothing
    capsys.readouterr()
    assert maintain(visits, target, "--dry-run", "--json") == 0
    [planned] = [t for t in json.loads(capsys.readouterr().out)["tables"] if t["table"] == relation]
    assert planned["would"]["compact_files"] == len(files)
    assert planned["would"].get("delete_files", planned["would"].get("delete_orphans")) == 1
    assert orphan.exists() and commit_count(spark, relation, table_format) == commits

    assert maintain(visits, target, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    [done] = [t for t in report["tables"] if t["table"] == relation]
    assert done["before"]["files"] == len(files)
    assert done["after"]["files"] == 1
    assert done["compacted"] == {"files_removed": len(files), "files_added": 1}
    assert done["expired"]["files_deleted"] >= 1
    # the interval ledger is maintained with the selection
    assert "the interval ledger" in [t["model"] for t in report["tables"]]
    assert not orphan.exists()
    # the rows as loaded, every day still listed loaded
    assert rows(spark, relation, ["id", "day", "pages"]) == LOADED
    messages: list[str] = []
    run_dbt(
        ["run-operation", "lakehouse_intervals", "--args", "{model: visits}"],
        target,
        project_dir=visits,
        callbacks=[lambda e: messages.append(e.info.msg) if e.info.name == "JinjaLogInfo" else 0],
    )
    assert [m.split(")")[0] for m in messages[1:]] == [
        "  loaded  [2026-11-01T00:00:00Z, 2026-11-02T00:00:00Z",
        "  loaded  [2026-11-02T00:00:00Z, 2026-11-03T00:00:00Z",
        "  loaded  [2026-11-03T00:00:00Z, 2026-11-04T00:00:00Z",
    ]
    # the next run merges into the compacted table as before
    spark.sql(f"update {schema}.src set pages = 8 where id = 4")
    run_dbt(["run", *interval_flags("2026-11-03", "2026-11-04")], target, project_dir=visits)
    assert rows(spark, relation, ["id", "day", "pages"]) == [*LOADED[:3], (4, D3, 8)]


PLAIN_SQL = "{{ config(materialized='table', file_format='parquet') }}\nselect 1 as id\n"
LATER_SQL = "{{ config(materialized='table') }}\nselect 1 as id\n"


@pytest.mark.format_independent
def test_maintain_refuses_before_changing_anything(
    spark, target, schema, table_format, tmp_path, capsys
):
    project = write_project(tmp_path / "project", {"plain.sql": PLAIN_SQL, "later.sql": LATER_SQL})
    run_dbt(["run", "--select", "plain"], target, project_dir=project)

    def refused(selection: str, *options: str) -> str:
        capsys.readouterr()
        status = cli.main(
            ["maintain", "--select", selection, "--project-dir", str(project)]
            + ["--target", target, *options]
        )
        assert status == 2
        return capsys.readouterr().err

    assert refused("plain later", "--retain", "12h") == (
        "lakehouse maintain: nothing was changed, because\n"
        f"  - --retain 12h is shorter than the {table_format} minimum of "
        + ("7d" if table_format == "delta" else "1d")
        + ": "
        + (
            "Delta's VACUUM refuses a retention under its deleted-file retention (7 days): "
            "files younger than that may belong to a commit a running writer is about to make"
            if table_format == "delta"
            else "Iceberg refuses to remove orphan files younger than 24 hours: they may belong "
            "to a commit in flight"
        )
        + ". Give --retain "
        + ("7d" if table_format == "delta" else "1d")
        + " or more.\n"
        f"  - model.scratch.later has no table yet ({schema}.later): run it first, or select "
        "without it.\n"
        "  - model.scratch.plain is not a Delta or Iceberg table (file_format parquet): "
        "maintain compacts and expires only those formats. Select without it.\n"
    )
    assert refused("nothing_here") == (
        "lakehouse maintain: --select nothing_here selects no model, seed or snapshot of this "
        "project: check the name (dbt ls --select ... lists what a selection holds).\n"
    )
    assert refused("later", "--retain", "soon") == (
        "lakehouse maintain: --retain 'soon' is not a duration: write it as hours, days or "
        "weeks (36h, 7d, 2w).\n"
    )
