"""dbt-spark's tests/functional/adapter/incremental/: unique key, merge_exclude_columns,
incremental_predicates and on_schema_change, with dbt-spark's strategies, on the target format.

dbt-spark skips most of these for its spark_session profile only because its session CI has no
Delta jars (`ClassNotFoundException: delta.DefaultSource`); the lakehouse targets have them, so
they run here. Every class uses the target's format instead of dbt-spark's fixed delta (merge)
or parquet (insert_overwrite).
"""

import pytest
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
)
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChangeSetup,
)
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.util import check_relations_equal, run_dbt
from support.passes import SOAK

# dbt-spark's model for the predicate classes: bigint ids, so that the seed and the model agree
SPARK_INCREMENTAL_PREDICATES_SQL = """
{{ config(
    materialized = 'incremental',
    unique_key = 'id'
) }}

{% if not is_incremental() %}

select cast(1 as bigint) as id, 'hello' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'goodbye' as msg, 'red' as color

{% else %}

-- merge will not happen on the above record where id = 2, so new record will fall to insert
select cast(1 as bigint) as id, 'hey' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'yo' as msg, 'green' as color
union all
select cast(3 as bigint) as id, 'anyway' as msg, 'purple' as color

{% endif %}
"""


# dbt-spark skips the class too (for its spark_session profile)
ANSI_DATE_INSERTS = (
    "Spark 4's ANSI store assignment refuses the suite's insert of the string '2022-02-14' into "
    "the DATE column of an Iceberg table (INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST); "
    "Delta casts it"
)


# dbt-spark's merge strategy by every kind of unique key: 12 tests, about 70 s of the Delta
# pass. `make test` runs the idempotent_merge twin (TestUniqueKeyIdempotentMerge, both formats)
# and dbt-spark's merge through this adapter's materialization in the classes below; `make soak`
# this one too.
@pytest.mark.skip_format("iceberg", reason=ANSI_DATE_INSERTS)
@pytest.mark.skipif(not SOAK, reason="make soak: dbt-spark's merge by every kind of unique key")
class TestUniqueKey(BaseIncrementalUniqueKey):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "merge"}}


class TestMergeExcludeColumns(BaseMergeExcludeColumns):
    pass


class TestIncrementalPredicatesMerge(BaseIncrementalPredicates):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+incremental_predicates": ["dbt_internal_dest.id != 2"],
                "+incremental_strategy": "merge",
            }
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {"delete_insert_incremental_predicates.sql": SPARK_INCREMENTAL_PREDICATES_SQL}


class TestPredicatesMerge(BaseIncrementalPredicates):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+predicates": ["dbt_internal_dest.id != 2"],
                "+incremental_strategy": "merge",
            }
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {"delete_insert_incremental_predicates.sql": SPARK_INCREMENTAL_PREDICATES_SQL}


class IncrementalOnSchemaChangeIgnoreFail(BaseIncrementalOnSchemaChangeSetup):
    """dbt-spark's: ignore and fail, for the strategies that cannot add columns."""

    def test_run_incremental_ignore(self, project):
        select = "model_a incremental_ignore incremental_ignore_target"
        self.run_twice_and_assert(
            select, "incremental_ignore", "incremental_ignore_target", project
        )

    def test_run_incremental_fail_on_schema_change(self, project):
        select = "model_a incremental_fail"
        run_dbt(["run", "--models", select, "--full-refresh"])
        results_two = run_dbt(["run", "--models", select], expect_pass=False)
        assert "Compilation Error" in results_two[1].message


class TestAppendOnSchemaChange(IncrementalOnSchemaChangeIgnoreFail):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "append"}}


class TestInsertOverwriteOnSchemaChange(IncrementalOnSchemaChangeIgnoreFail):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+partition_by": "id",
                "+incremental_strategy": "insert_overwrite",
            }
        }


class MergeOnSchemaChange(BaseIncrementalOnSchemaChangeSetup):
    """dbt-spark's TestDeltaOnSchemaChange: new columns are added, a removed column is refused
    with a compilation error (neither Delta nor Iceberg tables drop columns through dbt-spark)."""

    def run_incremental_sync_all_columns(self, project):
        select = "model_a incremental_sync_all_columns incremental_sync_all_columns_target"
        run_dbt(["run", "--models", select, "--full-refresh"])
        results = run_dbt(["run", "--models", select], expect_pass=False)
        assert "Compilation Error" in results[1].message

    def run_incremental_sync_remove_only(self, project):
        select = "model_a incremental_sync_remove_only incremental_sync_remove_only_target"
        run_dbt(["run", "--models", select, "--full-refresh"])
        results = run_dbt(["run", "--models", select], expect_pass=False)
        assert "Compilation Error" in results[1].message

    def test_run_incremental_append_new_columns(self, project):
        self.run_incremental_append_new_columns(project)

    def test_run_incremental_sync_all_columns(self, project):
        self.run_incremental_sync_all_columns(project)
        self.run_incremental_sync_remove_only(project)


class TestMergeOnSchemaChange(MergeOnSchemaChange):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "merge", "+unique_key": "id"}}


# dbt-spark's special-character fixtures: a keyword and a dash in column names
MODEL_A_SPECIAL_CHARS_SQL = """
{{
    config(materialized='table')
}}

with source_data as (

    select 1 as id, 'bbb' as `select`, 111 as `field-with-dash`
    union all select 2 as id, 'ddd' as `select`, 222 as `field-with-dash`
    union all select 3 as id, 'fff' as `select`, 333 as `field-with-dash`
    union all select 4 as id, 'hhh' as `select`, 444 as `field-with-dash`
    union all select 5 as id, 'jjj' as `select`, 555 as `field-with-dash`
    union all select 6 as id, 'lll' as `select`, 666 as `field-with-dash`

)

select id
       ,`select`
       ,`field-with-dash`

from source_data
"""

INCREMENTAL_APPEND_NEW_SPECIAL_CHARS_SQL = """
{{
    config(
        materialized='incremental',
        unique_key='id',
        on_schema_change='append_new_columns'
    )
}}

WITH source_data AS (SELECT * FROM {{ ref('model_a_special_chars') }} )

{% if is_incremental() %}

SELECT id,
       `select`,
       `field-with-dash`
FROM source_data WHERE id NOT IN (SELECT id from {{ this }} )

{% else %}

SELECT id,
       `select`
FROM source_data where id <= 3

{% endif %}
"""

INCREMENTAL_APPEND_NEW_SPECIAL_CHARS_TARGET_SQL = """
{{
    config(materialized='table')
}}

with source_data as (

    select * from {{ ref('model_a_special_chars') }}

)

select id
       ,`select`
       ,CASE WHEN id <= 3 THEN NULL ELSE `field-with-dash` END AS `field-with-dash`

from source_data
"""


class AppendOnSchemaChangeSpecialChars(BaseIncrementalOnSchemaChangeSetup):
    """Two runs of the special-character models, then the incremental model equals its target
    (the models: each subclass's fixtures)."""

    def test_incremental_append_new_columns_with_special_characters(self, project):
        select = (
            "model_a_special_chars incremental_append_new_special_chars"
            " incremental_append_new_special_chars_target"
        )
        run_dbt(["run", "--models", select])
        run_dbt(["run", "--models", select])
        check_relations_equal(
            project.adapter,
            ["incremental_append_new_special_chars", "incremental_append_new_special_chars_target"],
        )


class TestAppendOnSchemaChangeSpecialChars(AppendOnSchemaChangeSpecialChars):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "append"}}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "model_a_special_chars.sql": MODEL_A_SPECIAL_CHARS_SQL,
            "incremental_append_new_special_chars.sql": INCREMENTAL_APPEND_NEW_SPECIAL_CHARS_SQL,
            "incremental_append_new_special_chars_target.sql": (
                INCREMENTAL_APPEND_NEW_SPECIAL_CHARS_TARGET_SQL
            ),
        }
