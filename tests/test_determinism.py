"""The determinism check through dbt, on a real table: a non-deterministic spelling in the
model code or a predicate is refused before anything is written, the words as data are not.

Each refusal runs against a table that already holds rows, so "nothing written" is checked
as the same rows and the same number of commits. The detector itself, spelling by spelling
(CURRENT_DATE, Now /* why */ (), date'today', ...), is tested without Spark in
tests/unit/test_nondeterministic.py; here two spellings show the refusal through dbt. The check
runs before anything is written and cannot depend on the table format: one pass runs it.
"""

from __future__ import annotations

import pytest
from support.tables import commit_count, rows

from retry_safe.project import describe_failure, run_dbt
from retry_safe.scratch import write_project

pytestmark = pytest.mark.format_independent(run_in="local_iceberg")

SOURCE_COLUMNS = "id bigint, name string, uuid string"
COLUMNS = ["id", "name", "k"]
CONFIG = (
    "{{ config(materialized='incremental', incremental_strategy='idempotent_merge', "
    "unique_key='k'%s) }}\n"
)


def sql_model(key_expression: str, extra_config: str = "") -> str:
    return (
        CONFIG % extra_config + "select\n"
        "    id,\n"
        "    name,\n"
        f"    {key_expression} as k\n"
        "from {{ target.schema }}.src\n"
    )


def python_model(key_column: str) -> str:
    return (
        "from pyspark.sql import functions as F\n\n\n"
        "def model(dbt, session):\n"
        '    dbt.config(materialized="incremental", incremental_strategy="idempotent_merge",'
        ' unique_key="k")\n'
        '    source = session.table(f"{dbt.this.schema}.src")\n'
        f'    return source.select("id", "name", {key_column}.alias("k"))\n'
    )


@pytest.fixture
def source(spark, schema, table_format):
    spark.sql(f"create schema if not exists {schema}")
    spark.sql(f"create table {schema}.src ({SOURCE_COLUMNS}) using {table_format}")
    spark.sql(f"insert into {schema}.src values (1, 'a', 'u-1'), (2, 'b', 'u-2')")


@pytest.fixture
def keyed(spark, target, schema, source, tmp_path):
    """The table `keyed` loaded once from a deterministic key: (1, 'a', '1'), (2, 'b', '2')."""

    def project(name: str, code: str):
        root = tmp_path / "project"
        for old in (root / "models").glob("keyed.*"):
            old.unlink()  # the SQL and the Python version of the model never coexist
        return write_project(root, {f"keyed.{name}": code})

    run_dbt(["run"], target, project_dir=project("sql", sql_model("cast(id as string)")))
    relation = f"{schema}.keyed"
    assert rows(spark, relation, COLUMNS, ["id"]) == [(1, "a", "1"), (2, "b", "2")]
    return project, relation


# the first line of every refusal of the model keyed
CONFIGURATION_REFUSED = (
    "Model model.scratch.keyed (incremental_strategy='idempotent_merge'): its configuration"
    " has problems, so nothing was written:"
)


@pytest.fixture
def refused(spark, target, table_format, keyed):
    """Run keyed as the model code given (kind "sql" or "py"): the run fails with every part
    of expected in its error, and the table keeps its rows and its number of commits."""
    project, relation = keyed

    def run(kind: str, code: str, expected: list[str]) -> None:
        root = project(kind, code)
        before = commit_count(spark, relation, table_format)
        text = describe_failure(run_dbt(["run"], target, project_dir=root, expect_pass=False))
        for part in expected:
            assert part in text
        assert rows(spark, relation, COLUMNS, ["id"]) == [(1, "a", "1"), (2, "b", "2")]
        assert commit_count(spark, relation, table_format) == before

    return run


@pytest.mark.parametrize(
    ("key_expression", "what", "shown"),
    [
        # the spelling of the issue: no parentheses, two runs used to leave two rows per id
        (
            "cast(current_timestamp as string)",
            "function current_timestamp()",
            'line 5: "cast(current_timestamp as string) as k"',
        ),
        ("cast(`uuid`() as string)", "function uuid()", "line 5"),
    ],
)
def test_a_key_from_a_non_deterministic_sql_spelling_is_refused(
    refused, key_expression, what, shown
):
    code = sql_model(key_expression)
    uses = f"the model code uses the non-deterministic {what} in"
    refused("sql", code, [CONFIGURATION_REFUSED, uses, shown])


def test_a_predicate_with_a_bare_current_date_is_refused(refused):
    predicate = ", incremental_predicates=['target.id > year(current_date) - 3000']"
    code = sql_model("cast(id as string)", predicate)
    uses = (
        "incremental_predicates uses the non-deterministic "
        'function current_date() in "target.id > year(current_date) - 3000"'
    )
    refused("sql", code, [CONFIGURATION_REFUSED, uses])


def test_a_python_key_from_current_timestamp_is_refused(refused):
    code = python_model('F.expr("cast(current_timestamp as string)")')
    uses = "the model code uses the non-deterministic function current_timestamp() in line 7"
    refused("py", code, [uses, "dbt.interval"])


def test_the_same_words_as_data_comments_and_a_column_name_pass(
    spark, target, schema, table_format, source, tmp_path
):
    code = sql_model("cast(id as string)").replace(
        "    name,\n",
        "    name,\n"
        "    uuid,  -- a column, not uuid(); now() and rand() only in this comment\n"
        "    'current_timestamp() or current_date' as note, /* localtimestamp() */\n",
    )
    root = write_project(tmp_path / "words", {"words.sql": code})
    relation = f"{schema}.words"
    run_dbt(["run"], target, project_dir=root)
    expected = [
        (1, "a", "1", "u-1", "current_timestamp() or current_date"),
        (2, "b", "2", "u-2", "current_timestamp() or current_date"),
    ]
    assert rows(spark, relation, [*COLUMNS, "uuid", "note"], ["id"]) == expected
    commits = commit_count(spark, relation, table_format)
    run_dbt(["run"], target, project_dir=root)  # the retry: same rows, nothing committed
    assert rows(spark, relation, [*COLUMNS, "uuid", "note"], ["id"]) == expected
    assert commit_count(spark, relation, table_format) == commits
