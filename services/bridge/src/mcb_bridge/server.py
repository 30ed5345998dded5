"""The MCP server the agent sees: tools over stdio and streamable HTTP.

Built on the MCP Python SDK v2 low-level ``mcp.server.Server`` with explicit JSON Schemas
(``tools.py``), so the schemas are exactly the user's contract rather than something derived
from Python signatures. One ``Bridge`` object owns the journal client; ``build_server`` wraps it
in an MCP server; ``http_app`` adds bearer auth and ``GET /health`` for the HTTP transport.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.tokens import TokenTable, bearer
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from . import render
from .config import DEFAULT_HTTP_PATH, BridgeConfig
from .errors import internal_error, tool_error
from .journal_client import JournalClient
from .tools import ToolSpec, build_specs, validate_arguments

log = logging.getLogger("mcb.bridge")

SERVER_NAME = "minecraft-builder"
VERSION = "0.1.0"

INSTRUCTIONS = """\
Tools to build in a Minecraft Java world together with a person, safely.
Workflow: project_context -> region_inspect (summary, then blocks for small areas) -> \
build_prepare(recipe) -> build_apply(plan_id, plan_hash, idempotency_key) -> \
operation_status until applied -> region_inspect to check.
Blocks a person changed are never overwritten: they come back as conflicts. Keep each answer \
small: inspect small regions, follow next_cursor for more. On an error, follow its hint."""

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def _result(payload: dict[str, Any]) -> types.CallToolResult:
    text = render.dumps(payload)
    if len(text.encode()) > render.MAX_TEXT_BYTES:  # renderers bound themselves; this is a bug
        raise RuntimeError(f"tool output of {len(text.encode())} bytes exceeds the cap")
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=payload, is_error=False
    )


def _dependency(d: dict[str, Any]) -> tuple[dict[str, Any], str]:
    pos = d["pos"] if "pos" in d else {"x": d["x"], "y": d["y"], "z": d["z"]}
    return pos, str(d.get("state") or "")


class Bridge:
    """The tools, bound to one journal client and one trusted project/player."""

    def __init__(self, config: BridgeConfig, journal: JournalClient | None = None) -> None:
        self.config = config
        self.journal = journal or JournalClient(
            config.journal_addr,
            config.agent_token,
            config.project_id,
            config.player_id,
            config.deadline_scale,
        )
        self._specs: dict[str, ToolSpec] | None = None
        self._handlers: dict[str, Handler] = {
            "project_context": self._project_context,
            "region_inspect": self._region_inspect,
            "build_prepare": self._build_prepare,
            "build_apply": self._build_apply,
            "operation_status": self._operation_status,
        }

    @property
    def specs(self) -> dict[str, ToolSpec]:
        if self._specs is None:
            self._specs = build_specs()
            assert set(self._specs) == set(self._handlers)
        return self._specs

    def tools(self) -> list[types.Tool]:
        return [s.to_mcp() for s in self.specs.values()]

    def input_schema(self, name: str) -> dict[str, Any] | None:
        spec = self.specs.get(name)
        return spec.input_schema if spec else None

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        spec = self.specs.get(name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {name!r}; tools: {', '.join(self.specs)}")
        args = dict(arguments or {})
        started = time.monotonic()
        code = "ok"
        try:
            if name == "region_inspect" and args.get("detail") == "heightmap":
                raise McbError(
                    ErrorCode.INVALID_REQUEST,
                    "detail 'heightmap' is not available in this version; use 'summary' (palette "
                    "with counts) or 'blocks' (exact states, paged)",
                )
            validate_arguments(spec, args)
            return _result(await self._handlers[name](args))
        except McbError as err:
            code = str(err.code)
            return tool_error(err)
        except Exception as exc:  # noqa: BLE001 - the boundary: log it, tell the model only a ref
            code = "internal"
            return internal_error(name, exc)
        finally:
            log.info("tool %s -> %s in %.0f ms", name, code, (time.monotonic() - started) * 1000)

    # ---- tools ----

    async def _project_context(self, args: dict[str, Any]) -> dict[str, Any]:
        return render.project_context(await self.journal.project_context())

    async def _region_inspect(self, args: dict[str, Any]) -> dict[str, Any]:
        mn, mx, detail = args["min"], args["max"], args["detail"]
        for axis in "xyz":
            if int(mn[axis]) > int(mx[axis]):
                raise McbError(
                    ErrorCode.INVALID_REQUEST,
                    f"min.{axis} ({mn[axis]}) is greater than max.{axis} ({mx[axis]}); min is the lower corner",
                )
        region = tuple(int(v) for v in (mn["x"], mn["y"], mn["z"], mx["x"], mx["y"], mx["z"]))
        cursor = args.get("cursor") or ""
        if detail == "summary":
            if cursor:
                raise McbError(ErrorCode.INVALID_REQUEST, "cursor applies to detail 'blocks' only")
            return render.region_summary(await self.journal.region_inspect(mn, mx, "summary"))
        journal_cursor, skip = render.decode_cursor(cursor, region) if cursor else ("", 0)
        resp = await self.journal.region_inspect(mn, mx, "blocks", journal_cursor)
        return render.region_blocks(resp, region, journal_cursor, skip)

    async def _build_prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        recipe_json = json.dumps(args["recipe"], ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        deps = [_dependency(d) for d in args.get("dependencies") or []]
        resp = await self.journal.build_prepare(recipe_json, deps, args.get("part_id") or "")
        return render.plan_summary(resp)

    async def _build_apply(self, args: dict[str, Any]) -> dict[str, Any]:
        try:
            resp = await self.journal.build_apply(args["plan_id"], args["plan_hash"], args["idempotency_key"])
        except McbError as err:
            if err.code == ErrorCode.UNAVAILABLE:
                err.message += (
                    " The apply may or may not have started: repeat build_apply with the same "
                    "plan_id, plan_hash and idempotency_key (never a new key), or check operation_status."
                )
            raise
        return render.operation_report(resp)

    async def _operation_status(self, args: dict[str, Any]) -> dict[str, Any]:
        return render.operation_report(await self.journal.operation_status(args["operation_id"]))


def build_server(bridge: Bridge) -> Server[Any]:
    """The low-level MCP server with the bridge's tools."""

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=bridge.tools())

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await bridge.call(params.name, params.arguments)

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        yield {}

    return Server(
        SERVER_NAME,
        version=VERSION,
        title="Minecraft builder",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        get_tool_input_schema=bridge.input_schema,
        lifespan=lifespan,
    )


# ---------------------------------------------------------------- HTTP


def _unauthorized(message: str) -> JSONResponse:
    err = McbError(ErrorCode.UNAUTHENTICATED, message)
    return JSONResponse(
        {"error": {"code": str(err.code), "message": err.message, "retryable": False}},
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer realm="mcb-bridge"'},
    )


class BearerAuth:
    """ASGI guard: every HTTP path but ``/health`` needs ``Authorization: Bearer <agent token>``.

    The comparison is constant-time (``TokenTable``); the token is never logged or echoed.
    """

    def __init__(self, app: ASGIApp, tokens: TokenTable, open_paths: frozenset[str] = frozenset({"/health"})):
        self.app = app
        self.tokens = tokens
        self.open_paths = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") not in self.open_paths:
            header = None
            for k, v in scope.get("headers") or ():
                if k == b"authorization":
                    header = v.decode("latin-1")
                    break
            presented = bearer(header)
            if presented is None:
                await _unauthorized(
                    "missing bearer token: send 'Authorization: Bearer <agent token>' "
                    "(the token is in .runtime/secrets/agent.token)"
                )(scope, receive, send)
                return
            if self.tokens.principal_for(presented) != "agent":
                await _unauthorized("unknown bearer token: use the agent token")(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app(bridge: Bridge) -> ASGIApp:
    server = build_server(bridge)

    async def health(_: Request) -> JSONResponse:
        journal_ok = await bridge.journal.reachable(timeout=1.0)
        return JSONResponse(
            {
                "service": "bridge",
                "status": "ok" if journal_ok else "degraded",
                "version": VERSION,
                "mcp_path": DEFAULT_HTTP_PATH,
                "journal": {"reachable": journal_ok},
            }
        )

    app = server.streamable_http_app(
        streamable_http_path=DEFAULT_HTTP_PATH,
        host=bridge.config.bind_host,
        custom_starlette_routes=[Route("/health", health, methods=["GET"])],
    )
    return BearerAuth(app, TokenTable({"agent": bridge.config.agent_token}))
