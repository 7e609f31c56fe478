"""A dbt user's everyday commands on this project: ls, parse, compile, docs, run, retry.

Commands that write nothing work without an interval; `run` refuses a missing one. The config
`dbt ls` shows is the one the materialization uses. `dbt retry` reruns a failed interval with
the interval it was given. None of it depends on the table format: one pass runs these.
"""

from __future__ import annotations

import json
import shutil

import pytest
from support.tables import rows

from retry_safe.project import PROJECT_DIR, describe_failure, interval_flags, run_dbt

pytestmark = pytest.mark.format_independent(run_in="local_iceberg")

# (materialized, incremental_strategy, on_schema_change) of every model, as dbt_project.yml,
# the pipeline ymls and the Python models' dbt.config() set them.
MODEL_CONFIGS = {
    "customer_balances_additive": ("incremental", "idempotent_merge", "fail"),
    "customer_balances_versioned": ("incremental", "idempotent_merge", "fail"),
    "f1_drivers_merge": ("incremental", "idempotent_merge", "fail"),
    # a Python model is a table unless its dbt.config() says otherwise (dbt-core's default)
    "f1_drivers_merge_df": ("incremental", "idempotent_merge", "fail"),
    "orders": ("incremental", "idempotent_merge", "fail"),
    "rejected_orders": ("incremental", "idempotent_merge", "fail"),
    "retail_daily_product_cart_abandonment": ("incremental", "idempotent_merge", "fail"),
    "retail_daily_product_cart_abandonment_df": ("incremental", "idempotent_merge", "fail"),
    "stg_order_change_lines": ("incremental", "idempotent_merge", "fail"),
}


def test_dbt_ls_shows_the_configs_in_force_for_every_model(target):
    listed = run_dbt(["ls", "--resource-type", "model", "--output", "json"], target).result
    configs = {}
    for line in listed:
        node = json.loads(line)
        config = node["config"]
        configs[node["name"]] = (
            config["materialized"],
            config["incremental_strategy"],
            config["on_schema_change"],
        )
    assert configs == MODEL_CONFIGS


def test_commands_that_write_nothing_need_no_interval(spark, target, schema, tmp_path):
    for command in (["parse"], ["ls"], ["compile"], ["docs", "generate"]):
        run_dbt([*command, "--target-path", str(tmp_path / "target")], target)
    compiled = tmp_path / "target" / "compiled" / "retry_safe" / "models"
    cart = compiled / "cart_abandonment" / "retail_daily_product_cart_abandonment.sql"
    # without vars the interval renders as named placeholders, not as a made-up day
    assert "date'<data_interval_start>'" in cart.read_text()
    assert "date'<data_interval_end>'" in cart.read_text()

    result = run_dbt(["run", "-s", "customer_balances_versioned"], target, expect_pass=False)
    text = describe_failure(result)
    assert "customer_balances_versioned" in text
    assert "data_interval_start" in text
    assert spark.sql(f"show tables in {schema}").filter("not isTemporary").count() == 0


def test_dbt_retry_reruns_a_failed_interval_once_its_file_has_landed(
    spark, target, schema, tmp_path, json_artifacts
):
    landing = tmp_path / "landing"
    landing.mkdir()
    shutil.copy(PROJECT_DIR / "landing" / "orders" / "order_changes_20261003.csv", landing)
    state = ["--target-path", str(tmp_path / "target")]
    variables = f"{{orders_landing_path: '{landing}'}}"
    select = ["-s", "+orders", "+rejected_orders", *interval_flags("2026-10-03", "2026-10-05")]
    failed = run_dbt(["run", *select, *state, "--vars", variables], target, expect_pass=False)
    assert "order_changes_20261004.csv" in describe_failure(failed)
    assert spark.sql(f"show tables in {schema}").filter("tableName = 'orders'").count() == 0

    shutil.copy(PROJECT_DIR / "landing" / "orders" / "order_changes_20261004.csv", landing)
    retried = run_dbt(["retry", *state, "--state", str(tmp_path / "target"), "--vars", variables])
    assert sorted(
        r.node.name for r in retried.result.results if r.node.resource_type == "model"
    ) == [
        "orders",
        "rejected_orders",
        "stg_order_change_lines",
    ]
    # reference document 002 after both days
    assert rows(spark, f"{schema}.orders", ["order_id", "status"]) == [
        (1001, "shipped"),
        (1002, "cancelled"),
        (1004, "shipped"),
        (1005, "cancelled"),
        (1006, "shipped"),
    ]
    assert rows(spark, f"{schema}.rejected_orders", ["line_number", "rejection_reason"]) == [
        (5, "amount 'abc' is not a decimal(10,2)"),
    ]


def parse_events(target: str, args: list[str], variables: dict | None = None) -> list[str]:
    """The names of the events of a `dbt run` that selects nothing (it parses, runs nothing)."""
    names: list[str] = []
    run_dbt(
        ["run", "--select", "tag:selects_nothing", *args],
        target,
        variables,
        callbacks=[lambda event: names.append(event.info.name)],
    )
    return names


def test_a_new_interval_as_flags_keeps_partial_parsing_and_as_vars_does_not(target):
    parse_events(target, interval_flags("2026-10-03", "2026-10-04"))
    second = parse_events(target, interval_flags("2026-10-04", "2026-10-05"))
    assert "PartialParsingSkipParsing" in second and "UnableToPartialParse" not in second

    parse_events(
        target, [], {"data_interval_start": "2026-10-03", "data_interval_end": "2026-10-04"}
    )
    second = parse_events(
        target, [], {"data_interval_start": "2026-10-04", "data_interval_end": "2026-10-05"}
    )
    assert "UnableToPartialParse" in second  # dbt: "... because config vars ... have changed"
