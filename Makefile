# One entry point for people and CI. `make up` starts the stack; `make test` runs every check.
SHELL := /bin/bash
export PATH := $(HOME)/.local/bin:$(PATH)
UV ?= uv

.PHONY: up test check proto proto-check lint typecheck import-contract bench bootstrap status java-test test-deps

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

# ruff's linter, and its formatter in check mode (`uv run --frozen ruff format .` formats the tree)
lint:
	@$(UV) run --frozen ruff check .
	@$(UV) run --frozen ruff format --check .

# mypy over libs/ and every service under services/ ([tool.mypy] in pyproject.toml: what is checked,
# the exclusions)
typecheck:
	@$(UV) run --frozen mypy

# the journal's pure core never imports grpc/redis/httpx/mcb_rpc ([tool.importlinter] in pyproject.toml)
import-contract:
	@$(UV) run --frozen lint-imports --no-logo --no-cache  # its cache trusts file mtimes; ~1.5 s without

# The static checks; `make test` (and so CI) runs them before the tests.
check: bootstrap lint typecheck import-contract

# Java parts (paper-plugin/: core JUnit tests, the Java test host jar the conformance suite runs, the
# Paper adapter's MockBukkit tests with the vendored paper-api). Needs a JDK >= 21 and Maven (Maven
# Central only); prints surefire's counts per module; MCB_SKIP_JAVA=1 skips it explicitly.
java-test:
	@scripts/java_test.sh

test-deps:
	@scripts/test_deps.sh

test: bootstrap check test-deps proto-check java-test
	@$(UV) run --frozen pytest -q

# tests/docker: a Docker engine, the compose v2 plugin and the base images (scripts/docker_env.sh:
# as root it installs and caches what is missing; elsewhere it says why and those tests skip).
.PHONY: docker-env
docker-env:
	@scripts/docker_env.sh
test: docker-env
