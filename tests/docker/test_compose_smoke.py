"""Smoke test of the composed stack (compose.yaml) with testcontainers' DockerCompose.

Runs wherever a Docker engine and the `docker compose` plugin are reachable: builds the images,
brings the stack up on a throw-away project name with free loopback ports, waits (bounded) for
every service's /health, opens an MCP session over streamable HTTP with the agent token from
the `secrets` volume, and tears everything down with its volumes. Where no engine is reachable
(this project's CI machines) it is skipped with the reason — it never hangs probing.

NOTE: this folder must not get an ``__init__.py``: tests/ is on sys.path and a *package* named
``docker`` there would shadow the Docker SDK that testcontainers imports.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from harness import free_port  # noqa: E402

HEALTH_IN_CONTAINER = {  # service -> its health URL inside its own container
    "world-host": "http://127.0.0.1:8765/health",
    "planner": "http://127.0.0.1:8791/health",
    "journal": "http://127.0.0.1:8792/health",
    "camera-worker": "http://127.0.0.1:8794/health",
    "bridge": "http://127.0.0.1:8787/health",
}
STACK_TIMEOUT_S = 300  # after the images are built
PROBE_TIMEOUT_S = 2.0


def _ping(endpoint: str) -> bool:
    """GET /_ping on a Docker engine endpoint (unix:// or tcp://), bounded by PROBE_TIMEOUT_S."""
    u = urlparse(endpoint)
    try:
        if u.scheme == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(PROBE_TIMEOUT_S)
            sock.connect(u.path)
        elif u.scheme == "tcp":
            sock = socket.create_connection((u.hostname, u.port or 2375), timeout=PROBE_TIMEOUT_S)
            if os.environ.get("DOCKER_TLS_VERIFY"):
                sock.close()
                return True  # TLS endpoint accepts connections; the compose call will tell more
        else:
            return False
        with sock:
            sock.sendall(b"GET /_ping HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n")
            return b" 200 " in sock.recv(256)
    except OSError:
        return False


def docker_engine() -> tuple[str | None, str]:
    """(engine endpoint, "") when usable, else (None, the reason to skip)."""
    docker = shutil.which("docker")
    if docker is None:
        return None, "no docker client is installed"
    if os.environ.get("DOCKER_HOST"):
        candidates = [os.environ["DOCKER_HOST"]]
    else:
        candidates = ["unix:///var/run/docker.sock"]
        if os.environ.get("XDG_RUNTIME_DIR"):
            candidates.append(f"unix://{os.environ['XDG_RUNTIME_DIR']}/docker.sock")
        candidates.append(f"unix://{Path.home()}/.docker/run/docker.sock")
    endpoint = next((c for c in candidates if _ping(c)), None)
    if endpoint is None:
        return None, f"no Docker engine is reachable (tried {', '.join(candidates)})"
    try:
        r = subprocess.run([docker, "compose", "version"], capture_output=True, timeout=20,
                           env={**os.environ, "DOCKER_HOST": endpoint})
    except (OSError, subprocess.TimeoutExpired):
        return None, "`docker compose version` did not answer"
    if r.returncode != 0:
        return None, "a Docker engine is reachable but the `docker compose` plugin is not installed"
    return endpoint, ""


def _until(pred: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(1.0)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")


@pytest.mark.docker
@pytest.mark.timeout(2400)
def test_composed_stack_is_healthy_and_speaks_mcp(monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint, reason = docker_engine()
    if endpoint is None:
        pytest.skip(reason)
    from testcontainers.compose import DockerCompose  # imported only where an engine exists

    bridge_port, world_port = free_port(), free_port()
    monkeypatch.setenv("DOCKER_HOST", endpoint)
    monkeypatch.setenv("COMPOSE_PROJECT_NAME", f"mcb-smoke-{uuid.uuid4().hex[:8]}")
    monkeypatch.setenv("MCB_BRIDGE_PUBLISH_PORT", str(bridge_port))
    monkeypatch.setenv("MCB_WORLD_HOST_PUBLISH_PORT", str(world_port))
    monkeypatch.delenv("MCB_ALLOW_LOCAL_AUTOMATION", raising=False)

    # --detach, not --wait: the one-shot secrets-init exits by design, and our own bounded
    # waits below say which service did not become healthy.
    stack = DockerCompose(ROOT, compose_file_name="compose.yaml", build=True, wait=False,
                          keep_volumes=False)
    try:
        stack.start()
        health: dict[str, dict[str, Any]] = {}

        def service_ok(name: str) -> bool:
            code = ("import sys, urllib.request; "
                    f"sys.stdout.write(urllib.request.urlopen('{HEALTH_IN_CONTAINER[name]}', timeout=4).read().decode())")
            try:
                out, _err, rc = stack.exec_in_container(["python", "-c", code], service_name=name)
            except Exception:  # noqa: BLE001 - container not running yet
                return False
            if rc != 0:
                return False
            health[name] = json.loads(out)
            return True

        for name in ("world-host", "planner", "journal", "camera-worker", "bridge"):
            _until(lambda n=name: service_ok(n), STACK_TIMEOUT_S, f"{name} /health")
        assert health["camera-worker"]["worker_state"] == "no_driver"
        assert health["camera-worker"]["redis"] == {"ok": True}
        out, _err, rc = stack.exec_in_container(["redis-cli", "ping"], service_name="redis")
        assert rc == 0 and out.strip() == "PONG"

        # published ports answer on loopback
        for port in (world_port, bridge_port):
            r = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)
            assert r.status_code == 200, r.text

        # the agent token is in the secrets volume (0600, not root), never in the image or env
        token, _err, rc = stack.exec_in_container(["cat", "/secrets/agent.token"], service_name="bridge")
        assert rc == 0 and len(token.strip()) >= 40
        out, _err, _rc = stack.exec_in_container(["stat", "-c", "%a %u", "/secrets/agent.token"],
                                                 service_name="bridge")
        assert out.split() == ["600", "10001"]
        env_out, _err, _rc = stack.exec_in_container(["env"], service_name="bridge")
        assert token.strip() not in env_out

        url = f"http://127.0.0.1:{bridge_port}/mcp"
        assert httpx.post(url, json={}, timeout=10).status_code == 401
        asyncio.run(asyncio.wait_for(_mcp_initialize(url, token.strip()), 60))
    except BaseException:
        try:
            out, err = stack.get_logs()
            print(out[-20000:], err[-5000:], sep="\n")
        except Exception:  # noqa: BLE001 - logs are best effort
            pass
        raise
    finally:
        stack.stop(down=True)


async def _mcp_initialize(url: str, token: str) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(url, http_client=http)) as client:
        assert client.server_info is not None
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"project_context", "region_inspect", "build_prepare", "build_apply",
                "operation_status"} <= names
        ctx = await client.call_tool("project_context", {})
        assert ctx.is_error is not True
        assert (ctx.structured_content or {}).get("project", {}).get("project_id") == "default"


def test_engine_probe_is_bounded_and_says_why() -> None:
    """The probe answers quickly with a reason on a machine without an engine."""
    start = time.monotonic()
    endpoint, reason = docker_engine()
    assert time.monotonic() - start < 3 * PROBE_TIMEOUT_S + 25
    assert (endpoint is None) == bool(reason)
    assert not _ping("unix:///nonexistent/docker.sock")
    assert not _ping("ftp://example.invalid")
    # this folder must stay a non-package, or it would shadow the Docker SDK
    import docker as sdk
    assert hasattr(sdk, "from_env"), f"`import docker` found {sdk!r}, not the Docker SDK"
