"""Every record of the order change files of the requested interval, parsed or rejected.

Reference document 002. One file a day, <landing_path>/order_changes_<yyyymmdd>.csv, for each
day whose midnight lies in [data_interval_start, data_interval_end). Before anything is
written, each file's header must equal the expected columns exactly (a new, missing or
reordered column would shift values by position) and every day's file must exist. The rows
are merged by idempotent_merge into a table holding every loaded day's lines, one per
(source_file, line_number), reconciled by file_date: a rerun of a day replaces that day's
lines, and orders and rejected_orders read only their own run's interval of it.

The files are read through the source landing.order_change_files (Spark's binaryFile reader
over the same folder, declared in _order_changes__sources.yml), so the lineage starts there.
Each file is parsed as RFC 4180 CSV (quoted fields may hold commas, doubled quotes and line
breaks, so a record can span lines) by one task that reads the file's bytes: a file cannot be
split at line breaks. The driver reads only each header, with the same parser. A record keeps
its first line number (the header is line 1) and its raw text. A UTF-8 byte-order mark at the
start of a file (what spreadsheet tools write for "CSV UTF-8") is not data and is skipped. A
record is kept with its rejection_reason instead of loading when it is not valid UTF-8, is not
valid CSV, has too few or too many fields, or holds a value that would load as a
different value: text that is not of the column's type, an amount that does not fit
decimal(10,2) exactly (never rounded), a status outside the var orders_accepted_statuses, or an
updated_at later than the end of the file's day plus the var orders_updated_at_tolerance_minutes
(such a version would make every real later change of the order look stale).
"""

import csv
import io
import re
from collections.abc import Iterable, Iterator
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F

EXPECTED_COLUMNS = [
    "order_id",
    "customer_id",
    "status",
    "amount",
    "currency",
    "ordered_at",
    "updated_at",
]
AMOUNT_PRECISION, AMOUNT_SCALE = 10, 2
TYPES = {
    "order_id": "bigint",
    "customer_id": "string",
    "status": "string",
    "amount": f"decimal({AMOUNT_PRECISION},{AMOUNT_SCALE})",
    "currency": "string",
    "ordered_at": "timestamp",
    "updated_at": "timestamp",
}
# RFC 4180: a field is quoted (a quote inside doubled) or holds no quote at all.
FIELD = r'(?:"(?:[^"]|"")*+"|[^",\r\n]*+)'
RECORD = re.compile(rf"{FIELD}(?:,{FIELD})*+")
NOT_UTF8 = re.compile("[\udc80-\udcff]")  # what errors='surrogateescape' makes of a bad byte
NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# One parsed record of a file, as records() yields it.
RECORD_TYPE = (
    "struct<line_number: int, raw_line: string, fields: array<string>, parse_problem: string>"
)


def days_in_interval(start: datetime, end: datetime) -> list[date]:
    """The days whose midnight (UTC) lies in [start, end)."""
    day = start.date() if start.time() == datetime.min.time() else start.date() + timedelta(days=1)
    days = []
    while datetime.combine(day, datetime.min.time(), tzinfo=start.tzinfo) < end:
        days.append(day)
        day += timedelta(days=1)
    return days


def change_files(model_name: str, landing: Path, days: list[date]) -> list[tuple[date, Path]]:
    files = [(day, landing / f"order_changes_{day:%Y%m%d}.csv") for day in days]
    missing = [str(path) for _, path in files if not path.is_file()]
    if not landing.is_dir():
        raise FileNotFoundError(
            f"{model_name}: the landing folder {landing} does not exist. "
            "Set the var orders_landing_path to the folder holding order_changes_<yyyymmdd>.csv files."
        )
    if missing:
        raise FileNotFoundError(
            f"{model_name}: no change file for {', '.join(missing)}. Nothing was loaded. "
            "Drop the day's file into the landing folder, or run an interval that has its files."
        )
    return files


def accepted_statuses(model_name: str, value: object) -> list[str]:
    if isinstance(value, list) and value and all(isinstance(s, str) and s for s in value):
        return value
    raise ValueError(
        f"{model_name}: the var orders_accepted_statuses is {value!r}. Nothing was loaded. "
        "Set it to a non-empty list of statuses, e.g. [placed, shipped, cancelled]."
    )


def tolerance_minutes(model_name: str, value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ValueError(
        f"{model_name}: the var orders_updated_at_tolerance_minutes is {value!r}. "
        "Nothing was loaded. Set it to a whole number of minutes, 0 or more, e.g. 60."
    )


def storable(text: str) -> str:
    """The text with each byte that was not UTF-8 written as \\xNN, so Spark can store it."""
    if not NOT_UTF8.search(text):
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def without_line_break(text: str) -> str:
    for end in ("\r\n", "\n", "\r"):
        if text.endswith(end):
            return text[: -len(end)]
    return text


def not_csv(first_line: int, lines_read: int, error: str) -> str:
    """The reason for a record Python's csv reader refused (strict quoting)."""
    if error == "unexpected end of data":
        return f"line {first_line} is not valid CSV (a quoted field is never closed)"
    return f"line {first_line + lines_read - 1} is not valid CSV ({error})"


def not_utf8(first_line: int, lines: list[str]) -> str | None:
    """The reason for a record holding a byte that is not UTF-8: its line and the byte."""
    for offset, line in enumerate(lines):
        bad = NOT_UTF8.search(line)
        if bad:
            byte = ord(bad.group()) - 0xDC00
            return f"line {first_line + offset} is not valid UTF-8 (byte 0x{byte:02x})"
    return None


def records(lines: Iterable[str]) -> Iterator[tuple[int, str, list[str] | None, str | None]]:
    """(first line number, raw text, fields, problem) of each CSV record, the header first.

    lines: the file's physical lines with their line breaks, decoded with
    errors='surrogateescape'. fields is None when the record is not valid CSV; problem says why
    the record cannot be read as text fields, and is None otherwise.
    """
    taken: list[str] = []

    def feed() -> Iterator[str]:
        for line in lines:
            taken.append(line)
            yield line

    reader = csv.reader(feed(), strict=True)
    line_number = 1
    while True:
        fields: list[str] | None = None
        problem: str | None = None
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            problem = not_csv(line_number, len(taken), str(error))
        raw = without_line_break("".join(taken))
        problem = not_utf8(line_number, taken) or problem
        if problem is None and '"' in raw and not RECORD.fullmatch(raw):
            problem = f"line {line_number} is not valid CSV (a quote inside an unquoted field)"
        if problem is not None and fields is not None:
            fields = [storable(field) for field in fields]
        yield line_number, storable(raw), fields, problem
        line_number += len(taken)
        taken.clear()


def read_header(path: Path) -> list[str]:
    """The header's column names: the file's first record, read on the driver."""
    with path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as lines:
        first = next(records(lines), None)
    if first is None:
        return []
    _, raw, fields, _ = first
    return [field.strip() for field in fields] if fields is not None else [raw]


def check_header(model_name: str, path: Path, found: list[str]) -> None:
    if found != EXPECTED_COLUMNS:
        raise ValueError(
            f"{model_name}: {path} has the columns {found}, expected {EXPECTED_COLUMNS}. "
            "Nothing was loaded. Fix the file (or the model, if the new layout is intended)."
        )


def data_records(content: bytes) -> list[tuple[int, str, list[str] | None, str | None]]:
    """The records of a file's bytes but the header and blank lines, in file order."""
    lines = io.TextIOWrapper(
        io.BytesIO(content), encoding="utf-8-sig", errors="surrogateescape", newline=""
    )
    return [record for record in records(lines) if record[0] > 1 and record[1].strip()]


def file_records(landed: Any, path: Path) -> Any:
    """The file's data records, (line_number, raw_line, fields, parse_problem), in one task.

    landed: the source's rows, one per landed file (path, content, ...). A Python UDF parses
    the file's content into an array of records, which inline turns into rows: DataFrame
    calls only (no RDD), so the same code runs on a classic and a Spark Connect session.
    """
    parse_file = F.udf(data_records, f"array<{RECORD_TYPE}>", useArrow=False)
    the_file = landed.where(F.col("path").endswith(f"/{path.name}"))
    return the_file.select(F.inline(parse_file(F.col("content"))))


def fits_amount(text: str | None) -> bool | None:
    """Whether text is a number decimal(10,2) holds exactly; None when it is not a number."""
    if text is None or not NUMBER.fullmatch(text):
        return None
    _, digits, exponent = Decimal(text).as_tuple()
    written = "".join(map(str, digits))
    significant = written.rstrip("0")
    if not significant:
        return True  # zero
    exponent += len(written) - len(significant)
    whole_digits = len(significant) + exponent
    return -exponent <= AMOUNT_SCALE and whole_digits <= AMOUNT_PRECISION - AMOUNT_SCALE


def unreadable(column: str) -> list[Any]:
    """Why the column's text cannot be read as its type, in order; each NULL when it can."""
    raw, typed = F.col(f"raw_{column}"), F.col(column)
    problems = [F.when(F.coalesce(raw, F.lit("")) == "", F.lit(f"{column} is empty"))]
    if column == "amount":
        problems.append(
            F.when(
                ~F.col("amount_fits"),
                F.format_string(f"amount '%s' does not fit {TYPES[column]} exactly", raw),
            )
        )
    problems.append(
        F.when(typed.isNull(), F.format_string(f"{column} '%s' is not a {TYPES[column]}", raw))
    )
    return problems


def unacceptable(statuses: list[str], tolerance: int) -> list[Any]:
    """Why a readable line is still rejected: its status, or an updated_at beyond its day."""
    limit = F.expr(f"timestampadd(minute, {tolerance}, cast(date_add(file_date, 1) as timestamp))")
    return [
        F.when(
            ~F.col("status").isin(statuses),
            F.concat(
                F.lit("status '"),
                F.col("raw_status"),
                F.lit(f"' is not one of {', '.join(statuses)} (var orders_accepted_statuses)"),
            ),
        ),
        F.when(
            F.col("updated_at") > limit,
            F.concat(
                F.lit("updated_at '"),
                F.col("raw_updated_at"),
                F.lit("' is later than "),
                F.date_format(limit, "yyyy-MM-dd'T'HH:mm:ss"),
                F.lit(
                    f", the end of the file's day plus {tolerance} minutes "
                    "(var orders_updated_at_tolerance_minutes)"
                ),
            ),
        ),
    ]


def parse(lines: Any, statuses: list[str], tolerance: int) -> Any:
    """Typed columns plus rejection_reason (NULL for a good line): the first problem found.

    In order: the record (UTF-8, CSV), its field count, each column's text by column order,
    then the status and the updated_at limit.
    """
    fields = F.col("fields")
    parsed = lines
    for position, column in enumerate(EXPECTED_COLUMNS):
        parsed = parsed.withColumn(f"raw_{column}", F.trim(F.get(fields, position)))
        parsed = parsed.withColumn(column, F.expr(f"try_cast(raw_{column} as {TYPES[column]})"))
    # try_cast rounds an amount to 2 decimals: only an amount that fits exactly is kept.
    fits = F.udf(fits_amount, "boolean", useArrow=False)
    parsed = parsed.withColumn("amount_fits", fits(F.col("raw_amount")))
    parsed = parsed.withColumn("amount", F.when(F.col("amount_fits"), F.col("amount")))
    field_count = F.size(fields)
    problems = [
        F.col("parse_problem"),
        F.when(
            field_count != len(EXPECTED_COLUMNS),
            F.format_string(f"expected {len(EXPECTED_COLUMNS)} fields, found %d", field_count),
        ),
    ]
    for column in EXPECTED_COLUMNS:
        problems.extend(unreadable(column))
    problems.extend(unacceptable(statuses, tolerance))
    return parsed.withColumn("rejection_reason", F.coalesce(*problems))


def model(dbt, session):
    # dbt-core makes a Python model a table unless it says otherwise (dbt_project.yml's
    # +materialized does not reach it), and a table rebuilt per run would hold one interval's
    # lines: a concurrent run of another interval would replace them under this run's children.
    # The strategy and merge configs: the folder default and the yml beside this file.
    dbt.config(materialized="incremental", submission_method="session")
    model_name = str(dbt.this)
    landing = Path(dbt.config.get("landing_path"))
    statuses = accepted_statuses(model_name, dbt.config.get("accepted_statuses"))
    tolerance = tolerance_minutes(model_name, dbt.config.get("updated_at_tolerance_minutes"))
    files = change_files(
        model_name, landing, days_in_interval(dbt.interval.start, dbt.interval.end)
    )
    landed = dbt.source("landing", "order_change_files")  # listed once every file is known to exist
    frames = []
    for day, path in files:
        check_header(model_name, path, read_header(path))
        frame = file_records(landed, path)
        frames.append(
            frame.withColumn("source_file", F.lit(path.name)).withColumn("file_date", F.lit(day))
        )
    lines = frames[0]
    for frame in frames[1:]:
        lines = lines.unionByName(frame)
    return parse(lines, statuses, tolerance).select(
        "source_file", "file_date", "line_number", "raw_line", *EXPECTED_COLUMNS, "rejection_reason"
    )
