#!/usr/bin/env python3
"""A SCRIPTED ACP agent for tests: a real ACP process on the agent-client-protocol SDK, but no
model. It follows fixed rules keyed on words in the request:

  "tower at X Y Z"   connect to the MCP servers handed to the session (stdio, as given), call
                     project_context, build_prepare (a hollow 3x5x3 stone-brick tower at X Y Z),
                     build_apply, operation_status until terminal; stream tool calls and text
  "plan tower at X Y Z"  the same, but build_prepare only: the plan is left for the player to decide
  "slow"             stream a line, then wait up to 30 s, ending with stop reason "cancelled"
                     when the client cancels
  "ignore-cancel"    sleep 60 s and ignore cancel (the client must kill it)
  "permission"       ask the client for a permission and report the outcome
  anything else      answer "echo: <request>" (+ "summary-seen" when the prompt carries a summary)

It records what it was given under $HOME (its HOME is the bridge's per-agent folder): env.json
(its own environment), mcp-<session>.json (the MCP server entries) and sessions/<id>.json
(history for session/load). `--no-load` advertises loadSession but fails every load;
`--linger` keeps the process 30 s after stdin closes (an agent that would become an orphan).
`--auth-required` answers session/new, session/load and prompts with ACP's "Authentication
required" (-32000), as codex-acp does with neither an API key nor a login.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, run_agent
from acp.helpers import (
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SetSessionConfigOptionResponse,
    ToolCallUpdate,
)

HOME = Path(os.environ.get("HOME", "."))
NO_LOAD = "--no-load" in sys.argv
AUTH_REQUIRED = "--auth-required" in sys.argv


def _save(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


class ScriptedAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.sessions: dict[str, dict[str, Any]] = {}
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kw: Any
    ):
        _save(HOME / "env.json", dict(os.environ))
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=True),
            agent_info=Implementation(name="scripted-acp-agent", version="0"),
        )

    def _remember(self, sid: str, mcp_servers: list[Any]) -> None:
        servers = [s.model_dump(mode="json") for s in mcp_servers or []]
        _save(HOME / f"mcp-{sid}.json", servers)
        stored = self._load_file(sid) or {"history": []}
        stored["mcp"] = servers
        self.sessions[sid] = stored
        _save(HOME / "sessions" / f"{sid}.json", stored)

    def _load_file(self, sid: str) -> dict[str, Any] | None:
        try:
            return json.loads((HOME / "sessions" / f"{sid}.json").read_text())
        except (OSError, ValueError):
            return None

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kw: Any):
        if AUTH_REQUIRED:
            raise RequestError.auth_required()
        sid = f"sess-{uuid.uuid4().hex[:12]}"
        self._remember(sid, mcp_servers or [])
        return NewSessionResponse(session_id=sid, config_options=[self._model_option("scripted-small")])

    def _model_option(self, current: str) -> SessionConfigOptionSelect:
        return SessionConfigOptionSelect(
            id="model",
            name="Model",
            category="model",
            type="select",
            current_value=current,
            options=[SessionConfigSelectOption(value=v, name=v) for v in ("scripted-small", "scripted-large")],
        )

    async def set_config_option(self, config_id: str, session_id: str, value: Any, **kw: Any):
        _save(HOME / "config-options.json", {"config_id": config_id, "session_id": session_id, "value": value})
        return SetSessionConfigOptionResponse(config_options=[self._model_option(str(value))])

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kw: Any):
        if AUTH_REQUIRED:
            raise RequestError.auth_required()
        stored = self._load_file(session_id)
        if NO_LOAD or stored is None:
            raise RequestError.invalid_params({"session_id": "unknown session"})
        for user, agent in stored.get("history", []):  # history replay, as a real agent does
            await self.conn.session_update(session_id, update_user_message_text(user))
            await self.conn.session_update(session_id, update_agent_message_text(agent))
        self._remember(session_id, mcp_servers or [])
        return LoadSessionResponse()

    async def cancel(self, session_id: str, **kw: Any) -> None:
        ev = self.cancelled.get(session_id)
        if ev is not None:
            ev.set()

    async def authenticate(self, method_id: str, **kw: Any):
        return None

    async def say(self, sid: str, text: str) -> None:
        await self.conn.session_update(sid, update_agent_message_text(text))

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any):
        if AUTH_REQUIRED:
            raise RequestError.auth_required()
        text = "".join(getattr(b, "text", "") for b in prompt)
        request = text.rsplit("Request:", 1)[-1].strip()
        ev = self.cancelled[session_id] = asyncio.Event()
        await self.conn.session_update(session_id, update_agent_thought_text("secret thoughts never shown"))
        stop = "end_turn"
        answer = ""
        if m := re.search(r"plan tower at (-?\d+) (-?\d+) (-?\d+)", request):
            answer = await self.build_tower(session_id, *(int(v) for v in m.groups()), apply=False)
        elif m := re.search(r"tower at (-?\d+) (-?\d+) (-?\d+)", request):
            answer = await self.build_tower(session_id, *(int(v) for v in m.groups()))
        elif "ignore-cancel" in request:
            await self.say(session_id, "working slowly...")
            await asyncio.sleep(60)
            answer = "finished anyway"
        elif "slow" in request:
            await self.say(session_id, "working...")
            try:
                await asyncio.wait_for(ev.wait(), 30)
                stop = "cancelled"
            except TimeoutError:
                answer = "slow done"
        elif "permission" in request:
            resp = await self.conn.request_permission(
                session_id,
                ToolCallUpdate(tool_call_id="perm-1", title="shell: rm -rf /"),
                [
                    PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
                ],
            )
            answer = f"permission outcome: {resp.outcome.model_dump(mode='json')}"
        else:
            answer = f"echo: {request}" + (" summary-seen" if "Summary of the earlier conversation" in text else "")
        if answer:
            await self.say(session_id, answer)
        stored = self.sessions.setdefault(session_id, {"history": []})
        stored.setdefault("history", []).append([request, answer])
        _save(HOME / "sessions" / f"{session_id}.json", stored)
        return PromptResponse(stop_reason=stop)

    async def build_tower(self, sid: str, x: int, y: int, z: int, apply: bool = True) -> str:
        from mcp import Client, StdioServerParameters

        servers = self.sessions[sid].get("mcp") or []
        if not servers:
            return "no MCP server was given to this session"
        s = servers[0]
        env = {e["name"]: e["value"] for e in s.get("env", [])}
        params = StdioServerParameters(command=s["command"], args=s.get("args", []), env=env)
        recipe = {
            "version": 1,
            "operations": [
                {
                    "type": "box",
                    "min": {"x": x, "y": y, "z": z},
                    "max": {"x": x + 2, "y": y + 4, "z": z + 2},
                    "block": "minecraft:stone_bricks",
                    "hollow": True,
                }
            ],
        }
        n = 0

        async def tool(client: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
            nonlocal n
            n += 1
            tid = f"call-{n}"
            await self.conn.session_update(
                sid, start_tool_call(tid, f"minecraft.{name}", kind="other", status="in_progress", raw_input=args)
            )
            result = await client.call_tool(name, args)
            data = result.structured_content
            if data is None:
                data = json.loads(next(c.text for c in result.content if getattr(c, "type", "") == "text"))
            await self.conn.session_update(
                sid, update_tool_call(tid, status="failed" if result.is_error else "completed", raw_output=data)
            )
            if result.is_error:
                raise RuntimeError(f"{name} failed: {data}")
            return data

        with open(HOME / "mcp-server.log", "a") as errlog:
            from mcp.client.stdio import stdio_client

            async with Client(stdio_client(params, errlog=errlog)) as client:
                await tool(client, "project_context", {})
                plan = await tool(client, "build_prepare", {"recipe": recipe})
                if not apply:
                    return f"prepared {plan['plan_id']}, not applied"
                op = await tool(
                    client,
                    "build_apply",
                    {
                        "plan_id": plan["plan_id"],
                        "plan_hash": plan["plan_hash"],
                        "idempotency_key": f"scripted-{uuid.uuid4().hex}",
                    },
                )
                for _ in range(600):
                    st = await tool(client, "operation_status", {"operation_id": op["operation_id"]})
                    if st["state"] in ("applied", "conflict", "cancelled", "failed", "recovery_required"):
                        break
                    await asyncio.sleep(0.1)
        return f"tower {st['state']}: {st.get('written', 0)} blocks"


async def main() -> None:
    await run_agent(ScriptedAgent())
    if "--linger" in sys.argv:  # an agent that does not exit when its client goes away
        await asyncio.sleep(30)


if __name__ == "__main__":
    asyncio.run(main())
