# The two commands users need: `make demo` and `make test`. Everything installs itself.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Debian packages the project needs: a real ZooKeeper server for the tests and the dev cluster;
# a real Kubernetes node's runtime and network (containerd, runc, the CNI plugins, iptables,
# conntrack; nftables silences kube-proxy's check for it); buildah and mmdebstrap, which build the
# images without a Docker engine; gcc with libc6-dev for the pause binary.
APT_PACKAGES := zookeeper containerd runc containernetworking-plugins iptables conntrack nftables \
	buildah mmdebstrap gcc libc6-dev

.PHONY: help setup system-deps kafka kube-apiserver node images promtool spark-operator lint \
	typecheck test unit demo bench clean

help:
	@echo "make demo    show what the project does"
	@echo "make test    install everything, lint, type-check and run the whole test suite"
	@echo "make bench   print the benchmark figures beside their anchors"

system-deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg -s "$$p" >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if ! $(PYTHON) -c 'import ensurepip, venv' >/dev/null 2>&1; then missing="$$missing python3-venv"; fi; \
	command -v java >/dev/null 2>&1 || missing="$$missing openjdk-17-jre-headless"; \
	command -v mvn >/dev/null 2>&1 || missing="$$missing maven"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

# The operator, and its development tools (dev cluster, demo, dev brokers, launchers, the API
# emulator: a distribution of their own, devtools/, never in the operator's image).
$(STAMP): pyproject.toml devtools/pyproject.toml | system-deps
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]' -e ./devtools
	touch $@

# Apache Kafka's jars (the version is pinned in apache_kafka/distribution.py), through Maven into
# .kto/kafka/<version>/libs; Maven keeps its downloads in ~/.m2, so a second run downloads nothing.
kafka: $(STAMP)
	$(BIN)/python -m kto_dev.apache_kafka.distribution

setup: system-deps $(STAMP) kafka

# A real kube-apiserver and etcd, built with Go from their own modules (versions pinned in
# kube_apiserver/build.py) into ~/.cache/kafka-topic-operator: every clone on the machine shares
# one build (about 7 minutes the first time; a second run builds nothing).
kube-apiserver: $(STAMP)
	$(BIN)/python -m kto_dev.kube_apiserver.build

# A Kubernetes node's own binaries (kubelet, kube-controller-manager, kube-scheduler, kube-proxy
# from kube-apiserver's module set; CoreDNS; pause from Kubernetes' pause.c), built with Go into
# ~/.cache/kafka-topic-operator like kube-apiserver (about 4 minutes after it; then nothing).
node: kube-apiserver
	$(BIN)/python -m kto_dev.node.build

# The Dockerfile's operator and spark images without a Docker engine: buildah on a base made from
# Debian's packages with mmdebstrap, as OCI archives in ~/.cache/kafka-topic-operator/images,
# cached by the content that goes in (about 3.5 minutes the first time; nothing when unchanged).
images: $(STAMP)
	$(BIN)/python -m kto_dev.images.build

# Prometheus' promtool, for the tests of the chart's PrometheusRule: built with Go from its own
# module (version pinned in promtool/build.py) into ~/.cache/kafka-topic-operator, shared by every
# clone on the machine (about 10 minutes the first time; a second run builds nothing).
promtool: $(STAMP)
	$(BIN)/python -m kto_dev.promtool.build

# The Kubeflow Spark operator (controller and webhook), for the node's test of the
# sparkApplication engine: built with Go from its own module (version pinned in
# spark_operator/build.py) into ~/.cache/kafka-topic-operator with its CRDs, shared by every clone
# on the machine (under 2 minutes the first time; a second run builds nothing).
spark-operator: $(STAMP)
	$(BIN)/python -m kto_dev.spark_operator.build

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy
	$(BIN)/mypy bench

# The suite in TEST_WORKERS processes: many tests wait on the JVMs, servers and processes they
# start, so three workers keep two cores busy (each starts the session fixtures it needs: its own
# ZooKeeper, Kafka cluster, SparkSession). worksteal: a worker out of tests takes half of another's
# queue, so the long end-to-end tests do not leave one worker running alone at the end.
# TEST_WORKERS=0 runs the suite in this process, one test at a time.
TEST_WORKERS ?= 3

unit: setup kube-apiserver node images promtool spark-operator
	bash scripts/fetch-k8s-binaries.sh
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist worksteal

test: lint typecheck unit

demo: setup
	bash scripts/fetch-k8s-binaries.sh
	$(BIN)/python -m kto_dev.demo $(DEMO_FLAGS)

# kafka-utils' kafka-cluster-manager, the small-plan anchor, in an environment of its own: its
# pinned dependencies clash with the project's.
KCM_VENV := .kto/bench/kafka-utils
KCM := $(KCM_VENV)/bin/kafka-cluster-manager

$(KCM):
	$(PYTHON) -m venv $(KCM_VENV)
	$(KCM_VENV)/bin/python -m pip install -q kafka-utils==4.1.0

bench: setup $(KCM)
	KTO_KAFKA_CLUSTER_MANAGER=$(abspath $(KCM)) $(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist
