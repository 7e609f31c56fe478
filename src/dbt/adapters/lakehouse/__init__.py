"""The ``lakehouse`` dbt adapter: dbt-spark plus Python models in the running SparkSession.

Everything is inherited from dbt-spark (``dependencies=["spark"]``), so macros still dispatch
to ``spark__`` implementations. The only addition is the ``session`` submission method for
Python models (see ``python_submissions.py``).
"""

from dbt.adapters.base import AdapterPlugin
from dbt.adapters.lakehouse.connections import LakehouseConnectionManager, LakehouseCredentials
from dbt.adapters.lakehouse.impl import LakehouseAdapter
from dbt.include import lakehouse

Plugin = AdapterPlugin(
    adapter=LakehouseAdapter,  # type: ignore[arg-type]
    credentials=LakehouseCredentials,
    include_path=lakehouse.PACKAGE_PATH,
    dependencies=["spark"],
)

__all__ = ["LakehouseAdapter", "LakehouseConnectionManager", "LakehouseCredentials", "Plugin"]
