"""Column names that need quoting, rendered by idempotent_merge: a space, a reserved word, a
non-ASCII letter and mixed case, in the key (composite), the version, tie-break and interval
columns, and the update and insert targets. Plain names stay as they are (every other rendering
test), the others are written in backticks. Real tables: tests/test_quoted_columns.py."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import CompilationError
from unit.macros.base import Macros, interval, normalize
from unit.macros.expected_sql import DELETE, insert, merge_into, newer, update

from dbt.adapters.lakehouse.strategy.identifiers import column_name, quote_column

COLUMNS = ["customer name", "order", "Größe", "select", "Updated At", "order day"]
TYPES = {
    "customer name": "string",
    "order": "bigint",
    "größe": "string",
    "select": "string",
    "updated at": "timestamp",
    "order day": "date",
}
CONFIG = {
    # a name may be written in backticks too, as dbt's event_time filter needs it
    "unique_key": ["customer name", "`order`"],
    "version_column": "Updated At",
    "tie_break_column": "select",
    "interval_column": "order day",
    "delete_missing_in_interval": True,
}


def test_plain_names_stay_as_written_and_the_others_are_quoted():
    assert [quote_column(name) for name in ["id", "Updated_At", "_x1", "date", "name"]] == [
        "id",
        "Updated_At",
        "_x1",
        "date",
        "name",
    ]
    assert [quote_column(name) for name in ["order", "Select", "customer name", "Größe"]] == [
        "`order`",
        "`Select`",
        "`customer name`",
        "`Größe`",
    ]
    assert [quote_column(name) for name in ["1st", "a-b", "a.b", "it`s"]] == [
        "`1st`",
        "`a-b`",
        "`a.b`",
        "`it``s`",
    ]
    assert [column_name(name) for name in ["`order day`", "order day", "`it``s`", "`"]] == [
        "order day",
        "order day",
        "it`s",
        "`",
    ]


def test_every_name_of_the_merge_is_quoted_where_it_needs_to_be():
    macros = Macros(CONFIG)
    cfg = macros.idempotent_merge_config(COLUMNS, TYPES, interval("2026-10-01", "2026-10-02"))
    assert cfg["unique_key"] == ["customer name", "order"]
    merge = macros.idempotent_merge_sql(cfg, "m__dbt_changes", "analytics.m")
    assert normalize(merge) == normalize(
        merge_into(
            ["`customer name`", "`order`"],
            DELETE,
            update(["`Größe`", "`select`", "`Updated At`", "`order day`"], newer("`Updated At`")),
            insert(
                ["`customer name`", "`order`", "`Größe`", "`select`", "`Updated At`", "`order day`"]
            ),
        )
    )
    changes = normalize(macros.idempotent_merge_changes_sql(cfg, "m__dbt_tmp", "analytics.m"))
    for part in [
        "partition by `customer name`, `order` order by `Updated At` desc, `select` desc",
        "case when source.dbt_im_exists then source.`customer name` "
        "else target.`customer name` end as `customer name`,",
        "and (target.`order day` >= date'2026-10-01' and target.`order day` < date'2026-10-02')"
        " then 'delete'",
        "when source.`Updated At` > target.`Updated At` and not (source.`Größe` <=> "
        "target.`Größe` and source.`select` <=> target.`select` and source.`Updated At` <=> "
        "target.`Updated At` and source.`order day` <=> target.`order day`) then 'update'",
    ]:
        assert normalize(part) in changes, part


def test_a_batch_models_fold_names_struct_fields_by_the_names_themselves():
    macros = Macros(
        {
            "unique_key": "customer name",
            "batch_column": "batch no",
            "merge_update_expressions": {"Total €": "target.`Total €` + source.`Total €`"},
        }
    )
    types = {"customer name": "string", "batch no": "bigint", "total €": "bigint", "it's": "int"}
    cfg = macros.idempotent_merge_config(
        ["customer name", "batch no", "Total €", "it's"], types, None
    )
    changes = normalize(macros.idempotent_merge_batches_sql(cfg, "m__dbt_tmp", "analytics.m"))
    for part in [
        "struct( source.`batch no`, source.`customer name`, source.`Total €`, source.`it's` )",
        "'customer name', target.`customer name`, 'batch no', target.`batch no`, "
        "'Total €', target.`Total €`, 'it\\'s', target.`it's`,",
        "'Total €', cast(target.`Total €` + source.`Total €` as bigint)",
        "dbt_im_row.`customer name` as `customer name`, dbt_im_row.`batch no` as `batch no`,",
    ]:
        assert normalize(part) in changes, part


def test_a_name_the_model_lacks_is_refused_quoted_or_not():
    macros = Macros({"unique_key": ["customer nam", "`order`"], "version_column": "`Updated Time`"})
    with pytest.raises(CompilationError) as raised:
        macros.idempotent_merge_config(COLUMNS, TYPES, None)
    columns = "Its columns are: customer name, order, Größe, select, Updated At, order day."
    assert " ".join(raised.value.msg.split()) == (
        "Model model.scratch.m (incremental_strategy='idempotent_merge'): its configuration has "
        'problems, so nothing was written: - unique_key names the column "customer nam", which '
        f"the model does not have. {columns} - version_column names the column "
        f'"Updated Time", which the model does not have. {columns}'
    )
