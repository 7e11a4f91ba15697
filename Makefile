# Quick start: `make demo` (install, ingest the sample dump, dbt build, print a summary) and
# `make test` (install, run every test). Both install what they need into .venv first.
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
KAFKA_PORT ?= 19092
KAFKA_LAKE ?= lake-kafka
LIVE_LAKE ?= lake-live
LIVE_ARGS ?=
CI_LAKE ?= lake-ci
CI_DUMP ?= $(SAMPLE_DUMP)
METASTORE_DIR ?= $(or $(CDC_LAKE_DIR),lake)/metastore_pg
export DBT_SEND_ANONYMOUS_USAGE_STATS := false
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: install demo ingest build docs test lint clean kafka-broker demo-kafka bench \
	spark-cluster spark-cluster-stop spark-cluster-status metastore metastore-stop demo-live \
	postgresql-packages

install: $(STAMP)

# The grep drops a notice that some machines' pip configuration prints once per package;
# pipefail keeps pip's own exit status.
$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]' \
		2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
	touch $(STAMP)

## demo: ingest the bundled sample dump, build every model, print rows per layer and gold rows
demo: install
	$(BIN)/python -m ingest --dump $(SAMPLE_DUMP)
	$(DBT) build $(DBT_ARGS)
	$(BIN)/python -m cdc_lakehouse.summary

ingest: install
	$(BIN)/python -m ingest --dump $(SAMPLE_DUMP)

build: install
	$(DBT) build $(DBT_ARGS)

docs: install
	$(DBT) docs generate $(DBT_ARGS)

## test: lint, then every pytest test (unit, ingest, dbt build on the fixtures, the sample dump
## end to end on a Spark standalone cluster of this machine, the live demo on a shared
## PostgreSQL metastore; installs PostgreSQL from Debian when missing)
test: install postgresql-packages
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

## bench: throughput per format and stage against baselines, and incremental cost growth
## (not part of `make test`; about 20 minutes on 2 cores; flags: BENCH_ARGS="--changes 50000";
## more parts: BENCH_ARGS="--part ingest" or "--part tables", see README "Benchmark")
bench: install
	$(BIN)/python -m cdc_lakehouse.bench $(BENCH_ARGS)

## ci-changed: slim CI (README "Slim CI"): build and test only the models a change modified and
## their children, on a fresh lake $(CI_LAKE) (emptied first) with $(CI_DUMP) ingested, against
## the production manifest in STATE (a directory holding manifest.json): first the unmodified
## models and seeds they read (no tests), then
## `dbt build --select state:modified+ --defer --state $(STATE) --full-refresh`
ifneq ($(filter ci-changed,$(MAKECMDGOALS)),)
ifeq ($(wildcard $(STATE)/manifest.json),)
$(error ci-changed: no manifest.json in STATE='$(STATE)': pass STATE=<directory holding the production manifest.json>)
endif
ifneq ($(CDC_METASTORE_JDBC_URL),)
$(error ci-changed: builds its own lake $(CI_LAKE) on the embedded metastore; unset CDC_METASTORE_JDBC_URL (the build would replace that metastore's tables of the changed models))
endif
endif
.PHONY: ci-changed
ci-changed: install
	rm -rf $(CI_LAKE)
	CDC_LAKE_DIR=$(CI_LAKE) $(BIN)/python -m ingest --dump $(CI_DUMP)
	CDC_LAKE_DIR=$(CI_LAKE) $(DBT) build $(DBT_ARGS) --select @state:modified \
		--exclude state:modified+ --exclude-resource-type test --exclude-resource-type unit_test \
		--state $(STATE)
	CDC_LAKE_DIR=$(CI_LAKE) $(DBT) build $(DBT_ARGS) --select state:modified+ --defer \
		--state $(STATE) --full-refresh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	[ ! -x $(BIN)/python ] || $(BIN)/python -m cdc_lakehouse.cluster stop
	rm -rf lake target logs

## spark-cluster: a Spark standalone master and 2 workers (1 core, 2g each) from the pyspark
## wheel on 127.0.0.1 (master port 7077, web UI 8080), left running; prints the master URL:
## `export CDC_SPARK_MASTER=spark://127.0.0.1:7077` runs ingest, dbt and the summary on it.
## Logs and work dirs in $$CDC_LAKE_DIR/cluster (default lake/cluster). Flags, e.g.
## SPARK_CLUSTER_ARGS="--port 0 --webui-port 0 --worker-memory 3g" (0: any free port)
spark-cluster: install
	$(BIN)/python -m cdc_lakehouse.cluster start $(SPARK_CLUSTER_ARGS)

## spark-cluster-stop: stop the cluster of `make spark-cluster` (workers, then the master)
spark-cluster-stop: install
	$(BIN)/python -m cdc_lakehouse.cluster stop

spark-cluster-status: install
	$(BIN)/python -m cdc_lakehouse.cluster status

## kafka-broker: a local Kafka-protocol broker (Tansu, in-memory) on 127.0.0.1:$(KAFKA_PORT) until Ctrl-C
kafka-broker: install
	$(BIN)/python -m cdc_lakehouse.kafka.broker --port $(KAFKA_PORT)

## demo-kafka: local broker, produce the sample dump, ingest from Kafka into $(KAFKA_LAKE), dbt build, summary
demo-kafka: install
	$(BIN)/python -m cdc_lakehouse.kafka.broker --port $(KAFKA_PORT) & broker=$$!; \
	trap 'kill $$broker; wait $$broker' EXIT; \
	sleep 1; \
	$(BIN)/python -m cdc_lakehouse.kafka.produce --bootstrap-servers 127.0.0.1:$(KAFKA_PORT) \
		--dump $(SAMPLE_DUMP) && \
	CDC_LAKE_DIR=$(KAFKA_LAKE) $(BIN)/python -m ingest --bootstrap-servers 127.0.0.1:$(KAFKA_PORT) && \
	CDC_LAKE_DIR=$(KAFKA_LAKE) $(DBT) build $(DBT_ARGS) && \
	CDC_LAKE_DIR=$(KAFKA_LAKE) $(BIN)/python -m cdc_lakehouse.summary

# Debian's PostgreSQL server and JDBC driver, installed when missing (root, or sudo).
postgresql-packages:
	@dpkg -s postgresql libpostgresql-jdbc-java >/dev/null 2>&1 || { \
		echo "installing postgresql and libpostgresql-jdbc-java (apt-get)"; \
		$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
		$(if $(filter 0,$(shell id -u)),,sudo) env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq postgresql libpostgresql-jdbc-java >/dev/null; }

## metastore: a PostgreSQL-backed Hive metastore for the lake (shared by ingest, dbt, readers);
## prints the export lines, also written to $(METASTORE_DIR)/metastore.env: source that file
metastore: install postgresql-packages
	$(BIN)/python -m cdc_lakehouse.metastore_server start --dir $(METASTORE_DIR)

metastore-stop: install
	$(BIN)/python -m cdc_lakehouse.metastore_server stop --dir $(METASTORE_DIR)

## demo-live: broker + live stream + continuous ingest + a dbt build every minute + a reader of
## gold, on a shared metastore in $(LIVE_LAKE) (emptied first); checks gold against the oracle
## (about 7 minutes; LIVE_ARGS="--duration 120 --rate 200 --build-interval 45")
demo-live: install postgresql-packages
	$(BIN)/python -m cdc_lakehouse.live --lake $(LIVE_LAKE) $(LIVE_ARGS)
