"""The idempotent_merge strategy on its own: functional tests on a scratch project.

Each test writes its model(s), fills a source table through Spark, runs dbt in-process and
compares the whole table with rows written out here by hand.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime

import pytest
from support.tables import commit_count, rows

from retry_safe.project import describe_failure, interval_flags, interval_vars, run_dbt
from retry_safe.scratch import write_project

T0, T1, T2, T3 = (datetime(2026, 10, d, 9, 0) for d in (1, 2, 3, 4))
T1_LATER = datetime(2026, 10, 2, 23, 59, 59)
SOURCE_COLUMNS = "id bigint, part string, name string, amount bigint, updated_at timestamp"
COLUMNS = ["id", "part", "name", "amount", "updated_at"]


def versioned_model(**config: object) -> str:
    settings = {
        "materialized": "'incremental'",
        "incremental_strategy": "'idempotent_merge'",
        "unique_key": "['id', 'part']",
        "version_column": "'updated_at'",
        **{
            k: repr(v) if not isinstance(v, str) or not v.startswith("@") else v[1:]
            for k, v in config.items()
        },
    }
    body = ",\n        ".join(f"{k}={v}" for k, v in settings.items())
    return (
        "{{\n    config(\n        " + body + ",\n    )\n}}\n\n"
        "select * from {{ target.schema }}.src\n"
    )


def fill_source(spark, schema: str, table_format: str, values: list[tuple]) -> None:
    spark.sql(f"drop table if exists {schema}.src")
    spark.sql(f"create table {schema}.src ({SOURCE_COLUMNS}) using {table_format}")
    if values:
        frame = spark.createDataFrame(values, SOURCE_COLUMNS)
        frame.writeTo(f"{schema}.src").append()


@pytest.fixture
def project(tmp_path):
    def make(**models: str):
        return write_project(tmp_path / "project", {f"{k}.sql": v for k, v in models.items()})

    return make


def test_newest_row_wins_and_an_older_row_never_overwrites(
    spark, target, schema, table_format, project
):
    root = project(merged=versioned_model(allow_null_keys=True))
    spark.sql(f"create schema if not exists {schema}")
    fill_source(
        spark,
        schema,
        table_format,
        [
            (1, "a", "x0", 5, T0),
            (1, "a", "x1", 10, T1),  # newer change of the same key, same file
            (2, None, "y", 20, T0),  # NULL key part, allowed by allow_null_keys
        ],
    )
    run_dbt(["run"], target, project_dir=root)
    relation = f"{schema}.merged"
    assert rows(spark, relation, COLUMNS, ["id"]) == [
        (1, "a", "x1", 10, T1),
        (2, None, "y", 20, T0),
    ]
    before = commit_count(spark, relation, table_format)

    run_dbt(["run"], target, project_dir=root)  # the retry: nothing to do, nothing committed
    assert commit_count(spark, relation, table_format) == before

    fill_source(
        spark,
        schema,
        table_format,
        [
            (1, "a", "stale", 1, T0),  # older than the table's row: ignored
            (2, None, "y2", 21, T2),  # newer, matched null-safely: updated, not inserted again
            (3, "c", "z", 30, T1),
        ],
    )
    run_dbt(["run"], target, project_dir=root)
    assert rows(spark, relation, COLUMNS, ["id"]) == [
        (1, "a", "x1", 10, T1),
        (2, None, "y2", 21, T2),
        (3, "c", "z", 30, T1),
    ]
    run_dbt(["run"], target, project_dir=root)
    assert rows(spark, relation, COLUMNS, ["id"]) == [
        (1, "a", "x1", 10, T1),
        (2, None, "y2", 21, T2),
        (3, "c", "z", 30, T1),
    ]


def test_unchanged_rows_are_not_rewritten(spark, target, schema, table_format, project):
    root = project(merged=versioned_model(version_column=None))
    spark.sql(f"create schema if not exists {schema}")
    values = [(1, "a", "x", 1, T0), (2, "b", "y", 2, T0)]
    fill_source(spark, schema, table_format, values)
    run_dbt(["run"], target, project_dir=root)
    relation = f"{schema}.merged"
    before = commit_count(spark, relation, table_format)
    run_dbt(["run"], target, project_dir=root)
    assert commit_count(spark, relation, table_format) == before
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T0), (2, "b", "y-changed", 2, T0)])
    run_dbt(["run"], target, project_dir=root)
    assert commit_count(spark, relation, table_format) == before + 1
    assert rows(spark, relation, COLUMNS, ["id"]) == [
        (1, "a", "x", 1, T0),
        (2, "b", "y-changed", 2, T0),
    ]


def test_equal_versions_with_different_values_are_refused(
    spark, target, schema, table_format, project
):
    root = project(merged=versioned_model())
    spark.sql(f"create schema if not exists {schema}")
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T0)])
    run_dbt(["run"], target, project_dir=root)
    before = commit_count(spark, f"{schema}.merged", table_format)
    fill_source(
        spark,
        schema,
        table_format,
        [(1, "a", "p", 1, T1), (1, "a", "q", 2, T1), (2, "b", "ok", 3, T1)],
    )
    text = describe_failure(run_dbt(["run"], target, project_dir=root, expect_pass=False))
    assert "id=1, part=a, updated_at=2026-10-02 09:00:00: 2 different rows" in text
    assert "tie_break_column" in text
    assert "nothing was written" in text
    assert rows(spark, f"{schema}.merged", COLUMNS, ["id"]) == [(1, "a", "x", 1, T0)]
    assert commit_count(spark, f"{schema}.merged", table_format) == before

    tie_broken = project(merged=versioned_model(tie_break_column="amount"))
    run_dbt(["run"], target, project_dir=tie_broken)
    assert rows(spark, f"{schema}.merged", COLUMNS, ["id"]) == [
        (1, "a", "q", 2, T1),
        (2, "b", "ok", 3, T1),
    ]


@pytest.mark.format_independent
def test_null_key_is_refused_by_default(spark, target, schema, table_format, project):
    root = project(merged=versioned_model())
    spark.sql(f"create schema if not exists {schema}")
    fill_source(spark, schema, table_format, [(1, None, "x", 1, T0)])
    text = describe_failure(run_dbt(["run"], target, project_dir=root, expect_pass=False))
    assert "model.scratch.merged" in text
    assert "1 source row(s) have a NULL in the key (id, part)" in text
    assert "allow_null_keys" in text
    assert not spark.catalog.tableExists(f"{schema}.merged")


@pytest.mark.format_independent
@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {"unique_key": "@['id', 'uuid()']"},
            "unique_key uses the non-deterministic function uuid()",
        ),
        (
            {
                "incremental_predicates": "@['target.updated_at > current_timestamp() - interval 1 day']"
            },
            "incremental_predicates uses the non-deterministic function current_timestamp()",
        ),
        ({"unique_key": "@['id', 'lower(part)']"}, "is not a column name"),
        (
            {"delete_missing_in_interval": True},
            "delete_missing_in_interval: true needs interval_column",
        ),
        (
            {"merge_update_expressions": {"amount": "target.amount + source.amount"}},
            "Set batch_column to a column holding the batch id",
        ),
        ({"version_column": "changed_at"}, 'version_column names the column "changed_at"'),
    ],
)
def test_bad_configs_fail_before_anything_is_written(
    spark, target, schema, table_format, project, config, expected
):
    root = project(merged=versioned_model(**config))
    spark.sql(f"create schema if not exists {schema}")
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T0)])
    text = describe_failure(run_dbt(["run"], target, project_dir=root, expect_pass=False))
    assert "model.scratch.merged" in text
    assert expected in text
    assert not spark.catalog.tableExists(f"{schema}.merged")


@pytest.mark.format_independent
def test_nondeterministic_model_code_is_refused(spark, target, schema, table_format, project):
    code = versioned_model().replace(
        "select * from {{ target.schema }}.src",
        "select id, part, name, amount, current_timestamp() as updated_at from {{ target.schema }}.src",
    )
    root = project(merged=code)
    spark.sql(f"create schema if not exists {schema}")
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T0)])
    text = describe_failure(run_dbt(["run"], target, project_dir=root, expect_pass=False))
    assert "the model code uses the non-deterministic function current_timestamp()" in text


def test_interval_reconciliation_on_a_timestamp_column(
    spark, target, schema, table_format, project
):
    model = versioned_model(
        unique_key="id",
        interval_column="updated_at",
        delete_missing_in_interval=True,
    ).replace(
        "select * from {{ target.schema }}.src",
        "select * from {{ target.schema }}.src where {{ in_interval('updated_at') }}",
    )
    root = project(merged=model)
    spark.sql(f"create schema if not exists {schema}")
    fill_source(
        spark,
        schema,
        table_format,
        [
            (1, "a", "x", 1, T0),
            (2, "b", "y", 2, T1),
            (3, "c", "z", 3, T2),
            (4, "d", "w", 4, T1_LATER),
        ],
    )
    run_dbt(["run", *interval_flags("2026-10-01", "2026-10-05")], target, project_dir=root)
    # id 2 disappears upstream: reconciling Oct 2 deletes it, keeps id 4 (still sent) and
    # never looks at ids 1 and 3, which lie outside the interval (given as the vars, with
    # offsets: the same instants in UTC).
    fill_source(spark, schema, table_format, [(4, "d", "w", 4, T1_LATER)])
    run_dbt(
        ["run"],
        target,
        interval_vars("2026-10-02T00:00:00+00:00", "2026-10-03T02:00:00+02:00"),
        project_dir=root,
    )
    assert rows(spark, f"{schema}.merged", COLUMNS, ["id"]) == [
        (1, "a", "x", 1, T0),
        (3, "c", "z", 3, T2),
        (4, "d", "w", 4, T1_LATER),
    ]


@pytest.mark.format_independent
def test_unknown_strategy_name_fails_clearly(spark, target, schema, project):
    root = project(
        merged="{{ config(materialized='incremental', incremental_strategy='upsert_magic') }}\nselect 1 as id\n"
    )
    spark.sql(f"create schema if not exists {schema}")
    text = describe_failure(run_dbt(["run"], target, project_dir=root, expect_pass=False))
    assert (
        'unknown incremental_strategy "upsert_magic": no macro named get_incremental_upsert_magic_sql exists'
        in text
    )


@pytest.mark.format_independent
def test_a_custom_strategy_name_resolves_to_its_macro(spark, target, schema, tmp_path):
    root = write_project(
        tmp_path / "custom",
        {
            "numbers.sql": "{{ config(materialized='incremental', incremental_strategy='append_twice') }}\nselect 1 as id\n"
        },
        {
            "get_incremental_append_twice_sql.sql": (
                "{% macro get_incremental_append_twice_sql(arg_dict) %}\n"
                "insert into {{ arg_dict['target_relation'] }}\n"
                "select id from {{ arg_dict['temp_relation'] }}\n"
                "union all select id + 1 from {{ arg_dict['temp_relation'] }}\n"
                "{% endmacro %}\n"
            )
        },
    )
    spark.sql(f"create schema if not exists {schema}")
    run_dbt(["run"], target, project_dir=root)
    run_dbt(["run"], target, project_dir=root)
    assert rows(spark, f"{schema}.numbers", ["id"]) == [(1,), (1,), (2,)]


def test_full_refresh_rebuilds_through_the_same_checks(
    spark, target, schema, table_format, project
):
    root = project(merged=versioned_model())
    spark.sql(f"create schema if not exists {schema}")
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T0), (2, "b", "y", 2, T0)])
    run_dbt(["run"], target, project_dir=root)
    fill_source(spark, schema, table_format, [(3, "c", "old", 3, T0), (3, "c", "new", 4, T1)])
    run_dbt(["run", "--full-refresh"], target, project_dir=root)
    assert rows(spark, f"{schema}.merged", COLUMNS, ["id"]) == [(3, "c", "new", 4, T1)]


def test_a_changed_model_schema_is_refused_on_fail_then_appended_on_request(
    spark, target, schema, table_format, project
):
    """on_schema_change fail (the project's folder default): a new or dropped column never
    half-applies; ignore (dbt's default) keeps the table's columns."""
    spark.sql(f"create schema if not exists {schema}")
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T0), (2, "b", "y", 2, T0)])
    run_dbt(["run"], target, project_dir=project(merged=versioned_model()))
    relation = f"{schema}.merged"
    before = commit_count(spark, relation, table_format)
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T1), (2, "b", "y", 2, T0)])
    with_note = versioned_model(on_schema_change="fail").replace(
        "select * from", "select *, concat(name, '!') as note from"
    )
    dropped = versioned_model(on_schema_change="fail").replace(
        "select * from", "select id, part, name, updated_at from"
    )
    for changed, difference in ((with_note, "note"), (dropped, "amount")):
        result = run_dbt(["run"], target, project_dir=project(merged=changed), expect_pass=False)
        text = describe_failure(result)
        assert "model.scratch.merged" in text
        assert "out of sync" in text and difference in text
        assert "on_schema_change" in text
        assert rows(spark, relation, COLUMNS, ["id"]) == [
            (1, "a", "x", 1, T0),
            (2, "b", "y", 2, T0),
        ]
        assert commit_count(spark, relation, table_format) == before

    ignoring = with_note.replace("on_schema_change='fail'", "on_schema_change='ignore'")
    run_dbt(["run"], target, project_dir=project(merged=ignoring))
    # the new column is not stored; the newer row 1 is merged with the table's columns
    assert rows(spark, relation, COLUMNS, ["id"]) == [
        (1, "a", "x", 1, T1),
        (2, "b", "y", 2, T0),
    ]
    assert "note" not in [c.name for c in spark.table(relation).schema]

    # The column is added, no row changes: the result says what was committed (on Delta the
    # ALTER is version 2, after the first load and the merge of row 1; an Iceberg schema change
    # is new table metadata, not a snapshot).
    appending = versioned_model(on_schema_change="append_new_columns").replace(
        "select * from", "select *, concat(name, '!') as note from"
    )
    commits = commit_count(spark, relation, table_format)
    result = run_dbt(["run"], target, project_dir=project(merged=appending))
    assert result.result.results[0].message == "no rows changed; columns added: note (" + (
        "delta version 2)" if table_format == "delta" else "a new iceberg schema, no snapshot)"
    )
    assert commit_count(spark, relation, table_format) == commits + (table_format == "delta")
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T2), (2, "b", "y", 2, T0)])
    result = run_dbt(["run"], target, project_dir=project(merged=appending))
    assert result.result.results[0].message == "0 inserted, 1 updated, 0 deleted"
    # The column is added; the newer row 1 carries it. Row 2's version did not change, so the
    # guard keeps it as it was (NULL): filling old rows takes a --full-refresh.
    assert rows(spark, relation, [*COLUMNS, "note"], ["id"]) == [
        (1, "a", "x", 1, T2, "x!"),
        (2, "b", "y", 2, T0, None),
    ]

    # A type change: append_new_columns adds columns only, so it refuses rather than ignore
    # it; neither refusal suggests an on_schema_change that would not apply it.
    commits = commit_count(spark, relation, table_format)
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T3), (2, "b", "y", 2, T0)])
    for setting in ("append_new_columns", "fail"):
        retyped = versioned_model(on_schema_change=setting).replace(
            "select * from",
            "select id, part, name, cast(amount as string) as amount, updated_at,"
            " concat(name, '!') as note from",
        )
        result = run_dbt(["run"], target, project_dir=project(merged=retyped), expect_pass=False)
        text = " ".join(describe_failure(result).split())
        assert "model.scratch.merged" in text
        assert "column amount is bigint in the table and string in the model" in text
        assert "Cast the column in the model to the table's type" in text
        assert "append_new_columns to" not in text and "sync_all_columns" not in text
        assert rows(spark, relation, [*COLUMNS, "note"], ["id"]) == [
            (1, "a", "x", 1, T2, "x!"),
            (2, "b", "y", 2, T0, None),
        ]
        assert commit_count(spark, relation, table_format) == commits


def test_a_model_with_only_key_columns_inserts_without_an_update_clause(
    spark, target, schema, table_format, project
):
    """Nothing to update: the MERGE has no update clause, inserts still apply."""
    model = (
        "{{ config(materialized='incremental', incremental_strategy='idempotent_merge',"
        " unique_key=['id', 'part']) }}\n"
        "select id, part from {{ target.schema }}.src\n"
    )
    root = project(keys=model)
    spark.sql(f"create schema if not exists {schema}")
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T0), (2, "b", "y", 2, T0)])
    run_dbt(["run"], target, project_dir=root)
    fill_source(spark, schema, table_format, [(2, "b", "y", 2, T0), (3, "c", "z", 3, T1)])
    run_dbt(["run"], target, project_dir=root)
    relation = f"{schema}.keys"
    assert rows(spark, relation, ["id", "part"]) == [(1, "a"), (2, "b"), (3, "c")]
    commits = commit_count(spark, relation, table_format)
    run_dbt(["run"], target, project_dir=root)
    assert commit_count(spark, relation, table_format) == commits


def test_every_column_excluded_from_updates_still_inserts_and_deletes(
    spark, target, schema, table_format, project
):
    model = versioned_model(
        unique_key="id",
        version_column=None,
        interval_column="updated_at",
        delete_missing_in_interval=True,
        merge_exclude_columns=["part", "name", "amount", "updated_at"],
    ).replace(
        "select * from {{ target.schema }}.src",
        "select * from {{ target.schema }}.src where {{ in_interval('updated_at') }}",
    )
    root = project(merged=model)
    spark.sql(f"create schema if not exists {schema}")
    day = interval_flags("2026-10-02", "2026-10-03")
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T1), (2, "b", "y", 2, T1)])
    run_dbt(["run", *day], target, project_dir=root)
    # 1 changed (nothing may be updated: kept as is), 2 vanished (deleted), 3 new (inserted)
    fill_source(spark, schema, table_format, [(1, "a", "x2", 9, T1), (3, "c", "z", 3, T1)])
    run_dbt(["run", *day], target, project_dir=root)
    assert rows(spark, f"{schema}.merged", COLUMNS, ["id"]) == [
        (1, "a", "x", 1, T1),
        (3, "c", "z", 3, T1),
    ]


BATCH_CONFIG = (
    "materialized='incremental', incremental_strategy='idempotent_merge', unique_key='id', "
    "batch_column='batch', merge_update_columns=['amount', 'label', 'batch'], "
    "merge_update_expressions={'amount': 'target.amount + source.amount'}"
)
BATCH_MODELS = {
    "sql": (
        "moved.sql",
        "{{ config(" + BATCH_CONFIG + ") }}\nselect * from {{ target.schema }}.moves\n",
    ),
    "python": (
        "moved.py",
        "def model(dbt, session):\n"
        "    dbt.config(" + BATCH_CONFIG.replace("'", '"') + ")\n"
        '    return session.table(f"{dbt.this.schema}.moves")\n',
    ),
}
MOVES = "id bigint, batch bigint, amount bigint, label string"


@pytest.mark.parametrize("language", ["sql", "python"])
def test_batch_column_applies_each_batch_of_a_key_once_in_any_grouping(
    spark, target, schema, table_format, tmp_path, language
):
    """Three batches of key 1 in one run are folded in batch order (amount 10 + 5 + 1, the
    newest label); a late batch 1 of key 2 adds 100 once and leaves the newer label."""
    name, code = BATCH_MODELS[language]
    root = write_project(tmp_path / "batches", {name: code})
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(f"drop table if exists {schema}.moves")
    spark.sql(f"create table {schema}.moves ({MOVES}) using {table_format}")
    spark.sql(
        f"insert into {schema}.moves values "
        "(1, 1, 10, 'a1'), (1, 2, 5, 'a2'), (2, 2, 7, 'b2'), (1, 3, 1, 'a3'), (1, 3, 1, 'a3')"
    )
    relation = f"{schema}.moved"
    columns = ["id", "batch", "amount", "label", "applied_batches"]
    first = [(1, 3, 16, "a3", [1, 2, 3]), (2, 2, 7, "b2", [2])]
    run_dbt(["run"], target, project_dir=root)
    assert rows(spark, relation, columns) == first
    commits = commit_count(spark, relation, table_format)
    run_dbt(["run"], target, project_dir=root)
    assert rows(spark, relation, columns) == first
    assert commit_count(spark, relation, table_format) == commits

    spark.sql(f"insert into {schema}.moves values (2, 1, 100, 'b1')")
    for _ in range(2):
        run_dbt(["run"], target, project_dir=root)
        assert rows(spark, relation, columns) == [
            (1, 3, 16, "a3", [1, 2, 3]),
            (2, 2, 107, "b2", [1, 2]),
        ]


@pytest.mark.format_independent
def test_two_different_rows_in_one_batch_of_a_key_are_refused(
    spark, target, schema, table_format, tmp_path
):
    name, code = BATCH_MODELS["sql"]
    root = write_project(tmp_path / "batches", {name: code})
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(f"drop table if exists {schema}.moves")
    spark.sql(f"create table {schema}.moves ({MOVES}) using {table_format}")
    spark.sql(f"insert into {schema}.moves values (1, 1, 10, 'a'), (1, 1, 20, 'a')")
    text = describe_failure(run_dbt(["run"], target, project_dir=root, expect_pass=False))
    assert "several source rows share a key and batch but differ in other columns" in text
    assert "(id=1, batch=1: 2 different rows)" in text
    assert "nothing was written" in text
    assert not spark.catalog.tableExists(f"{schema}.moved")


# "another run" committing to key 1 between this run's change set and its MERGE: the root
# project's macro of the same name wins over the adapter's (dbt's override order)
INTERFERING_RUN = """\
{% macro lakehouse_commit_metadata(cfg, file_format, load) %}
    {%- if load == 'merge' and var('interfere', false) -%}
        {%- do run_query("update " ~ target.schema ~ ".moved set amount = amount + 100, batch = 9,"
            ~ " label = 'other', applied_batches = array(1L, 9L)"
            ~ " where id = 1 and not array_contains(applied_batches, 9L)") -%}
    {%- endif -%}
    {%- do lakehouse_commit_metadata_set(file_format, lakehouse_commit_entry(cfg, load)) -%}
{% endmacro %}
"""


def test_a_batch_another_run_committed_meanwhile_is_applied_by_planning_again(
    spark, target, schema, table_format, tmp_path
):
    """Key 1 changes under the run (another run applies its batch 9) after the change set was
    computed: the MERGE's guard leaves key 1 alone and applies key 2; the check after the
    MERGE finds key 1's batch 2 unapplied, and the run plans again against the table as it now
    is and applies it, once, in a second commit. (It failed the run, for a rerun to apply it.)"""
    name, code = BATCH_MODELS["sql"]
    root = write_project(
        tmp_path / "batches", {name: code}, macros={"interfere.sql": INTERFERING_RUN}
    )
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(f"drop table if exists {schema}.moves")
    spark.sql(f"create table {schema}.moves ({MOVES}) using {table_format}")
    spark.sql(f"insert into {schema}.moves values (1, 1, 10, 'a1'), (2, 1, 7, 'b1')")
    run_dbt(["run"], target, project_dir=root)
    relation = f"{schema}.moved"
    columns = ["id", "batch", "amount", "label", "applied_batches"]

    spark.sql(f"insert into {schema}.moves values (1, 2, 5, 'a2'), (2, 2, 3, 'b2')")
    logged: list[str] = []
    run_dbt(
        ["run"],
        target,
        project_dir=root,
        variables={"interfere": True},
        callbacks=[lambda event: logged.append(event.info.msg)],
    )
    text = " ".join(logged)
    assert (
        f"idempotent_merge {relation}: attempt 1 of 5 met a concurrent commit (1 key(s) changed "
        "by another run under the MERGE); planning again against the table as it is now"
    ) in text
    assert "committed on attempt 2 of 5 after a concurrent commit" in text
    assert rows(spark, relation, columns) == [
        (1, 9, 115, "other", [1, 2, 9]),
        (2, 2, 10, "b2", [1, 2]),
    ]
    # nothing left to apply
    run_dbt(["run"], target, project_dir=root)
    assert rows(spark, relation, columns) == [
        (1, 9, 115, "other", [1, 2, 9]),
        (2, 2, 10, "b2", [1, 2]),
    ]


# an upstream writer adding a row to the model's source after the checks read it and before
# the change set is computed (the root project's macro of the same name wins; it renders
# the adapter's own through the dbt namespace)
LATE_ARRIVAL = """\
{% macro idempotent_merge_changes_sql(cfg, source, target, one_row_per_key=false) %}
    {%- if var('arrive', false) -%}
        {%- do run_query("insert into " ~ this.schema ~ ".src values"
            ~ " (3, 'c', 'z', 30, timestamp'2026-10-02 09:00:00')") -%}
    {%- endif -%}
    {{ return(dbt.idempotent_merge_changes_sql(cfg, source, target, one_row_per_key)) }}
{% endmacro %}
"""


def test_a_row_written_upstream_during_the_run_waits_for_the_next_run(
    spark, target, schema, table_format, tmp_path
):
    """The checks and the change set read the same rows: the model's rows are computed once.
    A second copy of key 3 written to the source between them would otherwise reach the MERGE
    unchecked, as a second insert of key 3 (the checks had found one row per key, so the
    newest-row window was skipped). The next run reads both copies and inserts nothing."""
    root = write_project(
        tmp_path / "late", {"merged.sql": versioned_model()}, macros={"late.sql": LATE_ARRIVAL}
    )
    spark.sql(f"create schema if not exists {schema}")
    fill_source(spark, schema, table_format, [(1, "a", "x", 10, T0), (2, "b", "y", 20, T0)])
    run_dbt(["run"], target, project_dir=root)
    spark.sql(f"insert into {schema}.src values (3, 'c', 'z', 30, timestamp'2026-10-02 09:00:00')")
    expected = [(1, "a", "x", 10, T0), (2, "b", "y", 20, T0), (3, "c", "z", 30, T1)]

    run_dbt(["run"], target, project_dir=root, variables={"arrive": True})
    relation = f"{schema}.merged"
    assert rows(spark, relation, COLUMNS, ["id"]) == expected
    assert spark.table(f"{schema}.src").where("id = 3").count() == 2  # the late copy landed

    before = commit_count(spark, relation, table_format)
    run_dbt(["run"], target, project_dir=root)
    assert rows(spark, relation, COLUMNS, ["id"]) == expected
    assert commit_count(spark, relation, table_format) == before


PIN_THEN_WRITE = """\
{% macro pin_then_write() %}
    {%- set table = target.schema ~ '.pinned_source' -%}
    {%- do adapter.pin_view('pinned_rows', 'select id from ' ~ table) -%}
    {%- do run_query('insert into ' ~ table ~ ' values (3)') -%}
    {%- do run_query('delete from ' ~ table ~ ' where id = 1') -%}
    {%- do run_query('create table ' ~ target.schema ~ '.seen as select * from pinned_rows') -%}
    {%- do run_query('drop view pinned_rows') -%}
{% endmacro %}
"""


def test_the_change_set_view_keeps_the_rows_it_was_computed_with_after_writes_to_its_table(
    spark, target, schema, table_format, tmp_path
):
    """adapter.pin_view, which holds idempotent_merge's change set: writes to the table its
    query reads (the MERGE's own, or another model's) do not recompute it, where a view cached
    with CACHE TABLE is planned and computed again from the new table."""
    root = write_project(tmp_path / "pin", {}, macros={"pin_then_write.sql": PIN_THEN_WRITE})
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(f"create table {schema}.pinned_source (id bigint) using {table_format}")
    spark.sql(f"insert into {schema}.pinned_source values (1), (2)")
    run_dbt(["run-operation", "pin_then_write"], target, project_dir=root)
    assert rows(spark, f"{schema}.seen", ["id"]) == [(1,), (2,)]
    assert rows(spark, f"{schema}.pinned_source", ["id"]) == [(2,), (3,)]


def test_a_first_load_meeting_another_runs_first_load_merges_into_its_table(
    spark, target, schema, table_format, project
):
    """Two first loads of one Delta table at once: the second CREATE finds the first one's data
    files in the table's folder before its first commit (DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION).
    That moment is set up here by hand: a data file in the folder, no log yet. With no other run
    ever committing, the run is refused once its tries are spent; when the other run's table
    appears meanwhile, the run merges into it."""
    if table_format != "delta":
        pytest.skip("Iceberg's CREATE writes into a folder whatever files it holds")
    root = project(merged=versioned_model())
    spark.sql(f"create schema if not exists {schema}")
    fill_source(spark, schema, table_format, [(1, "a", "x", 1, T1), (2, "a", "y", 2, T1)])
    warehouse = spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")
    folder = f"{warehouse}/{schema}.db/merged"
    # the other run's data file, written before its first commit
    spark.createDataFrame([(1, "a", "x", 1, T2)], SOURCE_COLUMNS).write.parquet(f"{folder}/other")
    text = describe_failure(run_dbt(["run"], target, project_dir=root, expect_pass=False))
    assert (
        "Model model.scratch.merged (incremental_strategy='idempotent_merge'): "
        "nothing of this run was committed, because "
        f"- the CREATE of {schema}.merged failed: its folder holds files but no Delta table yet: "
        "another run is creating the table right now (two first loads at once), or an earlier "
        "table left files there. "
        "Run the same interval again once the other run finished: the rerun finds the table and "
        "merges into it. If no other run writes it, remove the leftover files of its folder."
    ) in " ".join(text.split())
    assert not spark.catalog.tableExists(f"{schema}.merged")

    def other_run_commits() -> None:  # its first load, with a newer version of key 1
        time.sleep(1)
        frame = spark.createDataFrame([(1, "a", "x", 1, T2)], SOURCE_COLUMNS)
        frame.write.format("delta").mode("append").save(folder)
        spark.sql(f"create table {schema}.merged using delta location '{folder}'")

    other = threading.Thread(target=other_run_commits)
    other.start()
    try:
        run_dbt(["run"], target, project_dir=root)
    finally:
        other.join()
    # key 2 merged in, key 1 kept as the other run loaded it (its version is newer)
    assert rows(spark, f"{schema}.merged", COLUMNS) == [(1, "a", "x", 1, T2), (2, "a", "y", 2, T1)]
