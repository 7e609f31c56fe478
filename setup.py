"""Building the dbt-lakehouse wheel compiles the lakehouse server's Java classes into it.

The wheel then serves on a machine with a Java runtime and no JDK. The build needs a JDK (javac
on the PATH) and pyspark (the classes compile against its jars): pyproject.toml's
[build-system] requires declares pyspark, so the standard builds work in isolation
(`pip wheel .`, `pip install .`, `python -m build`), and `make wheel` builds the same wheel
without isolation, from the environment of the locked dependencies:

    pip wheel --no-build-isolation --no-deps -w dist .      (make wheel)

Whatever this file and classes.py import at the top must be the standard library or in the
build requirements (tests/unit/test_build_requirements.py).

An editable install (pip install -e .) compiles nothing: the server compiles its classes on its
first start instead (src/dbt/adapters/lakehouse/server/classes.py).
"""

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CLASSES = Path(__file__).parent / "src" / "dbt" / "adapters" / "lakehouse" / "server" / "classes.py"


class BuildWithServerClasses(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        spec = importlib.util.spec_from_file_location("lakehouse_server_classes", CLASSES)
        classes = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(classes)
        target = Path(self.build_lib) / "dbt" / "adapters" / "lakehouse" / "server"
        classes.build_jar(target / classes.JAR_NAME)


setup(cmdclass={"build_py": BuildWithServerClasses})
