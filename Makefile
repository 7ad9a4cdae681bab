# One Makefile for people, CI and hooks. Every target installs what it needs first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed

.PHONY: install test lint format check
.DEFAULT_GOAL := check

# The environment is rebuilt only when the locked requirements or the project metadata change.
$(STAMP): requirements/dev.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --quiet --disable-pip-version-check -r requirements/dev.lock
	$(BIN)/python -m pip install --quiet --quiet --disable-pip-version-check --no-deps -e .
	touch $@

install: $(STAMP) $(NODE_STAMP)

# The CDK CLI pinned in package.json/package-lock.json, installed into node_modules/ (only when those change).
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	touch $@

# cloud assembly in cdk.out/ with the real dependencies layer (built once per lock file into .build/);
# no AWS credentials, no Docker, no lookups, no telemetry/notices/version checks.
.PHONY: synth
synth: install
	CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=true AWS_EC2_METADATA_DISABLED=true \
	JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 node_modules/.bin/cdk synth --quiet --no-notices $(SYNTH_ARGS)

test: install
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

check: lint test

# The whole system on 127.0.0.1 (docs/design.md#sandbox), e.g. `make run SANDBOX_ARGS="--port 9000"`.
.PHONY: run
run: install
	$(BIN)/route-health sandbox $(SANDBOX_ARGS)

# Benchmarks (bench/README.md): writes bench/results/latest.json and latest.md, prints the table (< 10 min).
.PHONY: bench
bench: install
	$(BIN)/python -m bench.run
