# One entry point for people and CI. `make up` starts the stack; `make test` runs every check.
SHELL := /bin/bash
export PATH := $(HOME)/.local/bin:$(PATH)
UV ?= uv

.PHONY: up test check proto proto-check lint bench bootstrap status

bootstrap:
	@scripts/bootstrap.sh

up: bootstrap
	@$(UV) run --frozen mcb up

status:
	@$(UV) run --frozen mcb status

proto:
	@$(UV) run --frozen python scripts/gen_proto.py

proto-check:
	@$(UV) run --frozen python scripts/gen_proto.py --check

lint:
	@$(UV) run --frozen ruff check .

test: bootstrap proto-check
	@$(UV) run --frozen pytest -q

check: test lint
