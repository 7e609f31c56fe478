"""`make s3`'s tool (tools/retry_safe/s3.py): S3_PORT reaches it as --port, a port in use is
refused in one line before anything is created, and what it prints to export is the standard
AWS environment plus the warehouse URL. S3Proxy is not started here (tests/test_object_storage.py
and the concurrency test start one)."""

from __future__ import annotations

import socket

from test_postgres_tool import REPOSITORY, make_pg

from retry_safe import s3


def test_s3_port_reaches_the_tool_and_its_default_is_a_free_port():
    folder = str(REPOSITORY / ".s3")
    command = make_pg("S3_PORT=9100", target="s3", tool="retry_safe.s3")
    assert command == ["-m", "retry_safe.s3", "start", folder, "--port", "9100"]
    assert make_pg(target="s3", tool="retry_safe.s3") == ["-m", "retry_safe.s3", "start", folder]


def test_a_port_in_use_is_refused_in_one_line_before_anything_is_created(capsys, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert s3.main(["start", str(tmp_path / "s3"), "--port", str(port)]) == 2
    assert capsys.readouterr().err == (
        f"make s3: port {port} on 127.0.0.1 is in use: stop what listens there, choose another "
        "(make s3 S3_PORT=N, or --port N), or leave it out for a free port.\n"
    )
    assert not (tmp_path / "s3").exists()


def test_the_environment_is_the_standard_aws_one_and_the_warehouse():
    assert s3.environment(9100, "id", "secret") == {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9100",
        "AWS_ACCESS_KEY_ID": "id",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_REGION": "us-east-1",
        "LAKEHOUSE_WAREHOUSE": "s3a://lakehouse/warehouse",
    }
