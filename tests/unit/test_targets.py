"""The tooling's one target-to-format mapping (retry_safe.project.TARGETS) agrees with the
targets profiles/profiles.yml defines: a target added to one and not the other, or a format
changed in one, fails here instead of in a run that writes the other format."""

from __future__ import annotations

import yaml

from retry_safe.project import (
    CLUSTER_TARGETS,
    EMBEDDED_TARGETS,
    PROJECT_DIR,
    SERVER_TARGETS,
    TARGETS,
    table_format,
)


def lakehouse_outputs() -> dict[str, dict]:
    profile = yaml.safe_load((PROJECT_DIR / "profiles" / "profiles.yml").read_text())
    outputs = profile["retry_safe"]["outputs"]
    # thrift: its format is the Thrift server's (LAKEHOUSE_FORMAT), not the target's own
    return {name: output for name, output in outputs.items() if name != "thrift"}


def test_every_profile_target_with_a_format_is_mapped_to_that_format():
    found = {name: output["table_format"] for name, output in lakehouse_outputs().items()}
    assert found == TARGETS


def test_the_per_format_targets_are_targets_of_that_format():
    for by_format in (EMBEDDED_TARGETS, SERVER_TARGETS, CLUSTER_TARGETS):
        assert sorted(by_format) == ["delta", "iceberg"]
        for fmt, target in by_format.items():
            assert table_format(target) == fmt, target


def test_the_cluster_targets_run_on_the_master_spark_master_url_names():
    outputs = lakehouse_outputs()
    for target in CLUSTER_TARGETS.values():
        master = outputs[target]["server_side_parameters"]["spark.master"]
        assert master == "{{ env_var('SPARK_MASTER_URL', 'spark://127.0.0.1:7077') }}", target
