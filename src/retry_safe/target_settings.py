"""The Spark settings of a dbt target of this project, rendered from profiles/profiles.yml.

For the processes that start a SparkSession of a target without dbt (the benchmark's
hand-written job, the lakehouse server): they read the same profile, so a setting changed
there reaches them too.
"""

from __future__ import annotations

import os

import jinja2
import yaml

from dbt.adapters.lakehouse.metastore_settings import with_session_defaults
from retry_safe.project import PROJECT_DIR


def profile_settings(target: str) -> dict[str, str]:
    """The server_side_parameters of a dbt target in profiles/profiles.yml, rendered like dbt
    renders them (env_var with its default)."""
    profiles_dir = os.environ.get("DBT_PROFILES_DIR", str(PROJECT_DIR / "profiles"))
    with open(os.path.join(profiles_dir, "profiles.yml")) as handle:
        outputs = yaml.safe_load(handle)["retry_safe"]["outputs"]
    params = outputs[target]["server_side_parameters"]
    jinja = jinja2.Environment()
    jinja.globals["env_var"] = _env_var
    return {k: jinja.from_string(str(v)).render() for k, v in params.items()}


def session_settings(target: str) -> dict[str, str]:
    """What the adapter starts a session of the target with: the profile's settings, the
    adapter's session defaults, and dbt-spark's spark.sql.ansi.enabled=false."""
    return {**with_session_defaults(profile_settings(target)), "spark.sql.ansi.enabled": "false"}


def _env_var(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise SystemExit(f"profiles.yml needs the environment variable {name}")
    return value
