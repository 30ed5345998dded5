"""The real processes: ``python -m mcb_bridge http`` (bearer auth, /health, streamable HTTP)
and ``python -m mcb_bridge stdio`` (spawned by the SDK's stdio client), both against the
FakeJournal served from this test process on a free port."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from bridge_testkit import PLAYER, PROJECT, ROOT, TOKEN, FakeEnv, arun
from harness import Proc, free_port, start_process
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

RECIPE = {
    "version": 1,
    "operations": [
        {
            "type": "box",
            "min": {"x": 20, "y": 64, "z": 20},
            "max": {"x": 21, "y": 64, "z": 21},
            "block": "minecraft:oak_planks",
        }
    ],
}


def _payload(result: Any) -> dict:
    data = json.loads(result.content[0].text)
    assert data == result.structured_content
    return data


async def exercise_every_tool(client: Client, key: str) -> dict[str, dict]:
    """One call of each tool, as an agent would chain them; returns the payloads."""
    names = {t.name for t in (await client.list_tools()).tools}
    assert {"project_context", "region_inspect", "build_prepare", "build_apply", "operation_status"} <= names
    out: dict[str, dict] = {}
    out["project_context"] = _payload(await client.call_tool("project_context", {}))
    plan = _payload(await client.call_tool("build_prepare", {"recipe": RECIPE}))
    out["build_prepare"] = plan
    op = _payload(
        await client.call_tool(
            "build_apply", {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": key}
        )
    )
    out["build_apply"] = op
    out["operation_status"] = _payload(await client.call_tool("operation_status", {"operation_id": op["operation_id"]}))
    out["region_inspect"] = _payload(
        await client.call_tool(
            "region_inspect",
            {"min": {"x": 20, "y": 64, "z": 20}, "max": {"x": 21, "y": 64, "z": 21}, "detail": "blocks"},
        )
    )
    bad = await client.call_tool(
        "region_inspect",
        {"min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 0, "y": 0, "z": 0}, "detail": "summary", "player_id": "x"},
    )
    assert bad.is_error is True and _payload(bad)["error"]["code"] == "invalid_request"
    return out


def check_every_tool(out: dict[str, dict]) -> None:
    assert out["project_context"]["project"]["project_id"] == PROJECT
    assert out["build_prepare"]["changed_blocks"] == 4
    assert out["build_apply"]["state"] == "applied"
    assert out["operation_status"]["operation_id"] == out["build_apply"]["operation_id"]
    legend = {v: k for k, v in out["region_inspect"]["legend"].items()}
    p = legend["minecraft:oak_planks"]
    assert out["region_inspect"]["layers"] == [{"y": 64, "z_from": 20, "rows": [p + p, p + p]}]


# ---------------------------------------------------------------- HTTP


@pytest.fixture(scope="module")
def http_bridge(fake_env: FakeEnv, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Proc, str]]:
    tmp = tmp_path_factory.mktemp("bridge-http")
    port = free_port()
    env = fake_env.runtime(tmp) | {"MCB_BRIDGE_PORT": str(port)}
    proc = start_process(
        "bridge-http",
        [sys.executable, "-m", "mcb_bridge", "http"],
        tmp / "logs",
        env=env,
        health_url=f"http://127.0.0.1:{port}/health",
        timeout=30,
    )
    try:
        yield proc, f"http://127.0.0.1:{port}"
    finally:
        proc.stop()


def test_health_needs_no_token_and_reports_the_journal(http_bridge: tuple[Proc, str]) -> None:
    _, base = http_bridge
    r = httpx.get(f"{base}/health", timeout=5)
    assert r.status_code == 200
    body = r.json()
    assert body["service"] == "bridge" and body["status"] == "ok" and body["journal"] == {"reachable": True}
    assert TOKEN not in r.text


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


@pytest.mark.parametrize("auth", [None, "Bearer wrong-token", f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer"])
def test_mcp_endpoint_refuses_missing_or_wrong_tokens(http_bridge: tuple[Proc, str], auth: str | None) -> None:
    _, base = http_bridge
    headers = {"Accept": "application/json, text/event-stream"}
    if auth is not None:
        headers["Authorization"] = auth
    r = httpx.post(f"{base}/mcp", json=INIT, headers=headers, timeout=5)
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")
    err = r.json()["error"]
    assert err["code"] == "unauthenticated" and err["retryable"] is False
    assert TOKEN not in r.text


def test_right_token_passes_the_guard(http_bridge: tuple[Proc, str]) -> None:
    _, base = http_bridge
    r = httpx.post(
        f"{base}/mcp",
        json=INIT,
        timeout=5,
        headers={"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream"},
    )
    assert r.status_code == 200, r.text
    assert "minecraft-builder" in r.text


def test_every_tool_over_streamable_http(http_bridge: tuple[Proc, str], fresh_fake: FakeEnv) -> None:
    proc, base = http_bridge

    async def body() -> dict[str, dict]:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
                return await exercise_every_tool(client, "http-key-1")

    check_every_tool(arun(body()))
    assert {c[0] for c in fresh_fake.fake.calls} >= {
        "ProjectContext",
        "BuildPrepare",
        "BuildApply",
        "OperationStatus",
        "RegionInspect",
    }
    for _, md, _ in fresh_fake.fake.calls:  # identity from the config file, token from secrets/
        assert md["x-mcb-project-id"] == PROJECT and md["x-mcb-player-id"] == PLAYER
        assert md["authorization"] == f"Bearer {TOKEN}"
    log = proc.log()
    assert "tool build_apply -> ok" in log
    assert TOKEN not in log


def test_legacy_handshake_over_http(http_bridge: tuple[Proc, str]) -> None:
    _, base = http_bridge

    async def body() -> dict:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as client:
                return _payload(await client.call_tool("project_context", {}))

    assert arun(body())["project"]["project_id"] == PROJECT


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


def test_sdk_client_without_token_is_refused(http_bridge: tuple[Proc, str], fresh_fake: FakeEnv) -> None:
    from mcp import MCPError

    _, base = http_bridge

    async def body() -> None:
        async with Client(f"{base}/mcp") as client:
            await client.list_tools()

    with pytest.raises(BaseException) as info:  # noqa: B017 - the SDK wraps the 401 in a group
        arun(body(), timeout=30)
    assert any(isinstance(e, MCPError) for e in _leaves(info.value)), repr(info.value)
    assert fresh_fake.fake.calls == []  # nothing reached the journal


# ---------------------------------------------------------------- stdio


def test_every_tool_over_stdio(fake_env: FakeEnv, tmp_path: Path) -> None:
    env = fake_env.runtime(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcb_bridge", "stdio"], env=env, cwd=str(ROOT))
    errlog_path = tmp_path / "stderr.log"

    async def body() -> dict[str, dict]:
        with open(errlog_path, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return await exercise_every_tool(client, "stdio-key-1")

    check_every_tool(arun(body()))
    log = errlog_path.read_text()
    assert "MCP over stdio" in log  # logs went to stderr, not into the protocol stream
    assert TOKEN not in log


def test_stdio_without_configuration_exits_with_a_reason(tmp_path: Path) -> None:
    import subprocess

    env = {"PATH": "/usr/bin:/bin", "MCB_RUNTIME_DIR": str(tmp_path), "HOME": str(tmp_path)}
    r = subprocess.run(
        [sys.executable, "-m", "mcb_bridge", "stdio"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 2
    assert "MCB_PROJECT_ID" in r.stderr and r.stdout == ""
