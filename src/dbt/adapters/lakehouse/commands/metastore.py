"""`lakehouse metastore init`: the schema of the environment's PostgreSQL metastore, once.

The session side of the metastore (its settings, the check before a session's first
statement, the schema it creates) is session/metastore.py; this command starts the session
that creates it.
"""

from __future__ import annotations

import os

from dbt.adapters.lakehouse.session.jars import require_jars
from dbt.adapters.lakehouse.session.java import require_java
from dbt.adapters.lakehouse.session.jvm import start_session
from dbt.adapters.lakehouse.session.metastore import (
    MetastoreError,
    init_settings,
    initialize,
    is_postgresql,
)
from dbt.adapters.lakehouse.session.settings import session_settings


def init(table_format: str) -> str:
    """`lakehouse metastore init`: the schema of the environment's PostgreSQL metastore, once,
    in a session of this table format's settings (the same warehouse folder its runs use)."""
    settings = session_settings(table_format, {})
    if not is_postgresql(settings):
        raise MetastoreError(
            f"LAKEHOUSE_METASTORE_URL is {os.environ.get('LAKEHOUSE_METASTORE_URL') or 'not set'}"
            "; set it to the metastore database, jdbc:postgresql://<host>:<port>/<database>, "
            "and its login in LAKEHOUSE_METASTORE_USER and LAKEHOUSE_METASTORE_PASSWORD."
        )
    require_java()
    require_jars(settings)
    start_session(init_settings(settings), check_metastore=False)
    return initialize(settings)
