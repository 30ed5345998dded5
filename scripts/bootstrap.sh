#!/usr/bin/env bash
# Install what `make up` / `make test` need and is missing: uv, redis-server, the venv.
# Idempotent; safe to run on every invocation. Uses only PyPI and Debian packages.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
# The camera worker's built-in renderer: OpenGL on headless EGL (Mesa llvmpipe without a GPU).
for pkg in libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri libgbm1; do
  if command -v dpkg-query >/dev/null 2>&1; then
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
  fi
done
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: installing ${need_apt[*]} (apt-get)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
    # Debian starts a system redis on 6379; we run our own on other ports.
    (systemctl stop redis-server 2>/dev/null || service redis-server stop 2>/dev/null || true) >/dev/null 2>&1
  else
    echo "bootstrap: please install: ${need_apt[*]} (e.g. sudo apt-get install ${need_apt[*]})" >&2
    exit 1
  fi
fi

if ! command -v uv >/dev/null 2>&1; then
  echo "bootstrap: installing uv (pip)"
  python3 -m pip install --quiet --disable-pip-version-check uv 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check --user uv
  export PATH="$HOME/.local/bin:$PATH"
fi

# Java parts (paper-plugin/, `make java-test`): a JDK >= 21 and Maven 3.8+.
if ! command -v mvn >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: installing maven (apt-get)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >/dev/null
  else
    echo "bootstrap: warning: Maven is missing; make java-test needs it (e.g. sudo apt-get install maven)" >&2
  fi
fi
if ! paper-plugin/build.sh --print-java >/dev/null 2>&1; then
  echo "bootstrap: warning: no JDK >= 21 found; make java-test needs one (set MCB_JAVA_HOME, e.g. a Temurin 21/25 JDK)" >&2
fi

# The chat bridge's pinned ACP agent (codex-acp) and Codex CLI (`mcb login` only); versions locked in
# services/bridge/acp/package-lock.json.
# `npm ci` installs exactly the lockfile; the bridge starts the native binary directly (never npx).
acp=services/bridge/acp
if [ ! -f "$acp/node_modules/.package-lock.json" ] || [ "$acp/package-lock.json" -nt "$acp/node_modules/.package-lock.json" ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "bootstrap: installing the pinned codex-acp (npm ci in $acp)"
    (cd "$acp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) \
      || echo "bootstrap: warning: npm ci failed in $acp; the chat bridge needs MCB_ACP_COMMAND or a retry" >&2
  else
    echo "bootstrap: warning: npm is missing; the chat bridge's codex-acp is not installed (Node.js 20+ needed)" >&2
  fi
fi

uv sync --frozen --quiet
