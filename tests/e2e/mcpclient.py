"""Small helpers over the MCP SDK's client for the end-to-end tests."""

from __future__ import annotations

import json
from typing import Any

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
