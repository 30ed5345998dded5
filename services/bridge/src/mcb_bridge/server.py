"""The MCP server the agent sees: tools over stdio and streamable HTTP.

Built on the MCP Python SDK v2 low-level ``mcp.server.Server`` with explicit JSON Schemas
(``tools.py``), so the schemas are exactly the user's contract rather than something derived
from Python signatures. One ``Bridge`` object owns the journal client; ``build_server`` wraps it
in an MCP server; ``http_app`` adds bearer auth and ``GET /health`` for the HTTP transport.

Progress (MCP ``notifications/progress``): when a ``tools/call`` carries a progress token,
``build_apply`` follows its operation — it reads the operation every ``FOLLOW_POLL`` and reports
what changed, so a plan written within one poll gets its start and end only (progress = batches
done, plus one when the operation ends; total = its batches + 1; the message says the state and
the blocks written or already in place of the plan's) — and answers
when the operation has ended, waits for writes to resume, or after ``FOLLOW_SECONDS`` (then still
running: poll ``operation_status``); every other tool that is still working after a second sends
one notification a second (progress = seconds, no total) until it answers. Without a token
nothing changes: ``build_apply`` answers at once, as before.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.bodylimit import BodyLimit
from mcb_rpc.health import health_fields, record_error, record_exception
from mcb_rpc.tokens import TokenTable, bearer
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from . import render, resources
from .catalog import TEMPLATES, Catalog
from .config import DEFAULT_HTTP_PATH, BridgeConfig
from .errors import internal_error, tool_error
from .events import RETRY_MS, EventLog
from .journal_client import JournalClient
from .live import Live
from .oni_tools import oni_handlers
from .tools import ERRORS_SENTENCE, MAX_ARGUMENT_BYTES, ToolSpec, build_specs, validate_arguments

log = logging.getLogger("mcb.bridge")

SERVER_NAME = "minecraft-builder"
GROUND_SECONDS = 5.0  # project_context's ground height: at most this long, else it says why
GROUND_SLABS = 8  # ... and at most this many heightmap reads (top-down slabs of the build area)
GROUND_COLUMNS = 32  # ... over the central 32x32 columns of the area (all of a smaller one)
VERSION = "0.1.0"

INSTRUCTIONS = (
    """\
Tools to build in a Minecraft Java world together with a person, safely.
Workflow: project_context -> region_inspect (summary, then blocks for small areas) -> \
build_prepare(recipe) -> build_apply(plan_id, plan_hash, idempotency_key) -> \
operation_status until applied -> region_inspect to check.
Blocks a person changed are never overwritten: they come back as conflicts. Keep each answer \
small: inspect small regions, follow next_cursor for more.
Guides are MCP resources: mcb://guides/recipes, mcb://guides/block-states (facing, connections), \
mcb://guides/coordinates, mcb://guides/examples, mcb://guides/recipe-schema, and \
mcb://project/context; prompts: survey_area, build_house, furnish_room, undo_safely, rework_part. """
    + ERRORS_SENTENCE
)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | types.CallToolResult]]
# progress(progress, total, message): the request's own channel (ServerSession.report_progress)
Progress = Callable[[float, float | None, str | None], Awaitable[None]]
FOLLOW_SECONDS = 50.0  # how long build_apply with a progress token follows its operation
FOLLOW_POLL = 0.25
HEARTBEAT_SECONDS = 1.0
_OPERATION_ENDS = {"applied", "conflict", "cancelled", "failed", "recovery_required", "waiting_for_resume"}


class _Reporter:
    """Sends progress while the client listens: strictly increasing values, and a failed send
    (the client went away) ends the reporting, never the call."""

    def __init__(self, send: Progress) -> None:
        self.send: Progress | None = send
        self.last = -1.0

    async def __call__(self, progress: float, total: float | None, message: str) -> None:
        if self.send is None or progress <= self.last:
            return
        self.last = progress
        try:
            await self.send(progress, total, message)
        except Exception as exc:  # noqa: BLE001 - progress is best-effort
            log.info("progress notification not sent (%s); no more for this call", exc.__class__.__name__)
            self.send = None


def _result(payload: dict[str, Any]) -> types.CallToolResult:
    text = render.dumps(payload)
    if len(text.encode()) > render.MAX_TEXT_BYTES:  # renderers bound themselves; this is a bug
        raise RuntimeError(f"tool output of {len(text.encode())} bytes exceeds the cap")
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=payload, is_error=False)


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
            "operation_cancel": self._operation_cancel,
            "operation_undo_prepare": self._operation_undo_prepare,
            "part_define": self._part_define,
            "part_get": self._part_get,
            "region_changes": self._region_changes,
            "region_history": self._region_history,
            "rollback_prepare": self._rollback_prepare,
            "asset_list": self._asset_list,
            "schematic_export": self._schematic_export,
            "schematic_import_prepare": self._schematic_import_prepare,
            "camera_list": self._camera_list,
            "camera_capture": self._camera_capture,
            "camera_save": self._camera_save,
        }
        self._handlers.update(oni_handlers())  # Oxygen Not Included (issue 18): only with an ONI endpoint
        self.camera = CameraClient(config.agent_token, config.project_id, config.player_id)
        self.catalog = Catalog(self.journal, self.camera.list)
        self.live = Live(
            self._watched_operation, self.journal.project_context, lambda: {r.uri for r in resources.list_resources()}
        )

    async def _watched_operation(self, operation_id: str) -> dict[str, Any]:
        return render.operation_report(await self.journal.operation_status(operation_id))

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
        return spec.shown_schema if spec else None

    async def call(
        self, name: str, arguments: dict[str, Any] | None, progress: Progress | None = None
    ) -> types.CallToolResult:
        spec = self.specs.get(name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {name!r}; tools: {', '.join(self.specs)}")
        args = dict(arguments or {})
        started = time.monotonic()
        code = "ok"
        try:
            # Structural limits, then schema validation, in a worker thread with a deadline:
            # one hostile call never holds the event loop (/health, other clients).
            await asyncio.to_thread(validate_arguments, spec, args)
            out = await self._run(name, args, _Reporter(progress) if progress is not None else None)
            return out if isinstance(out, types.CallToolResult) else _result(out)
        except McbError as err:
            code = str(err.code)
            record_error(err)  # server-side failures only, for /health
            return tool_error(err)
        except Exception as exc:  # noqa: BLE001 - the boundary: log it, tell the model only a ref
            code = "internal"
            record_exception(exc)
            return internal_error(name, exc)
        finally:
            log.info("tool %s -> %s in %.0f ms", name, code, (time.monotonic() - started) * 1000)

    async def _run(self, name: str, args: dict[str, Any], report: _Reporter | None) -> Any:
        if report is None:
            return await self._handlers[name](args)
        if name == "build_apply":
            applied = await self._handlers[name](args)
            assert isinstance(applied, dict)  # build_apply answers its report as a dict
            return await self._follow(applied, report)
        task = asyncio.ensure_future(self._handlers[name](args))
        waited = 0
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=HEARTBEAT_SECONDS)
                if done:
                    return task.result()
                waited += 1
                await report(waited, None, f"{name}: working ({waited} s)")
        finally:
            if not task.done():  # the call itself was cancelled
                task.cancel()

    async def _follow(self, op: dict[str, Any], report: _Reporter) -> dict[str, Any]:
        """build_apply with a progress token: the operation's progress until it ends (or waits
        for writes to resume, or FOLLOW_SECONDS pass); the latest report is the answer."""
        deadline = time.monotonic() + FOLLOW_SECONDS
        while True:
            state = str(op.get("state", ""))
            ended = state in _OPERATION_ENDS
            batches = int(op.get("batches_total") or 0)
            blocks = int(op.get("written") or 0) + int(op.get("already") or 0)
            # the end is one more step, so the last notification says how it ended
            await report(
                float(int(op.get("batches_done") or 0) + ended),
                float(batches + 1),
                f"{state}: {blocks} of {int(op.get('planned') or 0)} blocks, batch "
                f"{int(op.get('batches_done') or 0)} of {batches}",
            )
            if ended or time.monotonic() > deadline:
                return op
            await asyncio.sleep(FOLLOW_POLL)
            op = render.operation_report(await self.journal.operation_status(op["operation_id"]))

    async def project_context_json(self) -> dict[str, Any]:
        """project_context's answer, for the resource mcb://project/context."""
        result = await self.call("project_context", {})
        data = result.structured_content or {}
        if result.is_error:
            raise McbError(ErrorCode(data["error"]["code"]), data["error"]["message"])
        return data

    # ---- tools ----

    async def _project_context(self, args: dict[str, Any]) -> dict[str, Any]:
        resp = await self.journal.project_context(bool(args.get("include_old_worlds")))
        ground: Any = None
        if resp.HasField("project") and resp.project.HasField("area"):
            try:  # the surface of the build area (sampled); an unreadable area says why instead
                ground = await asyncio.wait_for(self._ground(resp), GROUND_SECONDS)
            except McbError as err:
                ground = {"unknown": f"{err.code}: {err.message}"}
            except TimeoutError:
                ground = {
                    "unknown": f"reading the build area's heights took over {GROUND_SECONDS:g} s; "
                    "use region_inspect detail heightmap on a smaller box"
                }
        return render.project_context(resp, list(self.specs), ground)

    async def _ground(self, resp: Any) -> dict[str, Any]:
        """Heightmaps of the central GROUND_COLUMNS² columns of the build area (all of it when
        smaller; a few hundred thousand positions, fast on every host) from the top down in
        slabs the inspect limit allows, until every sampled column has its highest block."""
        mn, mx = render.vec(resp.project.area.min), render.vec(resp.project.area.max)
        for axis in "xz":
            if mx[axis] - mn[axis] + 1 > GROUND_COLUMNS:
                lo = (mn[axis] + mx[axis]) // 2 - GROUND_COLUMNS // 2
                mn[axis], mx[axis] = lo, lo + GROUND_COLUMNS - 1
        dx, dz = mx["x"] - mn["x"] + 1, mx["z"] - mn["z"] + 1
        step = max(1, -(-max(dx, dz) // 32))
        slab = max(1, int(resp.limits.inspect_summary_positions or 2_000_000) // (dx * dz))
        heights: list[int] | None = None
        top = mx["y"]
        for _ in range(GROUND_SLABS):
            if top < mn["y"] or (heights is not None and render.HEIGHT_NONE not in heights):
                break
            bottom = max(mn["y"], top - slab + 1)
            hm = (
                await self.journal.region_inspect({**mn, "y": bottom}, {**mx, "y": top}, "heightmap", step=step)
            ).heightmap
            got = list(hm.heights)
            heights = (
                got
                if heights is None
                else [h if h != render.HEIGHT_NONE else g for h, g in zip(heights, got, strict=True)]
            )
            top = bottom - 1
        return {
            **render.ground(heights or [], step),
            "columns": {"min": {"x": mn["x"], "z": mn["z"]}, "max": {"x": mx["x"], "z": mx["z"]}},
        }

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
        if detail in ("summary", "heightmap"):
            if cursor:
                raise McbError(ErrorCode.INVALID_REQUEST, "cursor applies to detail 'blocks' only")
            resp = await self.journal.region_inspect(mn, mx, detail, step=int(args.get("step") or 0))
            if detail == "heightmap":
                return render.region_heightmap(resp)
            return render.region_summary(resp)
        # the journal's cursor is passed through as is; a page that would not fit in one answer is
        # asked for again with as many positions as fit, so its next_cursor resumes right there
        resp = await self.journal.region_inspect(mn, mx, "blocks", cursor)
        fits = render.blocks_that_fit(resp, region)
        if fits < len(resp.page_states):
            resp = await self.journal.region_inspect(mn, mx, "blocks", cursor, max_positions=fits)
        return render.region_blocks(resp, region)

    async def _build_prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        recipe_json = json.dumps(args["recipe"], ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        deps = [_dependency(d) for d in args.get("dependencies") or []]
        resp = await self.journal.build_prepare(
            recipe_json, deps, args.get("part_id") or "", args.get("regenerate_part_id") or ""
        )
        return render.plan_summary(resp)

    async def _build_apply(self, args: dict[str, Any]) -> dict[str, Any]:
        try:
            resp = await self.journal.build_apply(
                args["plan_id"], args["plan_hash"], args["idempotency_key"], bool(args.get("replace_player_blocks"))
            )
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

    async def _operation_cancel(self, args: dict[str, Any]) -> dict[str, Any]:
        return render.operation_report(await self.journal.operation_cancel(args["operation_id"]))

    async def _operation_undo_prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        return render.plan_summary(await self.journal.operation_undo_prepare(args["operation_id"]))

    async def _part_define(self, args: dict[str, Any]) -> dict[str, Any]:
        return render.part(await self.journal.part_define(args["name"], args["operation_id"]))

    async def _part_get(self, args: dict[str, Any]) -> dict[str, Any]:
        return render.part(await self.journal.part_get(args["part_id"]))

    async def _region_changes(self, args: dict[str, Any]) -> dict[str, Any]:
        region = args["region"]
        resp = await self.journal.region_changes(
            region["min"],
            region["max"],
            args.get("since_cursor") or "",
            int(args.get("limit") or 100),
            args.get("source") or "",
            int(args.get("max_bytes") or 0),
        )
        return render.region_changes(resp)

    async def _region_history(self, args: dict[str, Any]) -> dict[str, Any]:
        region = args["region"]
        return render.region_history(
            await self.journal.region_history(
                region["min"],
                region["max"],
                args.get("cursor") or "",
                args.get("player") or "",
                args.get("cause") or "",
                int(args.get("since_millis") or 0),
            )
        )

    async def _rollback_prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        region = args["region"]
        return render.plan_summary(
            await self.journal.rollback_prepare(
                region["min"],
                region["max"],
                args.get("player") or "",
                args.get("cause") or "",
                int(args["since_millis"]),
            )
        )

    async def _asset_list(self, args: dict[str, Any]) -> dict[str, Any]:
        return render.asset_list(await self.journal.asset_list(args.get("query") or "", args.get("cursor") or ""))

    async def _schematic_export(self, args: dict[str, Any]) -> dict[str, Any]:
        mn, mx = args["min"], args["max"]
        for axis in "xyz":
            if int(mn[axis]) > int(mx[axis]):
                raise McbError(
                    ErrorCode.INVALID_REQUEST, f"min.{axis} ({mn[axis]}) is greater than max.{axis} ({mx[axis]})"
                )
        return render.schematic_export(await self.journal.schematic_export(args["name"], mn, mx, args.get("origin")))

    async def _schematic_import_prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        resp = await self.journal.schematic_import_prepare(
            args["asset_id"],
            args["target"],
            int(args.get("rotation") or 0),
            bool(args.get("allow_drop_block_entities")),
        )
        return render.plan_summary(resp)

    # ---- cameras (the camera worker's gRPC API) ----

    async def _camera_list(self, args: dict[str, Any]) -> dict[str, Any]:
        return render.camera_list(await self.camera.list())

    async def _camera_save(self, args: dict[str, Any]) -> dict[str, Any]:
        return render.camera_info(await self.camera.save(args))

    async def _camera_capture(self, args: dict[str, Any]) -> dict[str, Any] | types.CallToolResult:
        resp = await self.camera.capture(args)
        payload = render.capture_meta(resp)  # snake_case already
        if resp.status != "completed" or not resp.image:
            return payload
        # the picture as MCP image content (never base64 inside a text block) + metadata text
        return types.CallToolResult(
            content=[
                types.ImageContent(
                    data=base64.b64encode(resp.image).decode("ascii"), mime_type=resp.mime_type or "image/png"
                ),
                types.TextContent(text=render.dumps(payload)),
            ],
            structured_content=payload,
            is_error=False,
        )


class CameraClient:
    """The camera worker's gRPC API with the agent token and the trusted project/player ids."""

    def __init__(self, token: str, project_id: str, player_id: str, addr: str | None = None) -> None:
        from mcb_rpc.auth import call_metadata
        from mcb_rpc.settings import Settings

        self.addr = addr or Settings.from_env().camera_addr
        self._metadata = call_metadata(token, project_id, player_id)
        self._channel: Any = None

    def __repr__(self) -> str:  # never show the metadata (it holds the token)
        return f"CameraClient({self.addr!r})"

    def _stub(self) -> Any:
        import grpc
        from mcb.camera.v1 import camera_pb2_grpc

        if self._channel is None:
            self._channel = grpc.aio.insecure_channel(
                self.addr, options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)]
            )
        return camera_pb2_grpc.CameraStub(self._channel)

    async def _call(self, method: str, request: Any, timeout: float) -> Any:
        import grpc
        from mcb_rpc.errors import from_rpc_error

        try:
            return await getattr(self._stub(), method)(request, metadata=self._metadata, timeout=timeout)
        except grpc.RpcError as exc:
            err = from_rpc_error(exc, "camera-worker", timeout)
            if err.code == ErrorCode.UNAVAILABLE and err.details.get("reason") != "deadline":
                err = McbError(
                    ErrorCode.CAMERA_UNAVAILABLE,
                    "the camera worker cannot be reached; is it running? (`mcb status`) No picture was taken",
                )
            raise err from None

    async def list(self) -> Any:
        from mcb.camera.v1 import camera_pb2

        return await self._call("ListCameras", camera_pb2.ListCamerasRequest(), 10.0)

    async def save(self, args: dict[str, Any]) -> Any:
        from mcb.camera.v1 import camera_pb2

        p = args["pose"]
        cam = camera_pb2.CameraInfo(
            camera_id=args["camera_id"],
            name=args.get("name") or "",
            pose=camera_pb2.Pose(
                x=float(p["x"]),
                y=float(p["y"]),
                z=float(p["z"]),
                yaw=float(p["yaw"]),
                pitch=float(p["pitch"]),
                fov=float(p.get("fov") or 0),
                width=int(p.get("width") or 0),
                height=int(p.get("height") or 0),
            ),
        )
        return await self._call("SaveCamera", camera_pb2.SaveCameraRequest(camera=cam), 10.0)

    async def capture(self, args: dict[str, Any]) -> Any:
        from mcb.camera.v1 import camera_pb2
        from mcb.common.v1 import common_pb2

        req = camera_pb2.CaptureRequest(
            camera_id=args.get("camera_id") or "",
            capture_id=args.get("capture_id") or "",
            after_operation_id=args.get("after_operation_id") or "",
            plan_id=args.get("plan_id") or "",
            compare=bool(args.get("compare")),
            view=args.get("view") or "",
            width=int(args.get("width") or 0),
            height=int(args.get("height") or 0),
            format=args.get("format") or "",
        )
        if args.get("pose"):
            p = args["pose"]
            req.pose.CopyFrom(
                camera_pb2.Pose(
                    x=float(p["x"]),
                    y=float(p["y"]),
                    z=float(p["z"]),
                    yaw=float(p["yaw"]),
                    pitch=float(p["pitch"]),
                    fov=float(p.get("fov") or 0),
                )
            )
        if args.get("region"):
            r = args["region"]
            req.region.CopyFrom(
                common_pb2.Box(
                    min=common_pb2.Vec3(x=int(r["min"]["x"]), y=int(r["min"]["y"]), z=int(r["min"]["z"])),
                    max=common_pb2.Vec3(x=int(r["max"]["x"]), y=int(r["max"]["y"]), z=int(r["max"]["z"])),
                )
            )
        return await self._call("Capture", req, 30.0)


def _protocol_error(err: McbError) -> MCPError:
    """A McbError outside a tool call: a JSON-RPC error (-32602) whose message starts with the code."""
    return MCPError(types.INVALID_PARAMS, f"{err.code}: {err.message}", data=err.to_dict())


def build_server(bridge: Bridge) -> Server[Any]:
    """The low-level MCP server with the bridge's tools, resources (and templates), prompts,
    completions, logging and resource subscriptions (``live.py``)."""

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=bridge.tools())

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # progress only when the client asked for it (params._meta.progressToken)
        wants = progress_token_from_params(ctx.params) is not None
        result = await bridge.call(params.name, params.arguments, ctx.session.report_progress if wants else None)
        await bridge.live.after_call(ctx, params.name, result)  # warnings and outcomes as log messages
        return result

    async def on_list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=resources.list_resources())

    async def on_list_resource_templates(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=TEMPLATES)

    async def on_read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            found = await bridge.catalog.read(str(params.uri))
            if found is not None:
                return found
            return await resources.read_resource(str(params.uri), bridge.project_context_json)
        except McbError as err:  # a protocol error (resources have no tool-error form), code and hint kept
            raise _protocol_error(err) from None

    async def on_subscribe_resource(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        try:
            await bridge.live.subscribe(ctx, str(params.uri))
        except McbError as err:
            raise _protocol_error(err) from None
        return types.EmptyResult()

    async def on_unsubscribe_resource(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        await bridge.live.unsubscribe(ctx, str(params.uri))
        return types.EmptyResult()

    async def on_completion(ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
        try:
            return await bridge.catalog.complete(params)
        except McbError as err:
            raise _protocol_error(err) from None

    async def on_set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        await bridge.live.set_level(ctx, params.level)
        return types.EmptyResult()

    async def on_list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=resources.list_prompts())

    async def on_get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        try:
            return resources.get_prompt(params.name, params.arguments)
        except McbError as err:
            raise _protocol_error(err) from None

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tg:  # the watcher of subscriptions and started operations
            tg.start_soon(bridge.live.run)
            yield {}
            tg.cancel_scope.cancel()

    server = Server(
        SERVER_NAME,
        version=VERSION,
        title="Minecraft builder",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
        on_read_resource=on_read_resource,
        on_subscribe_resource=on_subscribe_resource,
        on_unsubscribe_resource=on_unsubscribe_resource,
        on_subscriptions_listen=bridge.live.listen,
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
        on_completion=on_completion,
        get_tool_input_schema=bridge.input_schema,
        lifespan=lifespan,
    )
    # logging/setLevel (handshake era; the 2026-07-28 revision deprecates it for a per-request
    # opt-in, which the SDK applies): registered by method, as the constructor warns for it
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)
    return server


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


MAX_BODY_BYTES = MAX_ARGUMENT_BYTES + 64 * 1024  # one tool call's arguments and the JSON-RPC envelope


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
                **health_fields(VERSION),
            }
        )

    events = EventLog()  # resumable SSE streams: priming events with `retry`, Last-Event-ID replay
    app = server.streamable_http_app(
        streamable_http_path=DEFAULT_HTTP_PATH,
        host=bridge.config.bind_host,
        custom_starlette_routes=[Route("/health", health, methods=["GET"])],
        event_store=events.session("-"),  # replaced per session by scope_sessions
        retry_interval=RETRY_MS,
    )
    events.scope_sessions(server.session_manager)
    return BearerAuth(BodyLimit(app, MAX_BODY_BYTES), TokenTable({"agent": bridge.config.agent_token}))
