"""A seed's CSV file read strictly (RFC 4180) before anything of the seed is written.

dbt reads a seed with agate, that is Python's csv module in its lenient mode: a quote that is
never closed takes the rest of the file into one field, and the seed loads that garbage row
without a word. The lakehouse adapter's seed macros (lakehouse__create_csv_table,
lakehouse__reset_csv_table: the first step of dbt's seed materialization that writes) read the
file again with csv's strict mode first, and refuse it in one line naming the seed, the line and
the fix.
"""

from __future__ import annotations

import csv
from pathlib import Path

FIX = (
    'Close the quote; a quote inside a quoted field is written twice (""), as CSV requires '
    "(RFC 4180). Nothing of the seed was written."
)


def csv_problem(path: Path, delimiter: str = ",") -> str | None:
    """What makes the file not CSV, naming its line; None when it reads strictly. The file is
    read as dbt reads a seed: UTF-8, a byte-order mark skipped."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter, strict=True)
        record_starts = 1  # the line the record being read started on
        try:
            for _ in reader:
                record_starts = reader.line_num + 1
        except csv.Error as error:
            return explain(str(error), record_starts, delimiter)
    return None


def explain(error: str, line: int, delimiter: str) -> str:
    if error == "unexpected end of data":
        return (
            f"the record on line {line} opens a quoted field that is never closed (the rest of "
            "the file would load as one value)"
        )
    if error.endswith("expected after '\"'"):
        return (
            f"the record on line {line} has a quoted field followed by other characters before "
            f"the next {delimiter!r}"
        )
    return f"the record on line {line} is not CSV ({error})"


def seed_problem(unique_id: str, file_path: str, path: Path, delimiter: str = ",") -> str | None:
    """One line refusing the seed (its id and file as dbt names them), or None."""
    problem = csv_problem(path, delimiter)
    return f"Seed {unique_id} ({file_path}): {problem}. {FIX}" if problem else None
