# The images of the compose stack (compose.yaml), one target per service, all built from this one
# workspace and its uv.lock. Build context: the repository root, e.g.
#   docker build --target planner -t minecraft-builder-mcp/planner:local .
# Targets: world-host, planner, journal, camera-worker, dashboard, chat (the in-game chat loop with
# its pinned ACP agent; compose service `chat`, profile "chat") and bridge (the MCP server over
# HTTP; the last stage, so a plain `docker build .` gives it).
# No token or other secret is ever copied into an image: tokens are files in the `secrets` volume
# (mounted at /secrets), created at first start by compose's secrets-init service.

ARG PYTHON_IMAGE=python:3.11-slim

# ---------------------------------------------------------------- the workspace, once
FROM ${PYTHON_IMAGE} AS build
ARG UV_VERSION=0.13.9
# Builds behind a TLS-intercepting proxy: EXTRA_CA_CERTS is PEM text (one or more certificates)
# appended to this build stage's CA bundle, which pip and uv (UV_SYSTEM_CERTS) then trust. Only the
# build stages see it; the images keep the base image's CAs. compose.yaml passes
# MCB_EXTRA_CA_CERTS (README "Docker Compose").
ARG EXTRA_CA_CERTS=""
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PYTHON=/usr/local/bin/python3.11 \
    UV_PROJECT_ENVIRONMENT=/opt/venv \
    UV_SYSTEM_CERTS=1 \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt
RUN if [ -n "$EXTRA_CA_CERTS" ]; then printf '%s\n' "$EXTRA_CA_CERTS" >> /etc/ssl/certs/ca-certificates.crt; fi \
    && pip install --no-cache-dir "uv==${UV_VERSION}"
WORKDIR /src
# The whole workspace is needed to resolve it (members libs/* and services/*); .dockerignore
# keeps tests, benchmarks, virtual environments and caches out.
COPY pyproject.toml uv.lock ./
COPY src ./src
COPY libs ./libs
COPY services ./services

# ---------------------------------------------------------------- one environment per service
FROM build AS world-host-env
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package mcb-world-host

FROM build AS planner-env
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package mcb-planner

FROM build AS journal-env
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package mcb-journal
# The admin CLI beside the journal (`docker compose exec journal mcb recovery review OP`, `mcb part
# protect`, `mcb journal stats`): src/mcb_cli's admin commands import only mcb-journal's own
# dependencies, so the root package goes in without the other services (--no-deps).
RUN --mount=type=cache,target=/root/.cache/uv \
    uv pip install --python /opt/venv/bin/python --no-deps --no-editable .

FROM build AS camera-worker-env
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package mcb-camera-worker

FROM build AS dashboard-env
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package mcb-dashboard

FROM build AS bridge-env
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable --package mcb-bridge

# The chat loop's pinned ACP agent (services/bridge/acp/package-lock.json): the native codex-acp
# binary from the npm registry, checked against the lockfile's sha512. Only the `chat` target
# builds this stage.
FROM build AS acp
# the npm registry to fetch from, as the building machine's npm is configured (compose passes
# MCB_NPM_REGISTRY; tests/docker takes it from `npm config get registry`)
ARG NPM_REGISTRY=""
COPY scripts/docker/fetch_codex_acp.py /tmp/fetch_codex_acp.py
RUN NPM_CONFIG_REGISTRY="$NPM_REGISTRY" python /tmp/fetch_codex_acp.py services/bridge/acp/package-lock.json /opt/codex-acp

# ---------------------------------------------------------------- what every image runs as
FROM ${PYTHON_IMAGE} AS runtime
RUN groupadd --system --gid 10001 mcb \
    && useradd --system --uid 10001 --gid mcb --home-dir /data --no-create-home \
       --shell /usr/sbin/nologin mcb \
    && mkdir -p /data/assets /secrets /config \
    && chown mcb:mcb /data /data/assets /secrets /config \
    && chmod 0700 /data /secrets
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    MCB_BIND_HOST=0.0.0.0 \
    MCB_RUNTIME_DIR=/data \
    MCB_SECRETS_DIR=/secrets \
    MCB_CONFIG=/config/config.json
USER mcb:mcb
WORKDIR /data

# ---------------------------------------------------------------- the services
FROM runtime AS world-host
COPY --from=world-host-env /opt/venv /opt/venv
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('MCB_WORLD_HOST_PORT', '8765'), timeout=4)"]
CMD ["mcb-world-host"]

FROM runtime AS planner
COPY --from=planner-env /opt/venv /opt/venv
EXPOSE 50061 8791
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('MCB_PLANNER_HEALTH_PORT', '8791'), timeout=4)"]
CMD ["mcb-planner"]

FROM runtime AS journal
COPY --from=journal-env /opt/venv /opt/venv
EXPOSE 50062 8792
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('MCB_JOURNAL_HEALTH_PORT', '8792'), timeout=4)"]
CMD ["mcb-journal"]

FROM runtime AS camera-worker
# The built-in renderer draws with OpenGL on a headless EGL context: Mesa's llvmpipe (CPU)
# when the container has no GPU. These are the Debian packages it needs (no X server).
USER root
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri libgbm1 \
    && rm -rf /var/lib/apt/lists/*
USER mcb:mcb
COPY --from=camera-worker-env /opt/venv /opt/venv
EXPOSE 50064 8794
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('MCB_CAMERA_HEALTH_PORT', '8794'), timeout=4)"]
CMD ["mcb-camera-worker"]

FROM runtime AS dashboard
COPY --from=dashboard-env /opt/venv /opt/venv
EXPOSE 8790
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('MCB_DASHBOARD_PORT', '8790'), timeout=4)"]
CMD ["mcb-dashboard"]

# The in-game chat loop (`/ai ...`): polls the world host's chat with the admin token, runs the
# agent, which reaches the MCP tools over stdio with the agent token. No port.
FROM runtime AS chat
COPY --from=bridge-env /opt/venv /opt/venv
COPY --from=acp /opt/codex-acp /opt/codex-acp
ENV MCB_ACP_COMMAND=/opt/codex-acp/codex-acp \
    MCB_CHAT_STATE_DIR=/data/chat
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(os.environ.get('MCB_WORLD_HOST_URL', 'http://127.0.0.1:8765') + '/health', timeout=4)"]
CMD ["mcb-bridge", "chat"]

# The default target (last): the MCP server.
FROM runtime AS bridge
COPY --from=bridge-env /opt/venv /opt/venv
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('MCB_BRIDGE_PORT', '8787'), timeout=4)"]
CMD ["mcb-bridge", "http"]
