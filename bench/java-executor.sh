#!/usr/bin/env bash
# The Java batch executor's own time per 512-block batch (in-memory world) and blocks/s under a
# 20 TPS scheduler. Usage: bench/java-executor.sh [rounds=400] [seconds=5]
set -euo pipefail
cd "$(dirname "$0")/.."
paper-plugin/build.sh -pl testhost -am package -DskipTests
exec "$(paper-plugin/build.sh --print-java)" -cp paper-plugin/testhost/target/mcb-world-testhost.jar \
  dev.mcb.world.testhost.ExecutorBench "$@"
