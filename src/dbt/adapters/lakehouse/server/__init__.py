"""The lakehouse server (`lakehouse serve`): one Spark application over a dbt project's warehouse
and metastore, serving Spark Connect (dbt, Python clients) and read-only Thrift JDBC (analysts).

    app.py       lock, start, banner, stop
    profile.py   the served session target, read from the project's profile by dbt
    settings.py  the server's options and Spark settings (pure)
    java/        its Java classes, compiled into the wheel (or on first start from a checkout:
                 ../java_classes.py)
"""
