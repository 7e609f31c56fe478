"""dbt-spark's tests/functional/adapter/test_basic.py and empty/test_empty.py: dbt's basic
adapter classes, on the lakehouse adapter's target format.

Classes whose outcome cannot depend on the table format run in one pass (support/passes.py):
data tests and singular tests are queries over seeds, ephemeral models are CTEs inlined into the
models that use them, `--empty` renders `limit 0` at compile time, and the check strategy of a
snapshot differs from the timestamp strategy only in the query that finds changed rows (the
snapshot's MERGE is the same). The seeds and tables these classes write are written the same
way by the classes that run on both formats (TestSimpleMaterializations, TestIncremental,
TestSnapshotTimestamp, TestBaseAdapterMethod's columns).
"""

import pytest
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.empty.test_empty import (
    BaseTestEmpty,
    BaseTestEmptyInlineSourceRef,
    BaseTestEmptySeedFlag,
)

# the pass with less of dbt Labs' suite (the Delta pass also runs the unique-key classes)
ONCE_IN = "local_iceberg"


class TestSimpleMaterializations(BaseSimpleMaterializations):
    pass


@pytest.mark.format_independent(run_in=ONCE_IN)
class TestSingularTests(BaseSingularTests):
    pass


@pytest.mark.format_independent(run_in=ONCE_IN)
class TestSingularTestsEphemeral(BaseSingularTestsEphemeral):
    pass


@pytest.mark.format_independent(run_in=ONCE_IN)
class TestEmpty(BaseEmpty):
    pass


@pytest.mark.format_independent(run_in=ONCE_IN)
class TestEphemeral(BaseEphemeral):
    pass


class TestIncremental(BaseIncremental):
    pass


@pytest.mark.format_independent(run_in=ONCE_IN)
class TestGenericTests(BaseGenericTests):
    pass


@pytest.mark.format_independent(run_in=ONCE_IN)
class TestSnapshotCheckCols(BaseSnapshotCheckCols):
    pass


class TestSnapshotTimestamp(BaseSnapshotTimestamp):
    pass


class TestBaseAdapterMethod(BaseAdapterMethod):
    pass


@pytest.mark.format_independent(run_in=ONCE_IN)
class TestEmptyRun(BaseTestEmpty):
    pass


@pytest.mark.format_independent(run_in=ONCE_IN)
class TestEmptyInlineSourceRef(BaseTestEmptyInlineSourceRef):
    pass


NO_SEED_EMPTY = "`dbt seed --empty` does not exist in dbt-core 1.11 (No such option '--empty')"


@pytest.mark.format_independent(run_in=ONCE_IN)
class TestEmptySeedFlag(BaseTestEmptySeedFlag):
    @pytest.mark.skip(reason=NO_SEED_EMPTY)
    def test_seed_empty_creates_table_with_zero_rows(self, project):
        pass

    @pytest.mark.skip(reason=NO_SEED_EMPTY)
    def test_seed_empty_preserves_column_types(self, project):
        pass

    @pytest.mark.skip(reason=f"{NO_SEED_EMPTY}: `dbt build --empty` loads the seed's rows")
    def test_build_empty_with_seed(self, project):
        pass
