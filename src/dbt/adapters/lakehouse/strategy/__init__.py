"""idempotent_merge's Python side: the interval, column names, the determinism check, commit conflicts, pinned rows."""
