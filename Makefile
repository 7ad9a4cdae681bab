# One Makefile for people, CI and hooks. Every target installs what it needs first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test lint format check
.DEFAULT_GOAL := check

# The environment is rebuilt only when the locked requirements or the project metadata change.
$(STAMP): requirements/dev.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --quiet --disable-pip-version-check -r requirements/dev.lock
	$(BIN)/python -m pip install --quiet --quiet --disable-pip-version-check --no-deps -e .
	touch $@

install: $(STAMP)

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
