# Two commands for a new user (Java 17+ and Python 3.11+ present, nothing else installed):
#   make demo   creates .venv, installs the pinned dependencies, runs every pipeline on the
#               embedded local Spark (Delta Lake) and prints the resulting tables
#   make test   installs what it needs and runs every test: ruff, sqlfluff, pytest + dbt tests
#               on Delta (target local) and on Iceberg (target local_iceberg)

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

export DBT_PROFILES_DIR := $(CURDIR)/profiles
export LAKEHOUSE_CONF_DIR := $(CURDIR)/conf
export LAKEHOUSE_HOME ?= $(CURDIR)/.lakehouse
export DBT_SEND_ANONYMOUS_USAGE_STATS := false
PYTEST_ARGS ?=

.PHONY: install java demo demo-iceberg test lint test-delta test-iceberg cluster-demo clean

$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

java: install
	@$(BIN)/python -m retry_safe.java_check

demo: java
	$(BIN)/python -m retry_safe.demo

demo-iceberg: java
	DBT_TARGET=local_iceberg $(BIN)/python -m retry_safe.demo

lint: install
	$(BIN)/ruff check src tests models
	$(BIN)/ruff format --check src tests models
	$(BIN)/sqlfluff lint models

test-delta: java
	$(BIN)/python -m pytest -q --target local $(PYTEST_ARGS)

test-iceberg: java
	$(BIN)/python -m pytest -q --target local_iceberg $(PYTEST_ARGS)

test: lint test-delta test-iceberg

cluster-demo: java
	$(BIN)/python -m retry_safe.cluster

clean:
	rm -rf .lakehouse target logs
