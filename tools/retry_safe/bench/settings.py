"""What one benchmark run measures: table size, contenders, cases, repetitions."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from typing import Any

from retry_safe.project import CLUSTER_TARGETS, EMBEDDED_TARGETS

FORMATS = EMBEDDED_TARGETS  # table format -> the embedded dbt target
CONTENDERS = ["idempotent_merge", "stock_merge", "reference_merge", "pyspark_job", "audited"]
LABELS = {
    "idempotent_merge": "(1) idempotent_merge (dbt)",
    "stock_merge": "(2) dbt-spark merge (dbt)",
    "reference_merge": "(3) reference 000 MERGE (SQL)",
    "pyspark_job": "(4) minimal PySpark job",
    "audited": "(5) idempotent_merge, audited (dbt build)",
}
SCHEMA = "bench"
# the parts of a warm dbt run's wall time (retry_safe.bench.warm): dbt's own work, the checks,
# the change set, the MERGE, the other statements
SPLIT = ("dbt_s", "checks_s", "change_set_s", "merge_s", "other_sql_s")
FIRST_DAY = date(2026, 1, 1)


@dataclass(frozen=True)
class Case:
    """One re-merge of the chosen day: which source rows change, which keys go missing."""

    name: str
    title: str
    changed: str | None  # SQL predicate on id: rows whose amount changes
    missing: str | None  # SQL predicate on id: keys left out of the source

    def counts(self, rows_per_day: int) -> dict[str, int]:
        """Rows the case really changes and deletes (ids are consecutive within a day)."""
        share = {None: 0, "id % 100 = 7": 100, "id % 10 = 3": 10, "id % 100 = 42": 100, "true": 1}
        changed = rows_per_day // share[self.changed] if self.changed else 0
        missing = rows_per_day // share[self.missing] if self.missing else 0
        return {"changed": changed, "deleted": missing}


CASES = {
    "a": Case("a", "identical source (a retry)", None, None),
    "b": Case("b", "1% of rows changed, 1% of keys missing", "id % 100 = 7", "id % 100 = 42"),
    "c": Case("c", "10% of rows changed", "id % 10 = 3", None),
    # where a change set cannot save anything: `--cases d`, not in make bench's default run
    "d": Case("d", "every row changed (the day delivered again, corrected)", "true", None),
}
DEFAULT_CASES = ["a", "b", "c"]


@dataclass
class Settings:
    table_format: str = "delta"
    days: int = 30
    rows_per_day: int = 100_000
    files_per_day: int = 4
    reps: int = 3
    day_index: int = 14
    contenders: list[str] = field(default_factory=lambda: list(CONTENDERS))
    cases: list[str] = field(default_factory=lambda: list(DEFAULT_CASES))
    mor: bool = True
    cli: bool = True
    label: str = "default"
    cluster: bool = False  # the format's cluster target (SPARK_MASTER_URL) instead of local
    # where the warehouse is: "local" disk, or "s3", the bucket LAKEHOUSE_WAREHOUSE names (with
    # the PostgreSQL metastore object storage needs: `python -m retry_safe.bench storage`)
    warehouse: str = "local"

    @property
    def target(self) -> str:
        return (CLUSTER_TARGETS if self.cluster else FORMATS)[self.table_format]

    @property
    def day(self) -> date:
        return FIRST_DAY + timedelta(days=self.day_index)

    @property
    def total_rows(self) -> int:
        return self.days * self.rows_per_day

    def check(self) -> None:
        if self.rows_per_day % 100 or self.rows_per_day % self.files_per_day:
            raise SystemExit("--rows-per-day must be a multiple of 100 and of --files-per-day")
        if not 0 <= self.day_index < self.days:
            raise SystemExit("--day-index must name one of the generated days")
        unknown = set(self.contenders) - set(CONTENDERS) | set(self.cases) - set(CASES)
        if unknown:
            raise SystemExit(f"unknown contender or case: {', '.join(sorted(unknown))}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
