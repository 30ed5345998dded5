#!/usr/bin/env bash
# Tick time spent on reads while a 2,097,152-position region_read runs beside an apply, on the Java
# test host's world and server thread (budget: 5 ms per tick, shared by reads and the executor).
# Usage: bench/java-read-budget.sh [reads=3]
set -euo pipefail
cd "$(dirname "$0")/.."
paper-plugin/build.sh -pl testhost -am package -DskipTests
exec "$(paper-plugin/build.sh --print-java)" -cp paper-plugin/testhost/target/mcb-world-testhost.jar \
  dev.mcb.world.testhost.ReadBudgetBench "$@"
