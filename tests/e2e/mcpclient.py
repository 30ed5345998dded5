"""Small helpers over the MCP SDK's client for the end-to-end tests."""

from __future__ import annotations

import json
import uuid
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class ToolError(Exception):
    def __init__(self, error: dict[str, Any]):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error


def http_client(url: str, token: str | None) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)))


def stdio_client(env: dict[str, str], argv: list[str]) -> Client:
    return Client(StdioServerParameters(command=argv[0], args=argv[1:], env=env))


def payload(result: Any) -> dict[str, Any]:
    if result.structured_content is not None:
        data = result.structured_content
    else:
        texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
        data = json.loads(texts[0])
    return data


async def call(client: Client, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    result = await client.call_tool(name, args or {})
    data = payload(result)
    if result.is_error:
        raise ToolError(data.get("error", data))
    return data


TERMINAL = ("applied", "conflict", "cancelled", "failed", "recovery_required")


async def wait_terminal(client: Client, op_id: str, timeout: float = 60) -> dict[str, Any]:
    """Poll operation_status until the operation is terminal (bounded by ``timeout``)."""
    with anyio.fail_after(timeout):
        while True:
            st = await call(client, "operation_status", {"operation_id": op_id})
            if st["state"] in TERMINAL:
                return st
            await anyio.sleep(0.05)


async def apply_and_wait(client: Client, plan: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    """build_apply a prepared plan with a fresh key and wait for its terminal state."""
    op = await call(
        client,
        "build_apply",
        {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
    )
    return await wait_terminal(client, op["operation_id"], timeout)
