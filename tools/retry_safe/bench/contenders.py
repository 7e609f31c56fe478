"""The contenders' code: the dbt models and the reference document 000's reconciling MERGE."""

from __future__ import annotations

from datetime import date, timedelta

from retry_safe.bench.data import COLUMNS, KEYS
from retry_safe.bench.settings import SCHEMA

DBT_MODELS = {
    "idempotent_merge": "bench_im",
    "stock_merge": "bench_stock",
    "audited": "bench_im_audited",
}
MOR_MODEL = "bench_im_mor"
# (5) the same model under write-audit-publish, built with one data test (a column scan of the
# staged table) and published by the project's on-run-end hook once the test passed
AUDITED_YML = f"""\
version: 2
models:
  - name: {DBT_MODELS["audited"]}
    columns:
      - name: id
        data_tests: [not_null]
"""
PUBLISH_HOOK = 'on-run-end: ["{{ lakehouse_publish_audited(results) }}"]\n'

_SELECT = (
    "select " + ", ".join(COLUMNS) + "\n"
    "from {{ target.schema }}.{{ var('bench_source') }}\n"
    "where {{ in_interval('event_date', 'date') }}\n"
)
_IDEMPOTENT = (
    "{{ config(materialized='incremental', incremental_strategy='idempotent_merge',\n"
    "          unique_key=['event_date', 'id'], interval_column='event_date',\n"
    "          delete_missing_in_interval=true, partition_by=['event_date']) }}\n\n" + _SELECT
)
_STOCK = (
    "{{ config(materialized='incremental', incremental_strategy='merge',\n"
    "          unique_key=['event_date', 'id'], partition_by=['event_date']) }}\n\n" + _SELECT
)


def dbt_models() -> dict[str, str]:
    """File name -> code for the scratch project (write_project links the project's macros;
    its dbt_project.yml gets PUBLISH_HOOK)."""
    audited = _IDEMPOTENT.replace(
        "partition_by=['event_date']", "partition_by=['event_date'],\n          publish='audited'"
    )
    return {
        f"{DBT_MODELS['idempotent_merge']}.sql": _IDEMPOTENT,
        f"{MOR_MODEL}.sql": _IDEMPOTENT,
        f"{DBT_MODELS['stock_merge']}.sql": _STOCK,
        f"{DBT_MODELS['audited']}.sql": audited,
        f"{DBT_MODELS['audited']}.yml": AUDITED_YML,
    }


def day_bounds(day: date) -> tuple[str, str]:
    return day.isoformat(), (day + timedelta(days=1)).isoformat()


def reference_merge_sql(table: str, source: str, day: date) -> str:
    """Reference document 000's reconciliation: upsert everything, delete what the day lacks."""
    start, end = day_bounds(day)
    on = " and ".join(f"target.{k} = source.{k}" for k in KEYS)
    update = ", ".join(f"target.{c} = source.{c}" for c in COLUMNS)
    values = ", ".join(f"source.{c}" for c in COLUMNS)
    return f"""
        merge into {SCHEMA}.{table} as target
        using (
            select {", ".join(COLUMNS)} from {SCHEMA}.{source}
            where event_date >= date'{start}' and event_date < date'{end}'
        ) as source
        on {on}
        when matched then update set {update}
        when not matched then insert ({", ".join(COLUMNS)}) values ({values})
        when not matched by source
            and target.event_date >= date'{start}' and target.event_date < date'{end}'
            then delete
    """
