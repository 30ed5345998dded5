#!/usr/bin/env bash
# Test-only tools that must not enter the workspace's lock: amulet-core (an independent
# reader of schematics and worlds; it pins numpy < 2) in its own venv, bench/.venv-amulet.
# Idempotent. The tests that use it skip with a reason where it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=bench/.venv-amulet
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import amulet" >/dev/null 2>&1; then
  echo "test-deps: installing amulet-core 1.9.50 into $venv (independent reader for cross-checks)"
  uv venv -q -p python3.11 "$venv"
  uv pip install -q --python "$venv/bin/python" "amulet-core==1.9.50" \
    || echo "test-deps: warning: amulet-core could not be installed; its cross-checks will skip" >&2
fi
oni-mod/install_mono.sh   # mcs/mono for the ONI mod core tests (tests/oni skip without them)
