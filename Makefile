# One Makefile for people, CI and hooks. Every target installs what it needs first.
SHELL := /bin/bash
# The Python `.venv` is built with: the Lambda runtime's (3.12) where the machine has it, else python3 with a
# note (.ci/runtime-python); `make install PYTHON=/path/to/python` picks another.
PYTHON ?=
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SANDBOX_STAMP := $(VENV)/.sandbox-installed
NODE_STAMP := node_modules/.installed

.PHONY: install test test-fast lint format check
.DEFAULT_GOAL := check

# The environment is rebuilt only when the locked requirements, the project metadata or the Python rule
# change; a `.venv` of another Python version than the one chosen is built anew. It comes in two steps: what
# the sandbox needs (`make run` on a new machine installs only this), then the development set on top.
$(SANDBOX_STAMP): requirements/sandbox.lock pyproject.toml .ci/runtime-python
	@python="$(PYTHON)"; python="$${python:-$$(.ci/runtime-python)}"; \
	version() { "$$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])'; }; \
	if [ -x $(BIN)/python ] && [ "$$(version $(BIN)/python)" != "$$(version "$$python")" ]; then \
	  echo "rebuilding $(VENV): it has Python $$(version $(BIN)/python), not $$(version "$$python")"; \
	  rm -rf $(VENV); \
	fi; \
	test -x $(BIN)/python || "$$python" -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --quiet --disable-pip-version-check -r requirements/sandbox.lock
	$(BIN)/python -m pip install --quiet --quiet --disable-pip-version-check --no-deps -e .
	touch $@

$(STAMP): $(SANDBOX_STAMP) requirements/dev.lock
	$(BIN)/python -m pip install --quiet --quiet --disable-pip-version-check -r requirements/dev.lock
	touch $@

install: $(STAMP) $(NODE_STAMP)

# The CDK CLI pinned in package.json/package-lock.json, installed into node_modules/ (only when those change).
$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	touch $@

# cloud assembly in cdk.out/ with the real dependencies layer (built once per lock file into .build/);
# no AWS credentials, no Docker, no lookups, no telemetry/notices/version checks. The CDK CLI runs on Node.js
# 22 or newer (scripts/cdk: the machine's, or the one `npm ci` brought), and the app's jsii with it.
.PHONY: synth
synth: install
	CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=true AWS_EC2_METADATA_DISABLED=true \
	JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 scripts/cdk synth --quiet --no-notices $(SYNTH_ARGS)

# Tests run on every core in parallel; a group's expensive session fixture (the CDK synth, a shared sandbox)
# is built once, on the worker that runs the whole group (tests/conftest.py assigns the groups).
PARALLEL := -n auto --dist loadgroup

# The whole suite (unit, adapters, integration, relay, infrastructure, e2e), with the branch coverage of
# functions/ (fails under pyproject's fail_under).
test: install
	$(BIN)/pytest $(PARALLEL) --cov=functions --cov-branch --cov-report=term-missing:skip-covered

# The pure core, the catalog, the services and the adapters: the loop to run all day (no integration tests,
# no sandbox, no synth). A quarter of the property tests' examples (tests/conftest.py); `make test` runs them all.
test-fast: install
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-route-health-fast} \
	$(BIN)/pytest $(PARALLEL) tests/unit/core tests/unit/catalog tests/unit/services tests/adapters

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
run: $(SANDBOX_STAMP)
	$(BIN)/route-health sandbox $(SANDBOX_ARGS)

# Benchmarks (bench/README.md): writes bench/results/latest.json and latest.md, prints the table (< 10 min).
.PHONY: bench
bench: install
	$(BIN)/python -m bench.run
