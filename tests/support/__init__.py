"""Helpers shared by the tests, kept out of the shipped package (src/).

Importable as `support.*` from any test: pyproject.toml's [tool.pytest.ini_options] puts
tests/ on sys.path (pythonpath = ["tests"]).
"""
