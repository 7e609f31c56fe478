"""Seeds load every value exactly: the session method binds them as Spark SQL literals.

dbt-spark's session cursor pasted seed values into the INSERT as '<value>': an empty cell
became the string 'None', an apostrophe broke the statement, a backslash sequence such as
\\t turned into a tab and a large integer went through a float. The seed below holds each of
those; the rows read back with Spark are written out here by hand. A seed beside it whose quote
is never closed is refused in one line, and no table of it is created (dbt's lenient reader
loaded it as one garbage row).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from support.tables import commit_count, rows

from retry_safe.project import run_dbt
from retry_safe.scratch import write_project
from retry_safe.tables import commits

# Row 2 is empty but for its id (NULL in every type). Row 3's note is one CSV field:
# backslashes are plain characters in CSV. Row 5's note holds a line break.
CSV = r"""id,name,note,amount,ratio,qty,day,at,at_zoned,flag
1,O'Brien,"say ""hi"" to O'Neil",12.50,2.5,7,2026-10-03,2026-10-03 09:15:30,2026-10-03T02:00:00+02:00,true
2,,,,,,,,,
3,None,"C:\temp\new, it\'s \u0041, trailing \",-3.10,-0.75,-3,2026-01-31,2026-01-31 23:59:59,2026-01-31T23:59:59Z,false
4,Müller,"50% off, %s and %% and %(x)s",0.00,0,0,1999-12-31,1999-12-31 00:00:00,2026-10-03T00:00:00-05:30,true
5,東京 🎉,"first line
second line",1234567.89,100.125,9007199254740993,2026-02-28,,,
6,',"  padded  ",-0.01,-1.5,-9007199254740993,2026-12-31,2026-12-31 23:59:59,2026-12-31T23:59:59.123456Z,false
"""
# The quote opened on line 3 is never closed: a lenient reader makes "Bob\n3,Cy\n" one name.
BROKEN = 'id,name\n1,Ann\n2,"Bob\n3,Cy\n'
# amount keeps its exact decimals (dbt-spark would infer double); the CSV text is cast.
SEEDS_YML = """\
seeds:
  - name: awkward
    config:
      column_types:
        amount: decimal(10,2)
"""
TYPES = [
    ("id", "bigint"),
    ("name", "string"),
    ("note", "string"),
    ("amount", "decimal(10,2)"),
    ("ratio", "double"),
    ("qty", "bigint"),
    ("day", "date"),
    ("at", "timestamp"),
    ("at_zoned", "timestamp"),
    ("flag", "boolean"),
]
# at_zoned is read as text in the session time zone (UTC): the offsets are converted.
COLUMNS = [name for name, _ in TYPES[:-2]] + ["cast(at_zoned as string)", "flag"]
EXPECTED = [
    (
        1,
        "O'Brien",
        'say "hi" to O\'Neil',
        Decimal("12.50"),
        2.5,
        7,
        dt.date(2026, 10, 3),
        dt.datetime(2026, 10, 3, 9, 15, 30),
        "2026-10-03 00:00:00",
        True,
    ),
    (2, None, None, None, None, None, None, None, None, None),
    (
        3,
        "None",
        "C:\\temp\\new, it\\'s \\u0041, trailing \\",
        Decimal("-3.10"),
        -0.75,
        -3,
        dt.date(2026, 1, 31),
        dt.datetime(2026, 1, 31, 23, 59, 59),
        "2026-01-31 23:59:59",
        False,
    ),
    (
        4,
        "Müller",
        "50% off, %s and %% and %(x)s",
        Decimal("0.00"),
        0.0,
        0,
        dt.date(1999, 12, 31),
        dt.datetime(1999, 12, 31, 0, 0, 0),
        "2026-10-03 05:30:00",
        True,
    ),
    (
        5,
        "東京 🎉",
        "first line\nsecond line",
        Decimal("1234567.89"),
        100.125,
        9007199254740993,
        dt.date(2026, 2, 28),
        None,
        None,
        None,
    ),
    (
        6,
        "'",
        "  padded  ",
        Decimal("-0.01"),
        -1.5,
        -9007199254740993,
        dt.date(2026, 12, 31),
        dt.datetime(2026, 12, 31, 23, 59, 59),
        "2026-12-31 23:59:59.123456",
        False,
    ),
]


# how a seed's values reach its table, and the refusal, are the adapter's, not the format's
@pytest.mark.format_independent
def test_every_seed_value_round_trips(spark, target, schema, tmp_path):
    seeds = {"awkward.csv": CSV, "broken.csv": BROKEN, "_seeds.yml": SEEDS_YML}
    root = write_project(tmp_path / "project", {}, seeds=seeds)
    relation = f"{schema}.awkward"
    done = run_dbt(["seed"], target, project_dir=root, expect_pass=False)
    outcome = {r.node.name: (str(r.status), r.message) for r in done.result.results}
    assert outcome["awkward"] == ("success", "INSERT 6")
    assert outcome["broken"] == (
        "error",
        "Runtime Error in seed broken (seeds/broken.csv)\n  Seed seed.scratch.broken "
        "(seeds/broken.csv): the record on line 3 opens a quoted field that is never closed "
        "(the rest of the file would load as one value). Close the quote; a quote inside a "
        'quoted field is written twice (""), as CSV requires (RFC 4180). Nothing of the seed '
        "was written.",
    )
    assert "broken" not in [t.tableName for t in spark.sql(f"show tables in {schema}").collect()]
    assert spark.table(relation).dtypes == TYPES
    assert rows(spark, relation, COLUMNS, ["id"]) == EXPECTED

    # a second seed replaces the table: the same rows, not twice as many
    run_dbt(["seed", "--select", "awkward"], target, project_dir=root)
    assert rows(spark, relation, COLUMNS, ["id"]) == EXPECTED
    run_dbt(["seed", "--select", "awkward", "--full-refresh"], target, project_dir=root)
    assert spark.table(relation).dtypes == TYPES
    assert rows(spark, relation, COLUMNS, ["id"]) == EXPECTED


def test_a_seed_reloads_in_one_commit_on_its_own_table(
    spark, target, schema, tmp_path, table_format
):
    # dbt-spark created the table, then inserted the rows in batches, and on a reload dropped it
    # first: a reader met no table, an empty one or part of the rows, and two loads at once
    # could both insert into one table
    root = write_project(tmp_path / "project", {}, seeds={"prices.csv": "sku,price\na,1\nb,2\n"})
    relation = f"{schema}.prices"
    run_dbt(["seed"], target, project_dir=root)
    assert rows(spark, relation, ["sku", "price"]) == [("a", 1), ("b", 2)]
    (root / "seeds" / "prices.csv").write_text("sku,price\na,5\nc,3\n")
    done = run_dbt(["seed"], target, project_dir=root)
    assert [r.message for r in done.result.results] == ["INSERT 2"]
    assert rows(spark, relation, ["sku", "price"]) == [("a", 5), ("c", 3)]
    # created with its rows, then its rows replaced: one commit each
    if table_format == "iceberg":
        assert operations(spark, relation, table_format) == ["append", "overwrite"]
    else:
        assert operations(spark, relation, table_format) == ["CREATE TABLE AS SELECT", "WRITE"]

    # a file left with its header only (its types unknown, its names the table's): no row, in
    # one commit more
    (root / "seeds" / "prices.csv").write_text("sku,price\n")
    run_dbt(["seed"], target, project_dir=root)
    assert rows(spark, relation, ["sku", "price"]) == []
    assert commit_count(spark, relation, table_format) == 3

    # a column more: the table is created again with the file's columns
    (root / "seeds" / "prices.csv").write_text("sku,price,currency\nd,4,EUR\n")
    run_dbt(["seed"], target, project_dir=root)
    assert spark.table(relation).dtypes == [
        ("sku", "string"),
        ("price", "bigint"),
        ("currency", "string"),
    ]
    assert rows(spark, relation, ["sku", "price", "currency"]) == [("d", 4, "EUR")]


def operations(spark, relation: str, table_format: str) -> list[str]:
    return [commit["operation"] for commit in commits(spark, relation, table_format)]


def test_a_seed_whose_table_another_load_created_meanwhile_replaces_its_rows(
    spark, target, schema, tmp_path, table_format
):
    # the table appears after dbt looked (its on-run-start hook runs after dbt lists the
    # schema): as when another load of the seed creates it first, the seed's CREATE meets it and
    # the file's rows replace the table's
    created = (
        f"create table {schema}.late (sku string, price bigint) using {table_format}",
        f"insert into {schema}.late values ('stale', 9)",
    )
    hooks = "".join(f'\n  - "{sql}"' for sql in created)
    root = write_project(
        tmp_path / "project",
        {},
        seeds={"late.csv": "sku,price\nx,7\n"},
        project=f"\non-run-start:{hooks}\n",
    )
    spark.sql(f"create schema {schema}")
    done = run_dbt(["seed"], target, project_dir=root)
    assert [r.message for r in done.result.results][-1] == "INSERT 1"
    assert rows(spark, f"{schema}.late", ["sku", "price"]) == [("x", 7)]
