"""What a lakehouse server is started with: its options, checked, and its Spark settings.

Pure (no JVM, no network), so every refusal is tested in milliseconds. The Spark settings are
the served session target's own (its profile, rendered by dbt: the same warehouse and
metastore; profile.py), plus:

    Spark Connect   spark.plugins, bound to the address and port given (always an address:
                    without one the gRPC server listens on every interface)
    HiveServer2     hive.server2.thrift.bind.host / .port, password check (CUSTOM) when one is
                    set (LAKEHOUSE_THRIFT_PASSWORD, read by the class at each login)
    read-only JDBC  the extension lakehouse.server.ReadOnlyOutsideConnect (only Spark Connect
                    operations may write) from the server's jar (java_classes.py)

An Iceberg target's defaults already turn off the session catalog's table cache
(session_settings.py), so an analyst sees another process's commit at once.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

TABLE_FORMATS = ("delta", "iceberg")
LOOPBACK_NAMES = {"localhost"}
READ_ONLY_EXTENSION = "lakehouse.server.ReadOnlyOutsideConnect"
# HiveServer2 reads the class of a CUSTOM password check from a fresh HiveConf, which sees Java
# system properties but not the session's settings: app.py sets it as a system property.
PASSWORD_CLASS = "lakehouse.server.PasswordAuthenticator"


class ServerOptionError(ValueError):
    """An option the server refuses to start with; the message names the value and the fix."""


@dataclass(frozen=True)
class ServerOptions:
    table_format: str
    bind: str = "127.0.0.1"
    connect_port: int = 15002
    thrift_port: int = 10000
    token: str = ""
    password: str = ""

    @property
    def loopback(self) -> bool:
        return is_loopback(self.bind)


def is_loopback(address: str) -> bool:
    if address in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def options_from(
    table_format: str,
    bind: str | None = None,
    connect_port: int | None = None,
    thrift_port: int | None = None,
    environ: Mapping[str, str] = os.environ,
) -> ServerOptions:
    """The options: command line first, then LAKEHOUSE_SERVER_BIND / LAKEHOUSE_CONNECT_PORT /
    LAKEHOUSE_THRIFT_PORT, then the defaults. Secrets come only from the environment
    (LAKEHOUSE_SERVER_TOKEN, LAKEHOUSE_THRIFT_PASSWORD), never from the command line, where
    any user of the machine could read them."""
    options = ServerOptions(
        table_format=table_format,
        bind=bind or environ.get("LAKEHOUSE_SERVER_BIND") or "127.0.0.1",
        connect_port=_port("connect", connect_port, environ.get("LAKEHOUSE_CONNECT_PORT"), 15002),
        thrift_port=_port("thrift", thrift_port, environ.get("LAKEHOUSE_THRIFT_PORT"), 10000),
        token=environ.get("LAKEHOUSE_SERVER_TOKEN", ""),
        password=environ.get("LAKEHOUSE_THRIFT_PASSWORD", ""),
    )
    check(options)
    return options


def _port(name: str, given: int | None, configured: str | None, default: int) -> int:
    value = given if given is not None else (configured or default)
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise ServerOptionError(
            f"The {name} port is {value!r}; give a port number from 1 to 65535 "
            f"(--{name}-port or LAKEHOUSE_{name.upper()}_PORT)."
        )
    return port


def check(options: ServerOptions) -> None:
    if options.table_format not in TABLE_FORMATS:
        raise ServerOptionError(
            f"Unknown table format {options.table_format!r}: the server serves a target whose "
            "table_format is delta or iceberg."
        )
    if options.connect_port == options.thrift_port:
        raise ServerOptionError(
            f"Spark Connect and the Thrift JDBC endpoint cannot share port "
            f"{options.connect_port}; give them different ports."
        )
    missing = [
        name
        for name, value in (
            ("LAKEHOUSE_SERVER_TOKEN", options.token),
            ("LAKEHOUSE_THRIFT_PASSWORD", options.password),
        )
        if not value
    ]
    if not options.loopback and missing:
        raise ServerOptionError(
            f"Refusing to listen on {options.bind} without authentication: anyone who can reach "
            f"that address could read and write every table. Set {' and '.join(missing)} "
            "(the Spark Connect token and the JDBC password), or bind to 127.0.0.1."
        )


def server_settings(
    options: ServerOptions, embedded: Mapping[str, str], server_jar: Path
) -> dict[str, str]:
    """The served target's settings plus the server's own (see the module docstring)."""
    settings = dict(embedded)
    extensions = [settings.get("spark.sql.extensions", ""), READ_ONLY_EXTENSION]
    classpath = [settings.get("spark.driver.extraClassPath", ""), str(server_jar)]
    settings.update(
        {
            "spark.app.name": f"lakehouse-server-{options.table_format}",
            "spark.sql.extensions": ",".join(part for part in extensions if part),
            "spark.driver.extraClassPath": ":".join(part for part in classpath if part),
            "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
            "spark.connect.grpc.binding.address": options.bind,
            "spark.connect.grpc.binding.port": str(options.connect_port),
            "spark.hadoop.hive.server2.thrift.bind.host": options.bind,
            "spark.hadoop.hive.server2.thrift.port": str(options.thrift_port),
            "spark.hadoop.hive.server2.enable.doAs": "false",
            "spark.hadoop.hive.server2.authentication": "CUSTOM" if options.password else "NONE",
        }
    )
    return settings
