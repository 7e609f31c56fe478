"""The session target a lakehouse server serves, read from a dbt project's profile as dbt reads
it (`lakehouse serve --project-dir D --profiles-dir P --target T`).

The profile is rendered by dbt itself (env_var, the profile's Jinja), so the server starts Spark
with exactly the settings dbt's own session would: the table format's defaults and the
target's server_side_parameters (session_settings.py), plus dbt-spark's
spark.sql.ansi.enabled=false. Only a session target (`method: session`) owns a warehouse and
a metastore to serve; any other is refused with the fix.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbt.adapters.lakehouse.session.settings import session_settings


class ProfileError(Exception):
    """The project, its profile or its target cannot be served; the message says why."""


@dataclass(frozen=True)
class ServedTarget:
    profile: str
    target: str
    table_format: str
    schema: str
    settings: dict[str, str]


def find_project(project_dir: str | None) -> Path:
    """The dbt project folder: --project-dir, else the current folder or the nearest above it
    holding a dbt_project.yml (as dbt finds it)."""
    if project_dir:
        folder = Path(project_dir).expanduser().resolve()
        if not (folder / "dbt_project.yml").is_file():
            raise ProfileError(
                f"{folder} holds no dbt_project.yml: pass --project-dir <the dbt project>."
            )
        return folder
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "dbt_project.yml").is_file():
            return folder
    raise ProfileError(
        f"No dbt_project.yml in {here} or above it: run from the dbt project, or pass --project-dir."
    )


def profiles_folder(profiles_dir: str | None) -> Path:
    """As dbt picks it: --profiles-dir, else DBT_PROFILES_DIR, else the current folder when it
    holds a profiles.yml, else ~/.dbt."""
    chosen = profiles_dir or os.environ.get("DBT_PROFILES_DIR")
    if chosen:
        return Path(chosen).expanduser().resolve()
    if (Path.cwd() / "profiles.yml").is_file():
        return Path.cwd().resolve()
    return Path.home() / ".dbt"


def load_target(
    project_dir: str | None,
    profiles_dir: str | None,
    target: str | None,
    profile: str | None = None,
) -> ServedTarget:
    """The project's profile target, rendered by dbt, as the server starts it."""
    from argparse import Namespace

    from dbt_common.context import set_invocation_context
    from dbt_common.exceptions import DbtBaseException

    from dbt.config.runtime import load_profile
    from dbt.flags import set_from_args

    folder = find_project(project_dir)
    profiles = profiles_folder(profiles_dir)
    if not (profiles / "profiles.yml").is_file():
        raise ProfileError(f"No profiles.yml in {profiles}: pass --profiles-dir <its folder>.")
    set_invocation_context(os.environ)  # env_var() in the profile reads this process's
    # dbt's global flags, as a `dbt run` of the project sets them (the profile loader reads them)
    set_from_args(Namespace(profiles_dir=str(profiles), project_dir=str(folder)), None)
    try:
        return served(load_profile(str(folder), {}, profile, target))
    except DbtBaseException as error:
        raise ProfileError(f"dbt could not read the profile: {error}") from None


def served(loaded: Any) -> ServedTarget:
    credentials = loaded.credentials
    where = f"target {loaded.target_name} of profile {loaded.profile_name}"
    if credentials.type != "lakehouse":
        raise ProfileError(
            f"{where} has type {credentials.type}; the lakehouse server serves a "
            "`type: lakehouse` target."
        )
    if str(credentials.method) != "session":
        raise ProfileError(
            f"{where} is `method: {credentials.method}`; the server serves the warehouse of a "
            "session target (`method: session`, the embedded Spark that owns it). Pass "
            "--target <a session target>; a `method: connect` target is how dbt reaches a "
            "running server."
        )
    if credentials.table_format not in ("delta", "iceberg"):
        raise ProfileError(
            f"{where} names no table_format; add `table_format: delta` (or iceberg) to it."
        )
    settings = session_settings(credentials.table_format, credentials.server_side_parameters)
    settings["spark.sql.ansi.enabled"] = "false"  # as dbt-spark's session forces it
    return ServedTarget(
        loaded.profile_name,
        loaded.target_name,
        credentials.table_format,
        credentials.schema,
        settings,
    )
