"""Every line of the order change files of the requested interval, parsed or rejected.

Reference document 002. One file a day, <landing_path>/order_changes_<yyyymmdd>.csv, for each
day whose midnight lies in [data_interval_start, data_interval_end). Before anything is
written, each file's header must equal the expected columns exactly (a new, missing or
reordered column would shift values by position) and every day's file must exist. Each data
line is split into its fields and typed with try_cast: a line with too few or too many fields,
or a value that does not parse, is kept with its rejection_reason (Spark's permissive CSV
reader would pad or truncate such lines silently).
"""

from datetime import date, datetime, timedelta
from pathlib import Path

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
TYPES = {
    "order_id": "bigint",
    "customer_id": "string",
    "status": "string",
    "amount": "decimal(10,2)",
    "currency": "string",
    "ordered_at": "timestamp",
    "updated_at": "timestamp",
}


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


def numbered_lines(session, path: Path):
    """(line_number, raw_line) of one file, line 1 being the header; deterministic numbering."""
    lines = session.sparkContext.textFile(path.resolve().as_uri(), minPartitions=1)
    return lines.zipWithIndex().map(lambda pair: (pair[1] + 1, pair[0]))


def check_header(model_name: str, path: Path, header: str) -> None:
    found = [column.strip() for column in header.split(",")]
    if found != EXPECTED_COLUMNS:
        raise ValueError(
            f"{model_name}: {path} has the columns {found}, expected {EXPECTED_COLUMNS}. "
            "Nothing was loaded. Fix the file (or the model, if the new layout is intended)."
        )


def parse(lines):
    """Typed columns plus rejection_reason (NULL for a good line)."""
    fields = F.split(F.col("raw_line"), ",", -1)
    field_count = F.size(fields)
    parsed = lines
    for position, column in enumerate(EXPECTED_COLUMNS):
        raw = F.trim(fields.getItem(position))
        parsed = parsed.withColumn(f"raw_{column}", raw)
        parsed = parsed.withColumn(column, F.expr(f"try_cast(raw_{column} as {TYPES[column]})"))
    problems = [
        F.when(
            field_count != len(EXPECTED_COLUMNS),
            F.format_string(f"expected {len(EXPECTED_COLUMNS)} fields, found %d", field_count),
        )
    ]
    for column in EXPECTED_COLUMNS:
        problems.append(
            F.when(
                F.col(f"raw_{column}").isNotNull()
                & (F.col(f"raw_{column}") != "")
                & F.col(column).isNull(),
                F.format_string(f"{column} '%s' is not a {TYPES[column]}", F.col(f"raw_{column}")),
            )
        )
        problems.append(
            F.when(
                F.coalesce(F.col(f"raw_{column}"), F.lit("")) == "",
                F.lit(f"{column} is empty"),
            )
        )
    return parsed.withColumn("rejection_reason", F.coalesce(*problems))


def model(dbt, session):
    dbt.config(materialized="table")
    landing = Path(dbt.config.get("landing_path"))
    model_name = str(dbt.this)
    files = change_files(
        model_name, landing, days_in_interval(dbt.interval.start, dbt.interval.end)
    )
    frames = []
    for day, path in files:
        lines = numbered_lines(session, path)
        header = lines.filter(lambda pair: pair[0] == 1).map(lambda pair: pair[1]).collect()
        check_header(model_name, path, header[0] if header else "")
        data = lines.filter(lambda pair: pair[0] > 1 and pair[1].strip() != "")
        frame = session.createDataFrame(data, "line_number int, raw_line string")
        frames.append(
            frame.withColumn("source_file", F.lit(path.name)).withColumn("file_date", F.lit(day))
        )
    lines = frames[0]
    for frame in frames[1:]:
        lines = lines.unionByName(frame)
    return parse(lines).select(
        "source_file", "file_date", "line_number", "raw_line", *EXPECTED_COLUMNS, "rejection_reason"
    )
