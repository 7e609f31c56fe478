"""The determinism check's detector on its own (no Spark): every spelling Spark accepts is
found, with or without parentheses and in any case, and the same words as data, comments,
quoted names or plain columns are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.lakehouse.strategy.determinism import find_nondeterministic

PROJECT = Path(__file__).resolve().parents[2]

# Written out by hand, from what Spark 4.1 does (not from determinism.py's sets), a group a
# line: the functions every call of which is refused
CALLED = [
    # marked non-deterministic by Spark 4.1 itself
    *["rand", "randn", "random", "randstr", "uniform", "uuid", "shuffle"],
    *["monotonically_increasing_id", "spark_partition_id", "input_file_name"],
    *["input_file_block_start", "input_file_block_length", "reflect", "java_method"],
    "try_reflect",
    # the clock
    *["current_timestamp", "current_date", "current_time", "now", "curdate", "localtimestamp"],
    "unix_timestamp",  # without an argument
    # who runs dbt
    *["current_user", "session_user", "user"],
]
# and the words Spark calls without parentheses too
BARE = ["current_timestamp", "current_date", "current_time", "localtimestamp"]
BARE += ["current_user", "session_user"]


def found(code: str, language: str = "sql") -> str | None:
    result = find_nondeterministic(code, language)
    return result.what if result else None


@pytest.mark.parametrize("name", CALLED)
@pytest.mark.parametrize(
    "spelling",
    ["{name}()", "{upper}()", "{title}  ()", "{name} /* why */ ()", "{name}\n()", "`{name}`()"],
)
def test_every_call_is_found_in_any_case_and_spacing(name, spelling):
    call = spelling.format(name=name, upper=name.upper(), title=name.title())
    code = f"select id, cast({call} as string) as k from src"
    assert found(code) == f"function {name}()"


@pytest.mark.parametrize("name", BARE)
@pytest.mark.parametrize("case", [str.lower, str.upper, str.title])
def test_the_words_spark_calls_without_parentheses_are_found(name, case):
    code = f"select id, cast({case(name)} as string) as k from src"
    assert found(code) == f"function {name}()"


@pytest.mark.parametrize("name", sorted(set(CALLED) | set(BARE)))
@pytest.mark.parametrize(
    "code",
    [
        "select '{name}()' as s, 'x {name} y' as t from src",
        'select "{name}()" as s from src',
        "select 'it''s {name}()' as s from src",
        "select 'it\\'s {name}()' as s from src",
        "select r'C:\\' as p, '{name}()' as s from src",
        "select id -- {name}()\nfrom src",
        "select id /* {name}() /* nested {name} */ {name}() */ from src",
        "select `{name}` from src",
        "select t.{name} from src as t",
        "select id as {name} from src",
        "select my_{name}(id), {name}_at, {name}2 from src",
    ],
)
def test_the_same_words_as_data_comments_or_names_are_not_refused(name, code):
    assert found(code.format(name=name)) is None


@pytest.mark.parametrize("name", ["uuid", "rand", "random", "now", "user", "curdate", "shuffle"])
def test_a_column_named_like_a_function_is_not_refused(name):
    assert found(f"select {name}, {name.upper()} from src where {name} is not null") is None
    assert found(name) is None  # unique_key=['uuid']


def test_unix_timestamp_of_a_column_is_deterministic():
    assert found("select unix_timestamp(updated_at) from src") is None
    assert found("select unix_timestamp( ) from src") == "function unix_timestamp()"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("select date'today'", "value 'today'"),
        ("select timestamp 'NOW'", "value 'NOW'"),
        ("select cast('yesterday' as date)", "value 'yesterday'"),
        ("select * from src where d < ' tomorrow UTC'", "value 'tomorrow UTC'"),
        ("select * from src tablesample (10 percent)", "clause TABLESAMPLE"),
    ],
)
def test_moving_date_strings_and_sampling_are_found(code, expected):
    assert found(code) == expected


def test_a_key_and_a_predicate_as_config_strings():
    assert found("uuid()") == "function uuid()"
    assert found("target.updated_at > current_timestamp() - interval 1 day") == (
        "function current_timestamp()"
    )
    assert found("target.event_date >= date'2025-01-01'") is None
    assert found("target.balance + source.balance") is None


def test_the_line_is_reported():
    code = "select\n    id,\n    cast(current_timestamp as string) as k\nfrom src\n"
    result = find_nondeterministic(code)
    assert (result.line, result.text) == (3, "cast(current_timestamp as string) as k")


PYTHON_MODEL = '''"""Docstring: rand(), uuid(), current_timestamp, datetime.now()."""

import datetime
from pyspark.sql import functions as F


def model(dbt, session):
    """current_date and F.rand() in a docstring."""
    dbt.config(materialized="incremental")  # F.uuid(), current_timestamp in a comment
    frame = dbt.ref("src").select("id", "uuid", F.col("current_date"), F.col("rand"))
    note = "the user (root) runs it now (later)"
    return frame.withColumn("k", F.expr("sha2(cast(id as string), 256)"))
'''


def test_python_docstrings_comments_names_and_prose_are_not_refused():
    assert found(PYTHON_MODEL, "python") is None


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("F.rand()", "function F.rand()"),
        ("F.uuid()", "function F.uuid()"),
        ("F.current_timestamp()", "function F.current_timestamp()"),
        ("F.current_date()", "function F.current_date()"),
        ("F.monotonically_increasing_id()", "function F.monotonically_increasing_id()"),
        ("F.unix_timestamp()", "function F.unix_timestamp()"),
        ("datetime.datetime.now()", "function datetime.datetime.now()"),
        ("datetime.date.today()", "function datetime.date.today()"),
        ("time.time()", "function time.time()"),
        ("uuid.uuid4()", "function uuid.uuid4()"),
        ("random.random()", "function random.random()"),
        ("random.choice([1, 2])", "function random.choice()"),
        ("np.random.normal(0, 1)", "function np.random.normal()"),
        ("frame.sample(0.1)", "function frame.sample()"),
        ('F.expr("current_timestamp")', "function current_timestamp()"),
        ('F.expr("cast(uuid() as string)")', "function uuid()"),
        ('session.sql("select id, current_date as d from src")', "function current_date()"),
        ('F.lit("today").cast("date")', "value 'today'"),
    ],
)
def test_python_spellings_are_found(statement, expected):
    code = PYTHON_MODEL.replace('F.expr("sha2(cast(id as string), 256)")', statement)
    assert found(code, "python") == expected


def test_python_deterministic_calls_pass():
    code = PYTHON_MODEL.replace(
        'F.expr("sha2(cast(id as string), 256)")',
        'F.unix_timestamp(F.col("updated_at")) + F.lit(datetime.time(10, 0).hour)',
    )
    assert found(code, "python") is None


def test_python_line_is_reported():
    code = "import datetime\n\nx = 1\nstamp = datetime.datetime.now()\n"
    result = find_nondeterministic(code, "python")
    assert (result.line, result.text) == (4, "stamp = datetime.datetime.now()")


@pytest.mark.parametrize("path", sorted(PROJECT.glob("models/*/*.py")), ids=lambda p: p.name)
def test_the_projects_python_models_pass(path):
    assert found(path.read_text(), "python") is None
