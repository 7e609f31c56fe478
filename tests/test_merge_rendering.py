"""Compile-level tests: the SQL idempotent_merge renders for each combination of configs.

The change-set query and the MERGE are rendered by the project's macros through
`dbt run-operation` on a scratch project and checked for the clauses each config must (and
must never) produce. Behaviour on real tables is proved in test_idempotent_merge.py.
"""

from __future__ import annotations

import json
import re

import pytest

from retry_safe.project import interval_vars, run_dbt
from retry_safe.scratch import write_project

RENDER_MACRO = """\
{% macro render_idempotent_merge(cfg, one_row_per_key=false) %}
    {%- set b = interval_bounds() -%}
    {%- set types = {'id': 'bigint', 'day': 'date', 'name': 'string', 'amount': 'bigint',
                     'updated_at': 'timestamp', 'batch_id': 'bigint'} -%}
    {%- set scope = cfg.predicates | list -%}
    {%- if cfg.interval_in_key -%}
        {%- do scope.append(in_interval('target.' ~ cfg.interval_column, cfg.interval_type, b)) -%}
    {%- endif -%}
    {%- do cfg.update({'bounds': b, 'column_types': types, 'scope': scope}) -%}
    {%- if cfg.batch_column -%}
        {%- set changes = idempotent_merge_batches_sql(cfg, 'staged', 'db.tbl') -%}
    {%- else -%}
        {%- set changes = idempotent_merge_changes_sql(cfg, 'staged', 'db.tbl', one_row_per_key) -%}
    {%- endif -%}
    {{ log('CHANGES<<' ~ changes ~ '>>', info=True) }}
    {{ log('MERGE<<' ~ idempotent_merge_sql(cfg, 'changes', 'db.tbl') ~ '>>', info=True) }}
{% endmacro %}
"""
COLUMNS = ["id", "day", "name", "amount", "updated_at", "batch_id"]


def cfg(**overrides):
    base = {
        "model": "model.scratch.x",
        "columns": COLUMNS,
        "unique_key": ["id"],
        "version_column": None,
        "tie_break_column": None,
        "interval_column": None,
        "interval_in_key": False,
        "interval_type": "date",
        "delete_missing": False,
        "allow_empty_interval": False,
        "allow_null_keys": False,
        "skip_unchanged": True,
        "batch_column": None,
        "applied_column": None,
        "update_columns": ["day", "name", "amount", "updated_at", "batch_id"],
        "compare_columns": ["day", "name", "amount", "updated_at", "batch_id"],
        "update_expressions": {},
        "insert_expressions": {},
        "predicates": [],
    }
    merged = {**base, **overrides}
    merged["guard"] = merged["version_column"] or merged["batch_column"]
    return merged


def render(tmp_path, target, config, one_row_per_key: bool = False) -> tuple[str, str]:
    root = write_project(tmp_path / "render", {}, {"render_idempotent_merge.sql": RENDER_MACRO})
    logged: list[str] = []

    def collect(event) -> None:
        if event.info.name == "JinjaLogInfo":
            logged.append(event.info.msg)

    run_dbt(
        [
            "run-operation",
            "render_idempotent_merge",
            "--args",
            json.dumps({"cfg": config, "one_row_per_key": one_row_per_key}),
        ],
        target,
        interval_vars("2026-01-01", "2026-01-02"),
        project_dir=root,
        callbacks=[collect],
    )
    text = "\n".join(logged)
    changes = re.search(r"CHANGES<<(.*?)>>", text, re.S).group(1)
    merge = re.search(r"MERGE<<(.*?)>>", text, re.S).group(1)
    return " ".join(changes.split()), " ".join(merge.split())


def assert_always(merge: str) -> None:
    assert "not matched by source" not in merge, "a bare NOT MATCHED BY SOURCE rewrites every file"
    assert "when matched and source.dbt_im_op = 'update'" in merge, "MATCHED clause always present"
    assert "when not matched and source.dbt_im_op = 'insert' then insert" in merge
    assert "on target.id <=> source.id" in merge, "null-safe key match"


def test_plain_upsert_skips_unchanged_rows(tmp_path, target):
    changes, merge = render(tmp_path, target, cfg())
    assert_always(merge)
    assert "not (source.day <=> target.day and source.name <=> target.name" in changes
    assert "when matched and source.dbt_im_op = 'delete'" not in merge
    assert "'delete'" not in changes
    assert "from source_newest as source left join target_in_scope as target" in changes


def test_version_guard_in_change_set_and_in_merge(tmp_path, target):
    changes, merge = render(tmp_path, target, cfg(version_column="updated_at"))
    assert_always(merge)
    assert "when source.updated_at > target.updated_at and not (" in changes
    assert (
        "when matched and source.dbt_im_op = 'update' and source.updated_at > target.updated_at then update set"
        in merge
    )
    assert "order by updated_at desc" in changes


def test_one_row_per_key_skips_the_newest_row_window(tmp_path, target):
    config = cfg(version_column="updated_at")
    changes, _ = render(tmp_path, target, config, one_row_per_key=True)
    assert "row_number()" not in changes
    assert "true as dbt_im_exists from staged )" in changes
    assert "when source.updated_at > target.updated_at and not (" in changes, "guard kept"


def test_interval_in_key_bounds_the_on_clause_and_the_deletes(tmp_path, target):
    config = cfg(
        unique_key=["id", "day"],
        interval_column="day",
        interval_in_key=True,
        delete_missing=True,
        update_columns=["name", "amount", "updated_at", "batch_id"],
        compare_columns=["name", "amount", "updated_at", "batch_id"],
    )
    changes, merge = render(tmp_path, target, config)
    assert "target.id <=> source.id and target.day <=> source.day" in merge
    assert "and (target.day >= date'2026-01-01' and target.day < date'2026-01-02')" in merge
    assert "when matched and source.dbt_im_op = 'delete' then delete" in merge
    assert "source_newest as source full outer join target_in_scope as target" in changes
    assert "where (target.day >= date'2026-01-01' and target.day < date'2026-01-02')" in changes
    assert (
        "when source.dbt_im_exists is null and (target.day >= date'2026-01-01' "
        "and target.day < date'2026-01-02') then 'delete'"
    ) in changes
    assert "not matched by source" not in merge


def test_interval_outside_the_key_bounds_only_the_deletes(tmp_path, target):
    config = cfg(interval_column="day", interval_in_key=False, delete_missing=True)
    changes, merge = render(tmp_path, target, config)
    assert_always(merge)
    assert "date'2026-01-01'" not in merge, "a moved key must still match: no interval in ON"
    assert "where (target.day" not in changes, "the whole table is joined: a key may have moved"
    assert (
        "when source.dbt_im_exists is null and (target.day >= date'2026-01-01' "
        "and target.day < date'2026-01-02') then 'delete' when source.dbt_im_exists is null "
        "then null"
    ) in changes


def test_batch_column_folds_the_pending_batches_of_each_key(tmp_path, target):
    config = cfg(
        batch_column="batch_id",
        applied_column="applied_batches",
        update_columns=["amount", "batch_id"],
        update_expressions={"amount": "target.amount + source.amount"},
    )
    changes, merge = render(tmp_path, target, config)
    assert_always(merge)
    # a batch already in the row's list is left out; the others are folded in batch order
    assert "not array_contains(target.applied_batches, source.batch_id)" in changes
    assert "array_sort(collect_list(dbt_im_batch)) as dbt_im_batches" in changes
    assert "'amount', cast(target.amount + source.amount as bigint)" in changes
    assert "'batch_id', cast(greatest(target.batch_id, source.batch_id) as bigint)" in changes
    # name is not updated: the oldest batch's value, as if the batches had come in order
    assert (
        "'name', case when source.batch_id < target.dbt_im_first then cast(source.name" in changes
    )
    # the MERGE writes the folded row only if the row still holds the list it was folded from
    assert "and target.applied_batches <=> source.dbt_im_applied_before then update set" in merge
    assert "target.amount = source.amount," in merge, "no expression applied in the MERGE"
    assert "target.applied_batches = source.applied_batches" in merge
    assert "source.batch_id, source.applied_batches )" in merge


def test_no_column_to_update_renders_no_update_clause(tmp_path, target):
    changes, merge = render(tmp_path, target, cfg(update_columns=[], compare_columns=[]))
    assert "update set" not in merge
    assert "when matched and source.dbt_im_op = 'delete' then delete" in merge, (
        "a WHEN MATCHED clause stays (apache/iceberg issue 12653)"
    )
    assert "when not matched and source.dbt_im_op = 'insert' then insert" in merge
    assert "when false then 'update'" in changes


def test_insert_expressions_and_predicates(tmp_path, target):
    config = cfg(
        insert_expressions={"updated_at": "null"}, predicates=["target.day >= date'2025-01-01'"]
    )
    changes, merge = render(tmp_path, target, config)
    assert_always(merge)
    assert "source.amount, null, source.batch_id )" in merge
    assert "and target.day >= date'2025-01-01'" in merge
    assert "where target.day >= date'2025-01-01'" in changes


@pytest.mark.parametrize("skip_unchanged", [True, False])
def test_update_condition_without_version(tmp_path, target, skip_unchanged):
    changes, _ = render(
        tmp_path,
        target,
        cfg(skip_unchanged=skip_unchanged, compare_columns=[] if skip_unchanged else ["name"]),
    )
    if skip_unchanged:
        assert "when false then 'update'" in changes, (
            "nothing to compare: an existing key never becomes an update"
        )
    else:
        assert "when true then 'update'" in changes, (
            "skip_unchanged: false updates every matched key"
        )
