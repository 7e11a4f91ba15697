# Quick start: `make help` (or plain `make`) lists the targets; `make demo` (install, ingest the
# sample dump, dbt build, print a summary) and `make test` (install, run every test). Both
# install what they need into .venv first; `make test-unit` runs the fast tests alone.
# `make spark-cluster` starts a Spark standalone cluster on this machine to run them on
# (export the CDC_SPARK_MASTER it prints); `make spark-cluster-stop` stops it.
SHELL := bash
.SHELLFLAGS := -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DBT := $(BIN)/dbt
DBT_ARGS := --project-dir . --profiles-dir .
SAMPLE_DUMP ?= sample_data/dump
# the SQL sqlfluff checks (.sqlfluff; generic tests and macros render to nothing and are skipped)
SQL_PATHS ?= models tests/dbt
KAFKA_PORT ?= 19092
KAFKA_LAKE ?= lake-kafka
LIVE_LAKE ?= lake-live
LIVE_ARGS ?=
CI_LAKE ?= lake-ci
CI_DUMP ?= $(SAMPLE_DUMP)
# empty: the server directory $$CDC_LAKE_DIR/metastore_pg, its cluster (as root) under
# /var/lib/cdc-metastore; set: everything, the cluster included, in $(METASTORE_DIR)
METASTORE_DIR ?=
METASTORE_DIR_ARG = $(if $(METASTORE_DIR),--dir $(METASTORE_DIR))
DOCS_PORT ?= 8000
DOCS_ARGS ?=
# pytest-xdist workers of `make test` (tests/xdist_groups.py groups what shares a fixture);
# TEST_WORKERS=0 runs the tests in this one process
TEST_WORKERS ?= 2
export DBT_SEND_ANONYMOUS_USAGE_STATS := false
export SPARK_LOCAL_IP ?= 127.0.0.1
# plain `make` lists the targets (it used to run the first one, install)
.DEFAULT_GOAL := help

.PHONY: help install demo ingest build docs test test-unit lint mypy check-generated \
	pre-commit-install clean kafka-broker demo-kafka bench maintenance upgrade-lake thrift-server connect-server \
	spark-cluster spark-cluster-stop spark-cluster-status metastore metastore-stop demo-live \
	postgresql-packages docs-serve docs-screenshot docs-site chromium-packages sql-lint sql-fix conventions

## help: list the targets and their descriptions (the first line of their `## target:` comment)
help:
	@awk '/^## [^ ]/ && !block { line = substr($$0, 4); i = index(line, ": "); block = i > 0; \
		if (block) printf "  %-20s  %s", substr(line, 1, i - 1), substr(line, i + 2); next } \
		/^## / && block { more = 1; next } \
		block { print more ? " ..." : ""; block = more = 0 }' $(MAKEFILE_LIST)

## install: .venv with the pinned Python packages (requirements.lock) and the JVM libraries
install: $(STAMP)

# The grep drops a notice that some machines' pip configuration prints once per package;
# pipefail keeps pip's own exit status. Then Maven resolves the pinned JVM libraries (Delta
# Lake, Spark's Kafka source, spark-avro, the Kafka broker, the bench's AutoCDC target:
# jvm/*/pom.xml) and builds the project's exact JSON function (jvm/exact-json) into
# $(VENV)/share/cdc-lakehouse/jars (python -m cdc_lakehouse.runtime.jars; Maven's error line, exit 2,
# when one does not resolve or build).
$(STAMP): pyproject.toml requirements.lock jvm/spark/pom.xml jvm/kafka/pom.xml jvm/autocdc/pom.xml \
	jvm/exact-json/pom.xml $(wildcard jvm/exact-json/src/main/java/cdc/lakehouse/json/*.java) \
	$(wildcard src/cdc_lakehouse/formats/*/*.java)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]' \
		2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
	$(BIN)/python -m cdc_lakehouse.runtime.jars install
	touch $(STAMP)

# The examples (the bundled sample's and the tests' topics, declared keys and typed gold models:
# sample_data/seeds, sample_data/models) are switched on for the targets that run on the
# sample or the tests; CDC_EXAMPLES=false in the environment keeps them off.
demo ingest build test bench demo-kafka demo-live: export CDC_EXAMPLES ?= true

## demo: ingest the bundled sample dump, build every model, print rows per layer and gold rows
demo: install
	$(BIN)/python -m ingest --dump $(SAMPLE_DUMP)
	$(DBT) build $(DBT_ARGS)
	$(BIN)/python -m cdc_lakehouse.tools.summary

## ingest: the bundled sample dump (SAMPLE_DUMP) into the lake's bronze tables
ingest: install
	$(BIN)/python -m ingest --dump $(SAMPLE_DUMP)

## build: dbt build of every model and test on the lake
build: install
	$(DBT) build $(DBT_ARGS)

## docs: dbt docs generate (DOCS_ARGS="--empty-catalog" without a built lake)
docs: install
	$(DBT) docs generate $(DBT_ARGS) $(DOCS_ARGS)

## docs-serve: generate the dbt docs site (`make docs`, on the lake: column types need a built
## lake) and serve it on http://localhost:$(DOCS_PORT) until Ctrl-C (DOCS_PORT=8000;
## DOCS_ARGS="--empty-catalog" skips the catalog)
docs-serve: docs
	$(DBT) docs serve $(DBT_ARGS) --port $(DOCS_PORT) --no-browser

## docs-screenshot: regenerate docs/images/current_rows_lineage.png, the lineage graph of
## gold.current_rows in headless Chromium (installed from Debian when missing)
docs-screenshot: docs chromium-packages
	$(BIN)/python -m cdc_lakehouse.tools.docs_site screenshot --target-path target \
		--model current_rows --output docs/images/current_rows_lineage.png

## test: lint and the docs site, then every pytest test (unit, ingest, dbt build on the fixtures, the sample dump
## end to end on a Spark standalone cluster of this machine, the live demo on a shared
## PostgreSQL metastore, the docs site in headless Chromium; installs PostgreSQL and Chromium
## from Debian when missing)
test: install postgresql-packages chromium-packages
	$(MAKE) --no-print-directory lint check-generated docs-site
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadscope

## docs-site: build the docs site into site/ with link and anchor checks (mkdocs build --strict)
docs-site: install
	$(BIN)/mkdocs build --strict --site-dir site

## test-unit: the tests that need no Spark, JVM, dbt build, broker or metastore (marker `unit`,
## set by tests/markers.py): under 2 minutes on 2 cores; no lint
test-unit: install
	$(BIN)/python -m pytest -m unit -n $(TEST_WORKERS)

## bench: throughput per format and stage against baselines, and incremental cost growth
## (not part of `make test`; about 20 minutes on 2 cores; flags: BENCH_ARGS="--changes 50000";
## more parts: BENCH_ARGS="--part ingest" or "--part tables", see
## docs/how-to/benchmark.md "How to run the benchmark")
bench: install
	$(BIN)/python -m cdc_lakehouse.tools.bench $(BENCH_ARGS)

## ci-changed: slim CI (docs/how-to/slim-ci.md "Slim CI: build and test only what a change
## touches"): build and test only the models a change modified and their children, against the
## production manifest in STATE (a directory holding manifest.json).
## With CDC_METASTORE_JDBC_URL set (production's shared metastore and lake), on target ci:
## `dbt build --target ci --select state:modified+ --defer --favor-state --state $(STATE)` into
## the run's own schemas ci_$(CDC_CI_RUN_ID)_*, every other ref read from production's tables
## (drop them after: make drop-schemas TARGET=ci). Without it, on a fresh lake $(CI_LAKE)
## (emptied first) with $(CI_DUMP) ingested: first the unmodified models and seeds the changed
## ones read (no tests), then `dbt build --select state:modified+ --defer --state $(STATE)
## --full-refresh`
# ci-changed and dev-clone compare with the production manifest in STATE
STATE_GOALS := $(filter ci-changed dev-clone,$(MAKECMDGOALS))
ifneq ($(STATE_GOALS),)
ifeq ($(wildcard $(STATE)/manifest.json),)
$(error $(firstword $(STATE_GOALS)): no manifest.json in STATE='$(STATE)': pass STATE=<directory holding the production manifest.json>)
endif
endif
ifneq ($(filter ci-changed,$(MAKECMDGOALS)),)
ifneq ($(CDC_METASTORE_JDBC_URL),)
ifeq ($(CDC_CI_RUN_ID),)
$(error ci-changed: on a shared metastore the CI schemas are named by the run: set CDC_CI_RUN_ID (e.g. $$GITHUB_RUN_ID; letters, digits, _))
endif
endif
endif
.PHONY: ci-changed
ifneq ($(CDC_METASTORE_JDBC_URL),)
ci-changed: install
	$(DBT) build $(DBT_ARGS) --target ci --select state:modified+ --defer --favor-state \
		--state $(STATE)
else
# on a fresh lake with $(CI_DUMP) (the sample dump by default): the examples switched on
ci-changed: export CDC_EXAMPLES ?= true
ci-changed: install
	rm -rf $(CI_LAKE)
	CDC_LAKE_DIR=$(CI_LAKE) $(BIN)/python -m ingest --dump $(CI_DUMP)
	CDC_LAKE_DIR=$(CI_LAKE) $(DBT) build $(DBT_ARGS) --select @state:modified \
		--exclude state:modified+ --exclude-resource-type test --exclude-resource-type unit_test \
		--state $(STATE)
	CDC_LAKE_DIR=$(CI_LAKE) $(DBT) build $(DBT_ARGS) --select state:modified+ --defer \
		--state $(STATE) --full-refresh
endif

## dev-clone: start a dev target from production's state
## (docs/how-to/slim-ci.md "Environments: dev, CI and prod"): `dbt clone` of every model of the
## production manifest in STATE (SELECT=<dbt selection>: those) into the dev schemas (Delta
## shallow clones of tables, views of views), CDC_DEV_SCHEMA (default dev_$$USER) naming them
.PHONY: dev-clone
dev-clone: install
	$(DBT) clone $(DBT_ARGS) --target dev --state $(STATE) \
		$(if $(SELECT),--select $(SELECT),--resource-type model)

## drop-schemas: drop the schemas of TARGET=dev or TARGET=ci (every table in them; the run's
## CDC_CI_RUN_ID, the engineer's CDC_DEV_SCHEMA); production's are never dropped
ifneq ($(filter drop-schemas,$(MAKECMDGOALS)),)
ifeq ($(filter dev ci,$(TARGET)),)
$(error drop-schemas: TARGET='$(TARGET)': pass TARGET=dev or TARGET=ci (production's schemas are not dropped))
endif
endif
.PHONY: drop-schemas
drop-schemas: install
	$(DBT) run-operation drop_target_schemas $(DBT_ARGS) --target $(TARGET)

## lint: ruff, mypy, the SQL style (sqlfluff) and the project conventions (dbt-bouncer)
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MAKE) --no-print-directory mypy sql-lint conventions

## mypy: the types of src/cdc_lakehouse and ingest/ ([tool.mypy] in pyproject.toml)
mypy: install
	$(BIN)/mypy

# the tests that compare a committed generated file with what its generator writes now
GENERATED_CHECKS := \
	tests/dbt_models/formats/dts_avro/test_avro_writer.py::test_committed_sample_equals_what_the_encoder_produces_now \
	tests/dbt_models/formats/qlik/test_decoder.py::test_committed_samples_equal_the_encoders_output \
	tests/unit/test_docs_reference.py::test_tables_page_is_up_to_date \
	tests/unit/test_settings_reference.py::test_the_committed_reference_is_the_commands_output

## check-generated: fail when a generated file is stale (regenerate with the command it names):
## the dbt side of the format plug-ins, the docs' format lists and sections, the sample dumps,
## the tables and settings references
## (no install step: the pre-commit hook runs it, with what `make install` put in .venv)
check-generated:
	$(BIN)/python -m cdc_lakehouse.formats check
	$(BIN)/python -m cdc_lakehouse.tools.docs_reference formats --check
	$(BIN)/python -m pytest -q -p no:cacheprovider -o addopts= $(GENERATED_CHECKS)

## pre-commit-install: run the checks before every commit (.pre-commit-config.yaml: ruff, mypy,
## sqlfluff on the changed SQL, check-generated; `$(BIN)/pre-commit run --all-files` runs them all)
pre-commit-install: install
	$(BIN)/pre-commit install

## sql-lint: the SQL style of .sqlfluff (dbt Labs' style guide) on $(SQL_PATHS)
sql-lint: install
	$(BIN)/sqlfluff lint $(SQL_PATHS)

## sql-fix: rewrite $(SQL_PATHS) in that style (review the diff; SQL_PATHS=<files> for some)
sql-fix: install
	$(BIN)/sqlfluff fix $(SQL_PATHS)

## conventions: dbt-bouncer (dbt-bouncer.yml) on the manifest of `dbt parse` (no Spark, no lake);
## HOME: dbt-bouncer caches its check registry under ~/.cache, kept in target/ instead
conventions: install
	$(DBT) parse $(DBT_ARGS) --quiet
	HOME=$(CURDIR)/target $(BIN)/dbt-bouncer run --config-file dbt-bouncer.yml

## maintenance: OPTIMIZE and VACUUM (7 days' history kept) every Delta table of the lake
## (docs/how-to/maintenance.md "How to maintain the lake: change data feed, time travel,
## OPTIMIZE and VACUUM"); MAINTENANCE_ARGS="--retain-hours 336" keeps more
maintenance: install
	$(BIN)/python -m cdc_lakehouse.tools.maintenance $(MAINTENANCE_ARGS)

## thrift-server / connect-server: Spark's Thrift (JDBC, port 10000) or Connect (port 15002)
## server on the lake with the project's Spark configuration, until Ctrl-C
## (SERVER_ARGS="--port 10001")
thrift-server: install
	$(BIN)/python -m cdc_lakehouse.runtime.spark_server thrift $(SERVER_ARGS)

connect-server: install
	$(BIN)/python -m cdc_lakehouse.runtime.spark_server connect $(SERVER_ARGS)

## upgrade-lake: a lake built on Parquet (before Delta Lake): bronze converted in place (every
## record kept), the other tables dropped and built again by `dbt build --full-refresh`; the
## tables of renamed models (the decoding models' stg_<folder>__decoded) renamed first
upgrade-lake: install
	$(BIN)/python -m cdc_lakehouse.tools.upgrade
	$(DBT) build $(DBT_ARGS) --full-refresh

## clean: remove ./lake, target/ and logs/ (the cluster of ./lake stopped first, its metastore
## server stopped and its cluster, outside the lake as root, removed)
clean:
	[ ! -x $(BIN)/python ] || $(BIN)/python -m cdc_lakehouse.runtime.cluster stop
	[ ! -x $(BIN)/python ] || CDC_LAKE_DIR=lake $(BIN)/python -m cdc_lakehouse.runtime.metastore_server remove
	rm -rf lake target logs

## spark-cluster: a Spark standalone master and 2 workers (1 core, 2g each) from the pyspark
## wheel on 127.0.0.1 (master port 7077, web UI 8080), left running; prints the master URL:
## `export CDC_SPARK_MASTER=spark://127.0.0.1:7077` runs ingest, dbt and the summary on it.
## Logs and work dirs in $$CDC_LAKE_DIR/cluster (default lake/cluster). Flags, e.g.
## SPARK_CLUSTER_ARGS="--port 0 --webui-port 0 --worker-memory 3g" (0: any free port)
spark-cluster: install
	$(BIN)/python -m cdc_lakehouse.runtime.cluster start $(SPARK_CLUSTER_ARGS)

## spark-cluster-stop: stop the cluster of `make spark-cluster` (workers, then the master)
spark-cluster-stop: install
	$(BIN)/python -m cdc_lakehouse.runtime.cluster stop

## spark-cluster-status: whether the cluster of `make spark-cluster` runs, and its master URL
spark-cluster-status: install
	$(BIN)/python -m cdc_lakehouse.runtime.cluster status

## kafka-broker: a local Apache Kafka broker (KRaft, one node, from the Maven jars of make
## install) on 127.0.0.1:$(KAFKA_PORT) until Ctrl-C; its data in a temporary directory
kafka-broker: install
	$(BIN)/python -m cdc_lakehouse.tools.kafka.broker --port $(KAFKA_PORT)

## demo-kafka: local broker, produce the sample dump, ingest from Kafka into $(KAFKA_LAKE), dbt
## build, summary; the broker stops at the end (also on failure or Ctrl-C)
demo-kafka: install
	ready=$$(mktemp -u); \
	$(BIN)/python -m cdc_lakehouse.tools.kafka.broker --port $(KAFKA_PORT) --ready-file $$ready \
		--log $(KAFKA_LAKE)/logs/broker.log & broker=$$!; \
	trap 'kill $$broker 2>/dev/null; wait $$broker; rm -f $$ready' EXIT; \
	until [ -e $$ready ]; do kill -0 $$broker 2>/dev/null || exit 2; sleep 0.2; done; \
	$(BIN)/python -m cdc_lakehouse.tools.kafka.produce --bootstrap-servers 127.0.0.1:$(KAFKA_PORT) \
		--dump $(SAMPLE_DUMP) && \
	CDC_LAKE_DIR=$(KAFKA_LAKE) $(BIN)/python -m ingest --bootstrap-servers 127.0.0.1:$(KAFKA_PORT) && \
	CDC_LAKE_DIR=$(KAFKA_LAKE) $(DBT) build $(DBT_ARGS) && \
	CDC_LAKE_DIR=$(KAFKA_LAKE) $(BIN)/python -m cdc_lakehouse.tools.summary

## postgresql-packages: Debian's PostgreSQL server and JDBC driver, installed when missing
## (root, or sudo)
postgresql-packages:
	@dpkg -s postgresql libpostgresql-jdbc-java >/dev/null 2>&1 || { \
		echo "installing postgresql and libpostgresql-jdbc-java (apt-get)"; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq postgresql libpostgresql-jdbc-java >/dev/null; }

## chromium-packages: Debian's Chromium and its WebDriver (the docs site tests and `make
## docs-screenshot`), installed when missing (root, or sudo)
chromium-packages:
	@dpkg -s chromium chromium-driver >/dev/null 2>&1 || { \
		echo "installing chromium and chromium-driver (apt-get)"; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq chromium chromium-driver >/dev/null; }

## metastore: a PostgreSQL-backed Hive metastore for the lake (shared by ingest, dbt, readers);
## prints the export lines, also written to $$CDC_LAKE_DIR/metastore_pg/metastore.env (or
## $(METASTORE_DIR)/metastore.env): source that file. As root the cluster lives in
## /var/lib/cdc-metastore/<lake name>-<hash>, owned by the system user cdc-metastore
metastore: install postgresql-packages
	$(BIN)/python -m cdc_lakehouse.runtime.metastore_server start $(METASTORE_DIR_ARG)

## metastore-stop: stop the metastore server of `make metastore`
metastore-stop: install
	$(BIN)/python -m cdc_lakehouse.runtime.metastore_server stop $(METASTORE_DIR_ARG)

## demo-live: broker + live stream + continuous ingest + a dbt build every minute + a reader of
## gold, on a shared metastore in $(LIVE_LAKE) (emptied first); checks gold against the oracle
## (about 7 minutes; LIVE_ARGS="--duration 120 --rate 200 --build-interval 45")
demo-live: install postgresql-packages
	$(BIN)/python -m cdc_lakehouse.tools.live --lake $(LIVE_LAKE) $(LIVE_ARGS)
