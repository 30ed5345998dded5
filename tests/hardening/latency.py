"""Latency of the bridge's /health and of another client's MCP call while a hostile input is
being processed (shared by test_no_stall.py and bench/hostile_latency.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from e2e.mcpclient import ToolError, call, http_client
from hardening.hostile import hostile_files, hostile_recipes

Action = Callable[[Any], Awaitable[Any]]


@dataclass
class Measured:
    outcome: Any  # the action's answer or its ToolError's error dict
    seconds: float  # how long the hostile call took
    health: list[float] = field(default_factory=list)
    read: list[float] = field(default_factory=list)

    @property
    def health_max(self) -> float:
        return max(self.health)

    @property
    def read_max(self) -> float:
        return max(self.read)


async def while_running(comp: Any, action: Action, min_probes: int = 3) -> Measured:
    """Run ``action(client_a)``; meanwhile probe ``GET /health`` and ``project_context`` with a
    second MCP client, one after the other, until the action is over (at least ``min_probes``)."""
    token = comp.token("agent")
    health_url = f"http://127.0.0.1:{comp.ports['bridge']}/health"
    out = Measured(None, 0.0)
    async with (
        http_client(comp.mcp_url, token) as a,
        http_client(comp.mcp_url, token) as b,
        httpx.AsyncClient(timeout=120) as h,
    ):
        await call(b, "project_context")  # both sessions open and warm before the hostile call
        await call(a, "project_context")
        done = anyio.Event()

        async def hostile() -> None:
            t0 = time.monotonic()
            try:
                out.outcome = await action(a)
            except ToolError as err:
                out.outcome = {"error": err.error}
            finally:
                out.seconds = time.monotonic() - t0
                done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(hostile)
            await anyio.sleep(0.02)  # let the hostile request reach the bridge first
            while not done.is_set() or len(out.health) < min_probes:
                t0 = time.monotonic()
                r = await h.get(health_url)
                out.health.append(time.monotonic() - t0)
                assert r.status_code == 200, r.text
                t0 = time.monotonic()
                await call(b, "project_context")
                out.read.append(time.monotonic() - t0)
                await anyio.sleep(0.05)
    return out


def recipe_action(args: dict[str, Any]) -> Action:
    async def act(client: Any) -> Any:
        return await call(client, "build_prepare", args)

    return act


def raw_post_action(comp: Any, args: dict[str, Any]) -> Action:
    """A tools/call POSTed as raw HTTP (bodies too large for a polite client)."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "build_prepare", "arguments": args}}
    ).encode()

    async def act(_client: Any) -> Any:
        async with httpx.AsyncClient(timeout=300) as h:
            r = await h.post(
                comp.mcp_url,
                content=body,
                headers={
                    "Authorization": f"Bearer {comp.token('agent')}",
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                },
            )
        return {"status": r.status_code, "body": r.text[:500], "bytes": len(body)}

    return act


def file_action(assets: Path, name: str, kind: str, data: bytes | None) -> Action:
    """Put a file (or, with ``data=None``, a FIFO) in the library, then import and list it."""
    fname = f"{name}.{kind}"
    asset_id = name if kind == "schem" else fname

    async def act(client: Any) -> Any:
        assets.mkdir(parents=True, exist_ok=True)
        path = assets / fname
        if data is None:
            import os

            os.mkfifo(path)
        else:
            path.write_bytes(data)
        outcome: dict[str, Any] = {}
        try:
            outcome["import"] = await call(
                client, "schematic_import_prepare", {"asset_id": asset_id, "target": {"x": 0, "y": 64, "z": 0}}
            )
        except ToolError as err:
            outcome["import"] = {"error": err.error}
        listing = await call(client, "asset_list", {"query": name})
        outcome["listed"] = next((e for e in listing["assets"] if e["asset_id"] == asset_id), None)
        return outcome

    return act


def cases(comp: Any) -> dict[str, Action]:
    """Every hostile input of issue 12 items 1, 2 and 4 as an action on the running stack."""
    out: dict[str, Action] = {f"recipe:{k}": recipe_action(v) for k, v in hostile_recipes().items()}
    from hardening.hostile import recipe_of

    out["recipe:ops-40000 (raw HTTP)"] = raw_post_action(comp, {"recipe": recipe_of(40_000)})
    assets = comp.runtime / "assets"
    out["file:fifo"] = file_action(assets, "fifo", "schem", None)
    for k, (kind, data) in hostile_files().items():
        out[f"file:{k}"] = file_action(assets, k, kind, data)
    return out
