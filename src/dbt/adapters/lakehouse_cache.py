"""The package's per-user cache folder, and what lives in it by default: the pinned jars
(session/jars.py) and the warm runner's socket (commands/runner.py, and its client, the entry
point lakehouse_command.py).

Standard library only, and outside the adapter package (whose `__init__` imports dbt): the
entry point reads the socket's place for `lakehouse dbt` before anything of dbt is imported.
"""

from __future__ import annotations

import os
from pathlib import Path

SOCKET_ENV = "LAKEHOUSE_RUNNER_SOCKET"


def user_cache() -> Path:
    """$XDG_CACHE_HOME, else ~/.cache, /dbt-lakehouse."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "dbt-lakehouse"


def default_socket() -> Path:
    """The runner's socket unless --socket says otherwise: $LAKEHOUSE_RUNNER_SOCKET, else in
    the per-user cache."""
    if os.environ.get(SOCKET_ENV):
        return Path(os.environ[SOCKET_ENV])
    return user_cache() / "runner.sock"
