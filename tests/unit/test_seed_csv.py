"""A seed's CSV read strictly before anything is written (dbt/adapters/lakehouse/seeds.py and the
seed macros, macros/seed/lakehouse_seed.sql): a quote never closed is refused in one line naming
the seed, the line and the fix. No Spark here; the refusal on a real `dbt seed`, no table
created, is in tests/test_seeds.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from dbt_common.exceptions import DbtRuntimeError
from unit.macros.base import Macros

from dbt.adapters.lakehouse.seeds import csv_problem, seed_problem

FIX = (
    'Close the quote; a quote inside a quoted field is written twice (""), as CSV requires '
    "(RFC 4180). Nothing of the seed was written."
)
# valid CSV that a lenient reader and a strict one read alike: doubled quotes, a line break
# in a quoted field, backslashes and apostrophes as plain characters, a byte-order mark
VALID = (
    '\ufeffid,name,note\r\n1,"O\'Brien","say ""hi"""\r\n2,x,"first\nsecond"\r\n'
    '3,"C:\\temp\\",it\'s\r\n'
)


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "seed.csv"
    path.write_text(text, encoding="utf-8", newline="")
    return path


@pytest.mark.parametrize(
    ("text", "delimiter", "problem"),
    [
        (
            'id,name\n1,Ann\n2,"Bob\n3,Cy\n',
            ",",
            "the record on line 3 opens a quoted field that is never closed (the rest of the "
            "file would load as one value)",
        ),
        # the record of line 2 spans two lines, so the broken one starts on line 4
        (
            'id,note\n1,"two\nlines"\n2,"never closed\n',
            ",",
            "the record on line 4 opens a quoted field that is never closed (the rest of the "
            "file would load as one value)",
        ),
        (
            'id;name\n1;"Ann"e\n',
            ";",
            "the record on line 2 has a quoted field followed by other characters before the "
            "next ';'",
        ),
    ],
)
def test_what_is_not_csv_is_named_with_its_line(tmp_path, text, delimiter, problem):
    assert csv_problem(written(tmp_path, text), delimiter) == problem


@pytest.mark.parametrize("delimiter", [",", "|"])
def test_valid_csv_passes(tmp_path, delimiter):
    assert csv_problem(written(tmp_path, VALID.replace(",", delimiter)), delimiter) is None


def test_the_refusal_names_the_seed_its_file_and_the_fix(tmp_path):
    path = written(tmp_path, 'id,name\n1,"Ann\n')
    assert seed_problem("seed.shop.customers", "seeds/customers.csv", path) == (
        "Seed seed.shop.customers (seeds/customers.csv): the record on line 2 opens a quoted "
        f"field that is never closed (the rest of the file would load as one value). {FIX}"
    )


@pytest.mark.parametrize("first_seed", [True, False])
def test_the_seed_macros_refuse_before_creating_or_dropping_the_table(tmp_path, first_seed):
    """The file as dbt read it (agate's original_abspath); the table dbt-spark would create,
    or drop and create again, is never reached."""
    path = written(tmp_path, 'id;name\n1;"Ann\n')
    model = {
        "unique_id": "seed.shop.customers",
        "original_file_path": "seeds/customers.csv",
        "root_path": str(tmp_path),
        "config": {"delimiter": ";"},
    }
    agate_table = SimpleNamespace(original_abspath=str(path))
    macros = Macros({})
    with pytest.raises(DbtRuntimeError) as refused:
        if first_seed:
            macros.lakehouse__create_csv_table(model, agate_table)
        else:
            macros.lakehouse__reset_csv_table(model, False, "shop.customers", agate_table)
    assert refused.value.msg == (
        "Seed seed.shop.customers (seeds/customers.csv): the record on line 2 opens a quoted "
        f"field that is never closed (the rest of the file would load as one value). {FIX}"
    )
