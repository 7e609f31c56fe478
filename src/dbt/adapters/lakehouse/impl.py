"""The adapter: SparkAdapter plus Python models in the session, the idempotent_merge strategy
(its macros live in dbt/include/lakehouse/macros) and the one interval parser."""

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbt_common.events.contextvars import get_node_info
from dbt_common.events.functions import fire_event
from dbt_common.exceptions import CompilationError, DbtRuntimeError
from dbt_common.invocation import get_invocation_id

from dbt.adapters.base import BaseRelation, PythonJobHelper, available
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.events.types import SQLQuery, SQLQueryStatus
from dbt.adapters.lakehouse import errors, listing, seeds, show
from dbt.adapters.lakehouse.audit import branches
from dbt.adapters.lakehouse.audit import stages as audit
from dbt.adapters.lakehouse.connections import LakehouseConnectionManager
from dbt.adapters.lakehouse.python_submissions import SessionPythonJobHelper
from dbt.adapters.lakehouse.relations import LakehouseRelation, with_iceberg_detected
from dbt.adapters.lakehouse.session.bindings import SESSION_METHODS
from dbt.adapters.lakehouse.session.settings import session_settings
from dbt.adapters.lakehouse.strategy import conflicts, determinism, identifiers, pinned
from dbt.adapters.lakehouse.strategy.interval import (
    IntervalError,
    parse_instant,
    parse_run_interval,
)
from dbt.adapters.lakehouse.tables import folders, ledger, maintenance
from dbt.adapters.spark import SparkAdapter
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import LIST_RELATIONS_MACRO_NAME
from dbt.artifacts.schemas.results import RunStatus

# `dbt retry` sets no selection for the staging decision to read (audit.py)
audit.record_every_selection()

# the schemas whose interval ledger table this process has written to (_write_ledger)
_LEDGERS: set[str] = set()
# the ledger rows of this invocation's runs, written as it ends (record_interval)
_PENDING: list = []
_PENDING_LOCK = threading.Lock()
LEDGER_CREATE_ATTEMPTS = 5


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
        macro idempotent_merge_nondeterministic; the rules are in determinism.py."""
        found = determinism.find_nondeterministic(code, language)
        return found.as_dict() if found else None

    @available
    def record_interval(
        self,
        relation: str,
        model: str,
        load: str,
        start: object = None,
        end: object = None,
        version: object = None,
        since: object = None,
    ) -> str:
        """Record one run's interval for the interval ledger table (ledger.py): the table, the
        model, the kind of load (create, merge or unchanged), [start, end), this invocation
        and the table's version after the run. Written with the invocation's other rows as it
        ends (cleanup_connections). since (ledger_clock()): when a create began, the moment
        its row is ordered at (ledger.py: a create starts the table over). Returns ''."""
        moments = [parse_instant(value) if value is not None else None for value in (start, end)]
        at = {"recorded_at": parse_instant(since)} if since is not None else {}
        row = ledger.Row(
            relation,
            model,
            load,
            *moments,
            get_invocation_id(),
            None if version is None else str(version),
            **at,
        )
        with _PENDING_LOCK:
            _PENDING.append(row)
        return ""

    def cleanup_connections(self) -> None:
        """dbt's end of an invocation: the invocation's ledger rows are written first, in one
        statement (a failure to write them fails the invocation: rerun it, it changes nothing
        and records them)."""
        with _PENDING_LOCK:
            rows, _PENDING[:] = list(_PENDING), []
        try:
            if rows:
                with self.connection_named("lakehouse_ledger"):
                    schema = self.config.credentials.ledger_schema
                    self._write_ledger(schema, ledger.insert_sql(schema, rows))
                    table_format = self.config.credentials.table_format or "delta"
                    ledger.compact_if_due(self._session_rows, schema, table_format)
        finally:
            super().cleanup_connections()

    def _write_ledger(self, schema: str, insert: str) -> None:
        """The invocation's ledger rows in one INSERT. The table exists on every run but a
        project's first, so the INSERT is tried first, and the schema and table created only
        when it finds none (two statements, 0.1-0.3 s, saved on every other run); once this
        process has written, a missing table is an error again."""
        if schema in _LEDGERS:
            self.execute(insert)
            return
        try:
            self.execute(insert)
        except DbtRuntimeError as error:
            if not ledger.missing(str(error)):
                raise
            self._create_ledger(schema)
            self.execute(insert)
        _LEDGERS.add(schema)

    def _create_ledger(self, schema: str) -> None:
        """The ledger's schema and table, if not there. Two processes creating it at once: the
        loser's CREATE fails as a first load's would (errors.first_load_conflict), and it asks
        again once the winner's table is there."""
        self.execute(f"create schema if not exists {schema}")
        create = ledger.create_sql(schema, self.config.credentials.table_format or "delta")
        for attempt in range(1, LEDGER_CREATE_ATTEMPTS + 1):
            try:
                self.execute(create)
                break
            except DbtRuntimeError as error:
                if errors.first_load_conflict(str(error)) is None:
                    raise
                if attempt == LEDGER_CREATE_ATTEMPTS:
                    raise
                time.sleep(attempt)

    @available
    def interval_ledger(
        self, model_id: str, relation: str, begin: object = None, version_label: str = "version"
    ) -> dict:
        """The interval ledger of a model's table (ledger.py), read from the ledger table:
        {'intervals': loaded intervals and gaps in time order, 'lines': the same as text};
        none before the ledger table exists. Macro lakehouse_intervals."""
        schema = self.config.credentials.ledger_schema
        try:
            _, table = self.execute(ledger.select_sql(schema, relation), fetch=True)
        except DbtRuntimeError as error:
            if "TABLE_OR_VIEW_NOT_FOUND" not in str(error) and "SCHEMA_NOT_FOUND" not in str(error):
                raise
            rows: list = []
        else:
            rows = ledger.records(tuple(row) for row in table.rows)
        pieces = ledger.listing(rows, begin)
        return {"intervals": pieces, "lines": ledger.lines(relation, pieces, version_label)}

    @available
    def drop_table(self, relation: BaseRelation) -> str:
        """Drop a table and its files (macro lakehouse_drop_table). A Delta table of the session
        catalog is managed: DROP deletes its folder. An Iceberg table of the session catalog
        (Hive) keeps every file on a plain DROP, so it is dropped with PURGE, which deletes its
        data and metadata files but leaves their folders: an embedded session then removes
        the table's folder once no file is left in it. Returns ''."""
        credentials = self.connections.get_thread_connection().credentials
        if credentials.table_format != "iceberg":
            self.execute(f"drop table if exists {relation}")
            return ""
        location = None
        if credentials.method == SparkConnectionMethod.SESSION and self._table_exists(relation):
            rows = self._session_rows(f"describe table extended {relation}")
            found = [r["data_type"] for r in rows if str(r["col_name"]).strip() == "Location"]
            location = found[0] if found else None
        self.execute(f"drop table if exists {relation} purge")
        if location:
            folders.remove_if_empty(credentials, location)
        return ""

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
    def create_seed_table(self, sql: str, overwrite_sql: str, bindings: list) -> str:
        """A seed's table created with all its rows in one statement (lakehouse_seed.sql); when
        another load of the seed created it first (errors.first_load_conflict), its rows are
        replaced by overwrite_sql (load_seed_rows). Any other error is raised. Returns ''."""
        try:
            self.connections.add_query(sql, bindings=bindings, abridge_sql_log=True)
        except Exception as error:  # noqa: BLE001 (only a table created meanwhile is handled)
            if errors.first_load_conflict(str(error)) is None:
                raise
            return self.load_seed_rows(overwrite_sql, bindings)
        return ""

    @available
    def load_seed_rows(self, sql: str, bindings: list) -> str:
        """A seed's one INSERT OVERWRITE of all its rows (lakehouse_seed.sql): when another
        load of the seed committed first, written again over it (conflicts.retrying); any
        other error is raised. Returns ''."""
        conflicts.retrying(
            lambda: self.connections.add_query(sql, bindings=bindings, abridge_sql_log=True)
        )
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
        note = f"-- computed once into the temporary view {name} (localCheckpoint)"
        self._on_session(sql, note, lambda sql: pinned.pin_rows(connection.credentials, name, sql))

    def _session_rows(self, sql: str) -> list[dict]:
        """A statement's rows as dicts (structs too) from dbt's Spark session (pinned.rows),
        logged and timed like any statement."""
        credentials = self.connections.get_thread_connection().credentials
        return self._on_session(
            sql, "-- read on the Spark session", lambda sql: pinned.rows(credentials, sql)
        )

    def _on_session(self, sql: str, note: str, work: Any) -> Any:
        """work(sql) on dbt's Spark session, logged and timed as dbt logs a statement, its
        errors as dbt's (the connection's exception handler)."""
        connection = self.connections.get_thread_connection()
        connection.handle  # noqa: B018 (opens a lazy connection: the embedded session starts there)
        sql = self.connections._add_query_comment(sql)
        fire_event(
            SQLQuery(conn_name=connection.name, sql=f"{note}\n{sql}", node_info=get_node_info())
        )
        started = time.perf_counter()
        with self.connections.exception_handler(sql):
            done = work(sql)
        elapsed = time.perf_counter() - started
        fire_event(SQLQueryStatus(status="OK", elapsed=elapsed, node_info=get_node_info()))
        return done

    @available
    def maintenance_problems(self, tables: list, retain: str) -> list:
        """What stops `lakehouse maintain` before it changes anything (maintenance.py), one
        line each with the fix: a window shorter than a format's safe minimum, a selected
        model without a table, a table of another format or outside the warehouse. tables:
        [{'schema', 'identifier', 'format', 'model'}]."""
        try:
            hours = maintenance.parse_retain(retain)
        except maintenance.MaintenanceError as problem:
            return [str(problem)]
        problems = []
        for table_format in sorted({t["format"] for t in tables} & set(maintenance.MINIMUM_HOURS)):
            problem = maintenance.retention_problem(hours, table_format, retain)
            if problem:
                problems.append(problem)
        warehouse = self._session_rows("set spark.sql.warehouse.dir")[0]["value"]
        for spec in tables:
            table = maintenance.Table(
                spec["schema"], spec["identifier"], spec["format"], spec["model"]
            )
            problem = maintenance.format_problem(table)
            if problem:
                problems.append(problem)
                continue
            if not self._table_exists(
                self.Relation.create(schema=table.schema, identifier=table.identifier)
            ):
                problems.append(
                    f"{table.model} has no table yet ({table.name}): run it first, or select "
                    "without it."
                )
                continue
            problem = maintenance.ownership_problem(self._session_rows, table, warehouse)
            if problem:
                problems.append(problem)
        return problems

    @available
    def maintain_table(self, spec: dict, retain: str, dry_run: bool) -> dict:
        """Maintain one table, or say what would be done (maintenance.py): its record for
        `lakehouse maintain`'s report."""
        table = maintenance.Table(spec["schema"], spec["identifier"], spec["format"], spec["model"])
        hours = maintenance.parse_retain(retain)
        return maintenance.maintain(self._session_rows, table, hours, dry_run)

    @available
    def create_first_load(self, sql: str, relation: BaseRelation) -> str:
        """Run a first load's CREATE TABLE (idempotent_merge_create_sql): '' once created.
        When the format refuses it because another run is creating or created the table (two
        first loads at once: errors.py, FIRST_LOAD_CONFLICTS), 'exists' as soon as that table
        is there (the strategy then merges into it), after trying again for a few seconds
        (conflicts.ATTEMPTS) while it is not; then what happened, for the strategy's refusal.
        Any other error is raised as it is."""
        for attempt in range(1, conflicts.ATTEMPTS + 1):
            met = self._execute_unless(sql, errors.first_load_conflict)
            if met is None:
                return ""
            happened, text = met
            errors.logger.debug(f"first load of {relation} met another run's: {text}")
            if self._table_exists(relation):
                return "exists"
            if attempt == conflicts.ATTEMPTS:
                return happened
            time.sleep(conflicts.pause(attempt))
        raise AssertionError("unreachable: the last attempt returns")

    def _execute_unless(
        self, sql: str, classify: Callable[[str], str | None]
    ) -> tuple[str, str] | None:
        """Run sql: None once it ran; (what classify names the error, the error's text) when
        the statement failed with an error classify names (another writer's commit or
        create); any other error is raised as it is."""
        try:
            self.execute(sql)
        except DbtRuntimeError as error:
            name = classify(str(error))
            if name is None:
                raise
            return name, str(error)
        return None

    def _table_exists(self, relation: BaseRelation) -> bool:
        """The metastore names the table now (show tables: names only, no cache)."""
        sql = f"show tables in {relation.schema} like '{relation.identifier}'"
        _, table = self.execute(sql, fetch=True)
        return any(not row[2] for row in table.rows)

    @available
    def merge_attempts(self) -> int:
        """How many times idempotent_merge plans and merges an interval whose commit another
        writer beat (conflicts.py)."""
        return conflicts.ATTEMPTS

    @available
    def commit_merge(self, relation: str, sql: str, attempt: int) -> str:
        """Run idempotent_merge's MERGE: '' once committed. When the format refuses the commit
        because another writer committed first (conflicts.py), the conflict's name, after
        logging the attempt and a short random wait, so the strategy plans again; on the
        last attempt, an error saying so. Any other error is raised at once."""
        met = self._execute_unless(sql, conflicts.conflict)
        if met is None:
            return ""
        name, text = met
        if attempt >= conflicts.ATTEMPTS:
            raise DbtRuntimeError(conflicts.gave_up(relation, name, text))
        errors.logger.debug(f"the concurrent commit, as the format reported it: {text}")
        return self.met_concurrent_commit(relation, attempt, name)

    @available
    def ledger_clock(self) -> str:
        """Now, UTC, as ISO-8601 text: the moment a create begins (record_interval's since)."""
        return datetime.now(UTC).isoformat()

    @available
    def audit_branch(self) -> str:
        """The Iceberg branch a change staged now by this invocation goes to (audit/branches.py)."""
        return branches.branch_name(get_invocation_id(), datetime.now(UTC))

    @available
    def audit_leftover(self, branch: str) -> bool:
        """Whether a branch of a table is a killed build's leftover to discard
        (audit/branches.py: another invocation's, 12 hours old or more)."""
        return branches.leftover(branch, get_invocation_id(), datetime.now(UTC))

    @available
    def execute_retrying(self, sql: str) -> str:
        """Run a statement that commits whole and can simply run again when another writer's
        commit beat it (conflicts.retrying): an Iceberg audit branch made or dropped, the MERGE
        into this run's own branch from its pinned change set. Under runs at once on one table
        Iceberg refused such a commit (`CommitFailedException: Table metadata refresh is
        required`). Returns ''."""
        conflicts.retrying(lambda: self.execute(sql))
        return ""

    @available
    def publish_commit(self, sql: str) -> str:
        """Run an audited stage's publishing statement (lakehouse_publish_audited): '' once
        committed; when another writer committed since the stage (conflicts.publish_conflict),
        what showed it, so the stage is audited again on the table as it now is. Any other
        error is raised."""
        met = self._execute_unless(sql, conflicts.publish_conflict)
        if met is None:
            return ""
        errors.logger.debug(f"the publish met another writer's commit: {met[1]}")
        return met[0]

    @available
    def met_concurrent_commit(self, relation: str, attempt: int, name: str) -> str:
        """Log that this attempt met another writer's commit (name: what showed it), wait a
        short random while, and return name."""
        errors.logger.info(conflicts.attempt_line(relation, attempt, name))
        time.sleep(conflicts.pause(attempt))
        return name

    @available
    def conflict_note(self, attempt: int) -> str:
        """What the model's log line says of a commit made on a later attempt."""
        return conflicts.committed_note(attempt)

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
