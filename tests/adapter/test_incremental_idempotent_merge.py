"""The incremental classes of test_incremental.py and test_python_model.py once more, with
`incremental_strategy='idempotent_merge'`, where its semantics agree with `merge`.

Where they differ by design the test is skipped with the difference next to it: idempotent_merge
needs a unique_key, refuses a source with two rows for one key instead of keeping both, and
checks the model's configuration on the first load too (merge only on the first incremental run).
"""

import pytest
from dbt.artifacts.schemas.results import RunStatus
from dbt.tests.adapter.incremental.fixtures import (
    _MODELS__A_SPECIAL_CHARS,
    _MODELS__INCREMENTAL_APPEND_NEW_SPECIAL_CHARS,
    _MODELS__INCREMENTAL_APPEND_NEW_SPECIAL_CHARS_TARGET,
)
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
    models__merge_exclude_columns_sql,
)
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.adapter.python_model.test_python_model import BasePythonIncrementalTests
from dbt.tests.util import run_dbt
from test_incremental import (
    ANSI_DATE_INSERTS,
    SPARK_INCREMENTAL_PREDICATES_SQL,
    AppendOnSchemaChangeSpecialChars,
    IncrementalOnSchemaChangeIgnoreFail,
    MergeOnSchemaChange,
)

IDEMPOTENT_MERGE = {"+incremental_strategy": "idempotent_merge"}
NEEDS_UNIQUE_KEY = (
    "idempotent_merge needs a unique_key and refuses a model without one ('unique_key is not "
    "set'); merge without a key appends, which a retry would repeat"
)
DUPLICATE_KEYS = (
    "the suite's seed has two rows for state NY: idempotent_merge refuses a source with two "
    "rows for one key (which one wins would be arbitrary), where merge's first run keeps both"
)


@pytest.mark.skip_format("iceberg", reason=ANSI_DATE_INSERTS)
class TestUniqueKeyIdempotentMerge(BaseIncrementalUniqueKey):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        # the seed's CO row has no city: a NULL key part, matched null-safely when allowed
        return {"models": {**IDEMPOTENT_MERGE, "+allow_null_keys": True}}

    def refused_on_first_load(self, model: str) -> tuple:
        """idempotent_merge checks its configuration on the first load too."""
        run_dbt(["seed", "--select", "seed", "--full-refresh"])
        result = run_dbt(["run", "--select", model, "--full-refresh"], expect_pass=False)
        return result.results[0].status, result.results[0].message

    def test__bad_unique_key(self, project):
        status, message = self.refused_on_first_load("not_found_unique_key")
        assert status == RunStatus.Error
        assert "thisisnotacolumn" in message.lower()

    def test__bad_unique_key_list(self, project):
        status, message = self.refused_on_first_load("not_found_unique_key_list")
        assert status == RunStatus.Error
        assert "thisisnotacolumn" in message.lower()

    @pytest.mark.skip(reason=NEEDS_UNIQUE_KEY)
    def test__empty_unique_key_list(self, project):
        pass

    @pytest.mark.skip(reason=NEEDS_UNIQUE_KEY)
    def test__no_unique_keys(self, project):
        pass

    @pytest.mark.skip(reason=NEEDS_UNIQUE_KEY)
    def test__empty_str_unique_key(self, project):
        pass

    @pytest.mark.skip(reason=DUPLICATE_KEYS)
    def test__one_unique_key(self, project):
        pass

    @pytest.mark.skip(reason=DUPLICATE_KEYS)
    def test__unary_unique_key_list(self, project):
        pass

    @pytest.mark.skip(reason=DUPLICATE_KEYS)
    def test__duplicated_unary_unique_key_list(self, project):
        pass


class TestMergeExcludeColumnsIdempotentMerge(BaseMergeExcludeColumns):
    @pytest.fixture(scope="class")
    def models(self):
        sql = models__merge_exclude_columns_sql.replace(
            "incremental_strategy='merge'", "incremental_strategy='idempotent_merge'"
        )
        assert "idempotent_merge" in sql
        return {"merge_exclude_columns.sql": sql}


class TestIncrementalPredicatesIdempotentMerge(BaseIncrementalPredicates):
    """dbt's alias of the target in a predicate, DBT_INTERNAL_DEST, as merge users write it."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {**IDEMPOTENT_MERGE, "+incremental_predicates": ["DBT_INTERNAL_DEST.id != 2"]}
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {"delete_insert_incremental_predicates.sql": SPARK_INCREMENTAL_PREDICATES_SQL}


class TestPredicatesIdempotentMerge(BaseIncrementalPredicates):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {**IDEMPOTENT_MERGE, "+predicates": ["dbt_internal_dest.id != 2"]}}

    @pytest.fixture(scope="class")
    def models(self):
        return {"delete_insert_incremental_predicates.sql": SPARK_INCREMENTAL_PREDICATES_SQL}


class TestOnSchemaChangeIdempotentMerge(MergeOnSchemaChange, IncrementalOnSchemaChangeIgnoreFail):
    """merge's on_schema_change behaviour (new columns added, a removed column refused), plus
    ignore and fail."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {**IDEMPOTENT_MERGE, "+unique_key": "id"}}


class TestAppendOnSchemaChangeSpecialCharsIdempotentMerge(AppendOnSchemaChangeSpecialChars):
    """dbt Labs' own special-character fixtures (a space, the reserved word select, a dash,
    dots), which dbt-spark's copy leaves out for Delta: columns added by append_new_columns,
    the new rows merged by key. On Delta such names need column mapping (the models'
    tblproperties here; docs/using.md, Column names, gives the profile setting for every table)."""

    @pytest.fixture(scope="class")
    def project_config_update(self, table_format):
        mapping = {"+tblproperties": {"delta.columnMapping.mode": "name"}}
        return {"models": {**IDEMPOTENT_MERGE, **(mapping if table_format == "delta" else {})}}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "model_a_special_chars.sql": _MODELS__A_SPECIAL_CHARS,
            "incremental_append_new_special_chars.sql": (
                _MODELS__INCREMENTAL_APPEND_NEW_SPECIAL_CHARS
            ),
            "incremental_append_new_special_chars_target.sql": (
                _MODELS__INCREMENTAL_APPEND_NEW_SPECIAL_CHARS_TARGET
            ),
        }


class TestPythonIncrementalIdempotentMerge(BasePythonIncrementalTests):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": IDEMPOTENT_MERGE}
