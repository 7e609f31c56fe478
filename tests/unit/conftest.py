"""`make check` runs this tree without a JVM: a test here that would start one fails at once
instead of quietly taking a minute (pyspark's gateway launcher is replaced for the session)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def no_jvm() -> None:
    from pyspark import java_gateway
    from pyspark.core import context

    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError("tests/unit runs without a JVM (make check): move this test to tests/")

    java_gateway.launch_gateway = refuse
    context.launch_gateway = refuse
