#!/usr/bin/env bash
# The real Paper plugin under MockBukkit: executor time per 512-block batch sent over HTTP and run by
# a scheduler tick, blocks/s with ticks at 20 per second, and what MockBukkit's world costs per call;
# the restart check's ticks after a crash with ~100k unsaved positions and a 2M-position summary's disk waits
# (MockBukkitTickBench).
# Needs paper-api in the local Maven repository (paper-plugin/README.md, "Tests under MockBukkit").
# Usage: bench/paper-mockbukkit.sh [rounds=200] [seconds=5]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! v=$(paper-plugin/build.sh --paper-api); then  # installs the vendored paper-api when it is beside the checkout
  echo "paper-mockbukkit bench: skipped (paper-api $v does not resolve: not on Maven Central; see paper-plugin/README.md)"
  exit 0
fi
paper-plugin/build.sh -o -Ppaper -Dpaper.api.version="$v" -pl paper -am test -Dtest='MockBukkit*Bench' \
  -Dsurefire.failIfNoSpecifiedTests=false -Dmcb.bench=true -Dmcb.bench.rounds="${1:-200}" -Dmcb.bench.seconds="${2:-5}" \
  | grep -v '^\[[0-9:]* INFO\]\|^WARNING\|^SLF4J'
