"""dbt-spark's tests/functional/adapter/test_python_model.py. dbt-spark skips every class for
its spark_session profile (stock dbt-spark runs Python models on Databricks clusters only); the
lakehouse adapter runs them in the session, so they run here."""

import pytest
from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonIncrementalTests,
    BasePythonModelTests,
)
from dbt.tests.adapter.python_model.test_spark import (
    PANDAS_MODEL,
    PANDAS_ON_SPARK_MODEL,
    PYSPARK_MODEL,
    BasePySparkTests,
)
from dbt.tests.util import run_dbt

# dbt-spark's TestChangingSchemaSpark is not here: it submits with submission_method
# 'job_cluster', which creates a Databricks job cluster (a Databricks service, not Spark).


class TestPythonModel(BasePythonModelTests):
    pass


class TestPySpark(BasePySparkTests):
    @pytest.fixture(scope="class")
    def models(self):
        # koalas was merged into pyspark as pandas-on-Spark in Spark 3.2; the package does not
        # run on Spark 4 (the pandas-on-Spark model is the same DataFrame API)
        return {
            "pandas_df.py": PANDAS_MODEL,
            "pyspark_df.py": PYSPARK_MODEL,
            "pandas_on_spark_df.py": PANDAS_ON_SPARK_MODEL,
        }

    def test_different_dataframes(self, project):
        """A pandas, a PySpark and a pandas-on-Spark DataFrame model, each built as a table."""
        results = run_dbt(["run"])
        assert sorted((r.node.name, str(r.status)) for r in results) == [
            ("pandas_df", "success"),
            ("pandas_on_spark_df", "success"),
            ("pyspark_df", "success"),
        ]


class TestPythonIncrementalModel(BasePythonIncrementalTests):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {}
