"""Helpers around the retry_safe dbt project: run dbt in-process, read tables and their metrics."""

from retry_safe.project import PROJECT_DIR, run_dbt

__all__ = ["PROJECT_DIR", "run_dbt"]
