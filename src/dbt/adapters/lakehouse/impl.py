"""The adapter: SparkAdapter plus Python models in the session, the idempotent_merge strategy
(its macros live in dbt/include/lakehouse/macros) and the one interval parser."""

import time
from pathlib import Path
from typing import Any

from dbt_common.events.contextvars import get_node_info
from dbt_common.events.functions import fire_event
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.base import BaseRelation, PythonJobHelper, available
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.types import SQLQuery, SQLQueryStatus
from dbt.adapters.lakehouse import (
    audit,
    determinism,
    errors,
    identifiers,
    ledger,
    listing,
    pinned,
    seeds,
    show,
)
from dbt.adapters.lakehouse.bindings import SESSION_METHODS
from dbt.adapters.lakehouse.connections import LakehouseConnectionManager
from dbt.adapters.lakehouse.interval import IntervalError, parse_instant, parse_run_interval
from dbt.adapters.lakehouse.python_submissions import SessionPythonJobHelper
from dbt.adapters.lakehouse.relations import LakehouseRelation, with_iceberg_detected
from dbt.adapters.lakehouse.session_settings import session_settings
from dbt.adapters.spark import SparkAdapter
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import LIST_RELATIONS_MACRO_NAME
from dbt.artifacts.schemas.results import RunStatus

# `dbt retry` sets no selection for the staging decision to read (audit.py)
audit.record_every_selection()


class LakehouseAdapter(SparkAdapter):
    ConnectionManager = LakehouseConnectionManager  # type: ignore[assignment]
    Relation = LakehouseRelation  # type: ignore[assignment]

    def __init__(self, config: Any, mp_context: Any) -> None:
        super().__init__(config, mp_context)
        # before any connection opens, so the embedded session starts with them: the table
        # format's defaults, then the profile's own settings (session_settings.py)
        credentials = config.credentials
        if credentials.method == SparkConnectionMethod.SESSION:
            credentials.server_side_parameters = session_settings(
                credentials.table_format, credentials.server_side_parameters
            )

    def execute_macro(self, macro_name: str, *args: Any, **kwargs: Any) -> Any:
        # dbt show of a Python model: a message, not its Python code run as SQL (show.py)
        show.refuse_python_model(macro_name, kwargs.get("context_override"))
        return super().execute_macro(macro_name, *args, **kwargs)

    @property
    def default_python_submission_method(self) -> str:
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}

    @available
    def valid_incremental_strategies(self) -> list[str]:
        """dbt-spark's strategies plus idempotent_merge (get_incremental_idempotent_merge_sql)."""
        return ["append", "merge", "insert_overwrite", "microbatch", "idempotent_merge"]

    @available
    def parse_interval(
        self,
        who: str,
        start: object,
        end: object,
        flag_start: object = None,
        flag_end: object = None,
    ) -> dict:
        """The interval [start, end) in UTC as {'start', 'end', 'whole_days'}; the one parser
        (interval.py), cached per pair of values. flag_start / flag_end: dbt's event-time
        flags, which win over start / end (the vars) and must agree with them when both are
        given. A missing, malformed, reversed or contradictory value raises a compilation
        error naming `who` (the model) and the fix."""
        try:
            return parse_run_interval(who, start, end, flag_start, flag_end).as_dict()
        except IntervalError as problem:
            raise CompilationError(str(problem)) from None

    @available
    def parse_instant(self, value: object) -> Any:
        """One ISO-8601 date or timestamp (text, date or datetime) as a UTC datetime, or None
        (the begin config is read with it)."""
        return parse_instant(value)

    @available
    def quote_column(self, name: str) -> str:
        """A name as the strategy writes it in SQL (a column, its temporary view): as it is when
        plain, otherwise in backticks (identifiers.py)."""
        return identifiers.quote_column(str(name))

    @available
    def column_name(self, written: str) -> str:
        """The column a config names, backticks removed (identifiers.py)."""
        return identifiers.column_name(str(written))

    @available
    def find_nondeterministic(self, code: str, language: str = "sql") -> dict | None:
        """The first non-deterministic spelling in code (Spark SQL or Python), as a dict with
        name, what ("function uuid()"), line and text; None if there is none. Used by the
        macro idempotent_merge_assert_deterministic; the rules are in determinism.py."""
        found = determinism.find_nondeterministic(code, language)
        return found.as_dict() if found else None

    @available
    def interval_ledger(
        self,
        model_id: str,
        relation: str,
        commits: list,
        begin: object = None,
        version_label: str = "version",
    ) -> dict:
        """The interval ledger of a model's table (ledger.py): commits is [version, commit
        metadata] per commit, oldest first. Returns {'intervals': loaded intervals and gaps in
        time order, 'lines': the same as text}; macro lakehouse_intervals."""
        pieces = ledger.listing(model_id, [(str(v), m) for v, m in commits], begin)
        return {"intervals": pieces, "lines": ledger.lines(relation, pieces, version_label)}

    @available
    def check_seed_file(
        self, unique_id: str, file_path: str, path: str, delimiter: str = ","
    ) -> str:
        """The seed's CSV file (path, as dbt read it) read strictly: an error in one line
        naming the seed, the line and the fix when it is not CSV (seeds.py), else ''. A runtime
        error: dbt adds no macro trace to it."""
        problem = seeds.seed_problem(unique_id, file_path, Path(path), delimiter or ",")
        if problem:
            raise DbtRuntimeError(problem)
        return ""

    @available
    def pin_view(self, name: str, sql: str) -> None:
        """The rows of sql computed once, now, into the temporary view name (pinned.py: a
        local checkpoint, which no later write re-plans; CACHE TABLE on a target without a
        Spark session in dbt's process). Logged and timed like any statement of the model."""
        connection = self.connections.get_thread_connection()
        if connection.credentials.method not in SESSION_METHODS:
            self.connections.add_query(f"cache table {name} as {sql}", auto_begin=False)
            return
        connection.handle  # noqa: B018 (opens a lazy connection: the embedded session starts there)
        sql = self.connections._add_query_comment(sql)
        logged = f"-- computed once into the temporary view {name} (localCheckpoint)\n{sql}"
        fire_event(SQLQuery(conn_name=connection.name, sql=logged, node_info=get_node_info()))
        started = time.perf_counter()
        with self.connections.exception_handler(sql):
            pinned.pin_rows(connection.credentials, name, sql)
        elapsed = time.perf_counter() - started
        fire_event(SQLQueryStatus(status="OK", elapsed=elapsed, node_info=get_node_info()))

    @available
    def create_first_load(self, sql: str) -> str:
        """Run a first load's CREATE TABLE (idempotent_merge_create_sql). When the format says
        another run created the table meanwhile (two first loads at once: errors.py,
        FIRST_LOAD_CONFLICTS), return what happened, for the strategy's refusal; '' when
        created. Any other error is raised as it is."""
        try:
            self.execute(sql)
        except DbtRuntimeError as error:
            happened = errors.first_load_conflict(str(error))
            if happened is None:
                raise
            errors.logger.debug(f"first load refused after: {error}")
            return happened
        return ""

    @available
    def stage_audited(self, relation: BaseRelation, details: dict) -> str:
        """Record the model's relation as staged for audit in this invocation (audit.py):
        until it is published or discarded, it renders as details['staged']. Returns ''."""
        audit.stage(str(relation.schema), str(relation.identifier), details)
        return ""

    @available
    def audited_stages(self) -> list:
        """The stages of this invocation, in staging order (lakehouse_publish_audited)."""
        return audit.stages()

    @available
    def stages_read_by(self, reader: str) -> list:
        """The models staged for audit in this invocation that the node `reader` (a unique id)
        read, sorted (audit.py): an idempotent_merge model is staged with them."""
        return audit.stages_read_by(reader)

    @available
    def refuse_staged_reads(self, reader: str, kind: str) -> str:
        """Raise when the node `reader` (a unique id), a `kind` of model that cannot be staged
        for audit, read a model staged in this invocation (audit.py). Returns ''."""
        audit.refuse_staged_reads(reader, kind)
        return ""

    @available
    def mark_unpublished(self, result: Any, message: str) -> str:
        """A result of a staged model that was not published, or of a test that passed on
        its staged change, becomes an error with the message: dbt's summary,
        run_results.json and the exit status say so, and `dbt retry` runs the model and every
        one of its tests again (a test that passed judged rows that were never published).
        Returns ''."""
        result.status = RunStatus.Error
        result.message = message
        return ""

    @available
    def end_audited(self, schema: str, identifier: str) -> str:
        """Forget a stage once published or discarded. Returns ''."""
        audit.end(schema, identifier)
        return ""

    def generate_python_submission_response(self, submission_result: Any) -> AdapterResponse:
        return AdapterResponse(_message="OK", rows_affected=None)

    def list_relations_without_caching(self, schema_relation: BaseRelation) -> list[BaseRelation]:
        """dbt-spark's listing, except that a table dropped by another run while Spark lists the
        schema starts the listing again instead of making the schema look empty (listing.py)."""
        kwargs = {"schema_relation": schema_relation}
        last_error = ""
        for attempt in range(1, listing.ATTEMPTS + 1):
            try:
                rows = self.execute_macro(LIST_RELATIONS_MACRO_NAME, kwargs=kwargs)
            except DbtRuntimeError as error:
                last_error = getattr(error, "msg", "") or str(error)
                if listing.schema_missing(last_error):
                    return []
                if listing.needs_show_tables(last_error):
                    return super().list_relations_without_caching(schema_relation)
                if not listing.table_vanished(last_error):
                    raise
                if attempt < listing.ATTEMPTS:
                    time.sleep(listing.pause(attempt))
                continue
            return self._build_spark_relation_list(rows, self._get_relation_information)
        raise DbtRuntimeError(listing.gave_up(str(schema_relation), last_error))

    def _build_spark_relation_list(self, row_list: Any, relation_info_func: Any) -> list:
        """dbt-spark's relations, with the session catalog's Iceberg tables marked is_iceberg
        (they say `Provider: hive`; relations.py)."""
        relations = super()._build_spark_relation_list(row_list, relation_info_func)
        # `show table extended in <schema>` also lists the session's temporary views (a SQL
        # model's <model>__dbt_tmp), with no schema; as relations they broke
        # `dbt docs generate` run in the same session ('NoneType' has no attribute 'lower')
        return [with_iceberg_detected(relation) for relation in relations if relation.schema]
