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

# Debian's Chromium for the dashboard's browser tests (tests/e2e/test_dashboard.py drives it
# headless through the playwright Python package; no browser is ever downloaded). As root only;
# elsewhere those tests skip with the reason.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test-deps: installing chromium (apt) for the dashboard's browser tests"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
      || echo "test-deps: warning: chromium could not be installed; the dashboard's browser tests will skip" >&2
  else
    echo "test-deps: chromium is missing (apt-get install chromium as root); the dashboard's browser tests will skip" >&2
  fi
fi
