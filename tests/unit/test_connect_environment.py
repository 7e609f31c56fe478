"""An embedded session refuses an environment that would make PySpark a Spark Connect client
(session/jvm.py, connect_client_problem): the run's SQL would go to another Spark."""

from __future__ import annotations

from dbt.adapters.lakehouse.session.jvm import connect_client_problem


def test_no_connect_variable_lets_the_session_start():
    assert connect_client_problem({"PATH": "/usr/bin", "SPARK_HOME": "/opt/spark"}) is None


def test_a_users_spark_remote_is_named_with_the_fix():
    assert connect_client_problem({"SPARK_REMOTE": "sc://spark.example.com:15002"}) == (
        "SPARK_REMOTE=sc://spark.example.com:15002 is set, which makes PySpark connect to a "
        "Spark Connect server instead of starting the embedded Spark this target (method: "
        "session) runs on. Unset SPARK_REMOTE for this command, or reach a lakehouse server "
        "through a target with method: connect."
    )


def test_the_mark_a_connect_client_left_in_its_environment_is_named_too():
    problem = connect_client_problem({"SPARK_CONNECT_MODE_ENABLED": "1", "SPARK_REMOTE": "sc://x"})
    assert problem.startswith("SPARK_REMOTE=sc://x, SPARK_CONNECT_MODE_ENABLED=1 is set,")
    assert "Unset SPARK_REMOTE and SPARK_CONNECT_MODE_ENABLED for this command" in problem
