"""Building the dbt-lakehouse wheel compiles the package's Java classes into it.

The wheel then serves and writes to object storage on a machine with a Java runtime and no JDK.
The build needs a JDK (javac on the PATH), pyspark (the classes compile against its jars) and
Maven Central once (the pinned delta-storage jar the storage classes compile against): pyproject.toml's
[build-system] requires declares pyspark, so the standard builds work in isolation
(`pip wheel .`, `pip install .`, `python -m build`), and `make wheel` builds the same wheel
without isolation, from the environment of the locked dependencies:

    pip wheel --no-build-isolation --no-deps -w dist .      (make wheel)

Whatever this file and java_classes.py import at the top must be the standard library or in the
build requirements (tests/unit/test_build_requirements.py).

An editable install (pip install -e .) compiles nothing: the first session that needs a bundle
compiles it instead (src/dbt/adapters/lakehouse/java_classes.py).
"""

import importlib.util
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CLASSES = Path(__file__).parent / "src" / "dbt" / "adapters" / "lakehouse" / "java_classes.py"


class BuildWithJavaClasses(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        spec = importlib.util.spec_from_file_location("lakehouse_java_classes", CLASSES)
        classes = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = classes  # its dataclasses look their module up there
        spec.loader.exec_module(classes)
        package = Path(self.build_lib) / "dbt" / "adapters" / "lakehouse"
        for bundle in classes.BUNDLES:
            target = package / bundle.folder.relative_to(classes.PACKAGE) / bundle.jar_name
            classes.build_jar(bundle, target)


setup(cmdclass={"build_py": BuildWithJavaClasses})
