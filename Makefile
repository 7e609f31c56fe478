# Two commands for a new user (Java 17+ and Python 3.11+ present, nothing else installed):
#   make demo   creates .venv, installs the pinned dependencies (the Delta and Iceberg jars
#               into .jars), runs every pipeline on the embedded local Spark (Delta Lake) and
#               prints the resulting tables
#   make check  ruff, sqlfluff and the tests that need no JVM (tests/unit): budget 2 minutes
#   make test   installs what it needs, runs `make check`, then every test on Delta (target
#               local) and on Iceberg (target local_iceberg) in parallel: budget 30 minutes
#   make serve  (make serve-iceberg) one lakehouse server on the same tables (the package's
#               `lakehouse serve --target local`): dbt through Spark Connect (DBT_TARGET=server /
#               server_iceberg), analysts and BI tools through JDBC (read-only) and the Spark
#               Connect Python client; Ctrl-C stops it
#   make wheel  the dbt-lakehouse wheel (the product only) into dist/
#   make docs   generates dbt's docs site with its catalog and serves it on localhost:8080
#               (DOCS_PORT=N for another port)
#   make bench  re-merges one day of a 3M-row table on Delta, then Iceberg (each its own JVM),
#               five contenders x three cases; writes docs/benchmarks/ (BENCH_ARGS passes options,
#               e.g. BENCH_ARGS='--days 300 --label 30M --contenders idempotent_merge --no-cli';
#               --cluster runs it on a standalone master and worker of this machine, the
#               format's cluster target, on the metastore LAKEHOUSE_METASTORE_URL names)

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed
AIRFLOW_VENV := .airflow-venv
AIRFLOW_STAMP := $(AIRFLOW_VENV)/.installed

export DBT_PROFILES_DIR := $(CURDIR)/profiles
export LAKEHOUSE_HOME ?= $(CURDIR)/.lakehouse
export LAKEHOUSE_JARS_DIR ?= $(CURDIR)/.jars
export DBT_SEND_ANONYMOUS_USAGE_STATS := false
PYTEST_ARGS ?=
BENCH_ARGS ?=

.PHONY: install jars java demo demo-iceberg check test lint test-delta test-iceberg soak cluster-demo bench bench-storage bench-warm \
	serve serve-iceberg pg pg-stop s3 s3-stop docs bench-server bench-age wheel clean airflow airflow-manifest \
	airflow-demo

# The product (dbt-lakehouse, src/) and the repository's tooling (retry-safe-tools, tools/),
# both editable, over the locked dependencies; built without isolation, with the locked
# setuptools (an editable install compiles nothing, so it needs no build requirement's pyspark).
$(STAMP): pyproject.toml setup.py tools/pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e . -e tools
	touch $(STAMP)

# The Delta and Iceberg jars pinned in the package, into $(LAKEHOUSE_JARS_DIR)/<format>/ (this
# repository keeps them in .jars; a user's default is a per-user cache): downloaded and verified
# once by the package's own command, a no-op (no network) while the folders are complete.
jars: $(STAMP)
	@$(BIN)/lakehouse jars

# Airflow and Astronomer Cosmos in a virtual environment of their own, from their own lock
# (orchestration/airflow/README.md): the DAGs call the project's dbt in .venv, so neither side's
# pins constrain the other.
$(AIRFLOW_STAMP): orchestration/airflow/requirements.lock
	$(PYTHON) -m venv $(AIRFLOW_VENV)
	$(AIRFLOW_VENV)/bin/pip install --quiet --upgrade pip
	$(AIRFLOW_VENV)/bin/pip install --quiet --no-deps -r orchestration/airflow/requirements.lock
	touch $(AIRFLOW_STAMP)

airflow: $(AIRFLOW_STAMP)

# The manifest the DAGs are rendered from (orchestration/airflow/dags): `dbt parse` of the
# project, again after any change to models/, seeds/ or dbt_project.yml
airflow-manifest: install
	$(BIN)/dbt parse --target-path target/airflow

# A real Airflow (scheduler, API server; metadata and Spark metastore on a PostgreSQL server of
# its own) backfills the reference days, several runs at once, one task's dbt SIGKILLed; the
# tables, the interval ledger and the attempts checked (tools/retry_safe/airflow_demo.py).
# AIRFLOW_DEMO_ARGS: --max-active-runs N, --target local_iceberg, --no-kill, ...
AIRFLOW_DEMO_ARGS ?=
airflow-demo: java $(AIRFLOW_STAMP)
	$(BIN)/python -m retry_safe.airflow_demo $(AIRFLOW_DEMO_ARGS)

install: $(STAMP) jars

java: install
	@$(BIN)/lakehouse java

demo: java
	$(BIN)/python -m retry_safe.demo

demo-iceberg: java
	DBT_TARGET=local_iceberg $(BIN)/python -m retry_safe.demo

lint: install
	$(BIN)/ruff check src tools tests models orchestration setup.py
	$(BIN)/ruff format --check src tools tests models orchestration setup.py
	$(BIN)/sqlfluff lint models

# Everything that needs no JVM, first: a broken render or a lint error fails in a minute.
# tests/unit refuses to start a JVM (tests/unit/conftest.py).
check: lint
	$(BIN)/python -m pytest -q tests/unit

# The test passes leave out tests/unit (make check ran it) and, per pass, the format-independent
# tests that run in the other pass (tests/conftest.py). One pytest process and one JVM per pass:
# the project's tests, then dbt Labs' adapter suite (tests/adapter). PYTEST_ARGS narrows it
# (PYTEST_ARGS='-k orders', PYTEST_ARGS=tests/adapter/test_basic.py).
SPARK_PYTEST = $(BIN)/python -m pytest -q --ignore=tests/unit

test-delta: java
	$(SPARK_PYTEST) --target local $(PYTEST_ARGS)

test-iceberg: java
	$(SPARK_PYTEST) --target local_iceberg $(PYTEST_ARGS)

# make check, then Delta and Iceberg at the same time, each pytest process with its own JVM,
# warehouse and metastore; each pass's output is printed as one block when it ends (its 20
# slowest tests and its total time), then the whole run's time against its budget.
# The two virtual environments and the jars install side by side (mostly downloads and unpacking:
# 30 instead of 52 s on a fresh clone with pip's cache warm), inside the time printed.
TEST_BUDGET_MINUTES := 30
test:
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory -j2 java $(AIRFLOW_STAMP) \
	&& $(MAKE) --no-print-directory check \
	&& $(MAKE) --no-print-directory -j2 --output-sync=recurse test-delta test-iceberg; \
	status=$$?; seconds=$$(( $$(date +%s) - start )); \
	echo "make test: $$((seconds / 60))m$$((seconds % 60))s (budget $(TEST_BUDGET_MINUTES) minutes; make check's share is 2)"; \
	exit $$status

# The fault scenarios at length: 200 shuffled interval runs (SOAK_RUNS), the killed and the
# concurrent runs, the server's analysts reading eight times as often, the standalone cluster
# and dbt retry's own process after a failed audit (one format each in make test), the killed
# microbatch run, the server killed mid-run, dbt-spark's merge by every kind of unique key and
# the wheel's Iceberg project (soak only), on both formats; then
# the Airflow backfill with 3 runs at once and a killed task (make airflow-demo), on both.
SOAK_RUNS ?= 200
soak: java $(AIRFLOW_STAMP)
	SOAK_RUNS=$(SOAK_RUNS) $(BIN)/python -m pytest -q --target local \
		tests/test_interval_sequences.py tests/test_killed_runs.py tests/test_concurrent_runs.py \
		tests/test_server.py tests/test_cluster.py tests/test_microbatch.py \
		tests/test_write_audit_publish.py tests/test_package_install.py tests/test_catchup.py \
		tests/adapter/test_incremental.py
	SOAK_RUNS=$(SOAK_RUNS) $(BIN)/python -m pytest -q --target local_iceberg \
		tests/test_interval_sequences.py tests/test_killed_runs.py tests/test_concurrent_runs.py \
		tests/test_server.py tests/test_cluster.py tests/test_microbatch.py \
		tests/test_write_audit_publish.py tests/test_package_install.py tests/test_catchup.py \
		tests/adapter/test_incremental.py
	$(BIN)/python -m retry_safe.airflow_demo --max-active-runs 3
	$(BIN)/python -m retry_safe.airflow_demo --max-active-runs 3 --target local_iceberg

# The package's server for this project's embedded targets. SERVE_ARGS: --bind ADDRESS
# --connect-port N --thrift-port N (a non-loopback address needs LAKEHOUSE_SERVER_TOKEN and
# LAKEHOUSE_THRIFT_PASSWORD in the environment)
SERVE_ARGS ?=
serve: java
	$(BIN)/lakehouse serve --target local $(SERVE_ARGS)

serve-iceberg: java
	$(BIN)/lakehouse serve --target local_iceberg $(SERVE_ARGS)

# A local PostgreSQL server for a shared metastore (Debian's postgresql package, a cluster in
# .pg, 127.0.0.1 and a free port, or PG_PORT: `make pg PG_PORT=5433`, refused in one line when
# in use): prints the environment to export, then run `lakehouse metastore init` once;
# `make pg-stop` stops it. Users with their own PostgreSQL set LAKEHOUSE_METASTORE_URL, _USER
# and _PASSWORD instead.
PG_PORT ?=
pg: $(STAMP)
	@$(BIN)/python -m retry_safe.postgres start $(CURDIR)/.pg $(if $(PG_PORT),--port $(PG_PORT))

pg-stop: $(STAMP)
	@$(BIN)/python -m retry_safe.postgres stop $(CURDIR)/.pg

# A local S3-compatible server for a warehouse on object storage (S3Proxy from Maven Central,
# objects in .s3, 127.0.0.1 and a free port, or S3_PORT): prints the environment to export
# (the endpoint, a key pair, LAKEHOUSE_WAREHOUSE=s3a://lakehouse/warehouse); `make s3-stop`
# stops it. Delta on object storage also needs the PostgreSQL metastore (`make pg`).
S3_PORT ?=
s3: $(STAMP)
	@$(BIN)/python -m retry_safe.s3 start $(CURDIR)/.s3 $(if $(S3_PORT),--port $(S3_PORT))

s3-stop: $(STAMP)
	@$(BIN)/python -m retry_safe.s3 stop $(CURDIR)/.s3

# dbt's docs site: the catalog (every model's columns) read from the tables of DBT_TARGET
# (local by default; server / server_iceberg while a server runs), then served on port 8080.
DOCS_PORT ?= 8080
docs: java
	$(BIN)/dbt docs generate --target-path target/docs
	$(BIN)/dbt docs serve --target-path target/docs --host 127.0.0.1 --port $(DOCS_PORT) --no-browser

cluster-demo: java
	$(BIN)/python -m retry_safe.cluster

# matplotlib (the chart) only for the benchmark, pinned apart from requirements.lock
$(BENCH_STAMP): $(STAMP) requirements-bench.lock
	$(BIN)/pip install --quiet -r requirements-bench.lock
	touch $(BENCH_STAMP)

bench: java $(BENCH_STAMP)
	$(BIN)/python -m retry_safe.bench all $(BENCH_ARGS)

# One interval's dbt run and `lakehouse intervals` on tables holding 30, 365 and 1,000 daily
# intervals, never maintained and maintained every 30 (about 40 minutes); results.md's section.
bench-age: java $(BENCH_STAMP)
	$(BIN)/python -m retry_safe.bench.age
	$(BIN)/python -m retry_safe.bench report

# Case (b) of make bench on local disk and then in a bucket of a local S3 server (S3Proxy), both
# on one local PostgreSQL metastore, the idempotent_merge model against the hand-written job;
# the report's "On object storage" table (docs/benchmarks/results.md).
BENCH_STORAGE_ARGS ?= --contenders idempotent_merge,pyspark_job --cases b --no-mor --no-cli
bench-storage: java $(BENCH_STAMP)
	$(BIN)/python -m retry_safe.bench storage $(BENCH_STORAGE_ARGS) $(BENCH_ARGS)

# The warm path against its rival: cases (b) and (c) of make bench through one running lakehouse
# server per format, the model by `lakehouse dbt` (warm runner) against the hand-written job sent
# through Spark Connect, at 100,000 and 1,000,000 rows a day; the report's "The warm path" table.
bench-warm: java $(BENCH_STAMP)
	$(BIN)/python -m retry_safe.bench warm --label 100k $(BENCH_ARGS)
	$(BIN)/python -m retry_safe.bench warm --label 1M --rows-per-day 1000000 $(BENCH_ARGS)

# A scheduler's CLI `dbt run` of one cart interval: embedded vs through a lakehouse server, on
# Delta and Iceberg (3 runs each); writes docs/benchmarks/server.md.
bench-server: java
	$(BIN)/python -m retry_safe.bench.server

# The product's wheel: the adapter, its macros, the server (its Java classes compiled, which
# needs the JDK) and the `lakehouse` command; never the tooling in tools/. Built without
# isolation from the locked environment; `pip wheel .` and `python -m build` build the same wheel
# in isolation (pyproject.toml's [build-system] requires pyspark, which the classes compile
# against, and the same setuptools).
wheel: install
	$(BIN)/pip wheel --quiet --no-build-isolation --no-deps -w dist .
	@ls dist/dbt_lakehouse-*.whl

clean:
	rm -rf .lakehouse target logs build dist
