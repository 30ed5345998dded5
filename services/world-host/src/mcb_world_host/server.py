"""HTTP for the world protocol: ``GET /health``, ``POST /v1/rpc`` (see world.proto) and the
embedded host's own ``POST /v1/save`` (a checkpoint: the region files complete when it answers).

Request checks, in order (each failure is a structured error, HTTP status from
``mcb_rpc.errors.HTTP_STATUS``, nothing executed):
  1. body size ≤ MAX_BODY (413 budget_exceeded; ``mcb_rpc.bodylimit.BodyLimit``, before any of
     the body is read, for every path)
  2. bearer token -> principal (401 unauthenticated)
  3. body is a JSON object with a string ``method`` (400 invalid_request)
  4. method is in methods.json (404 not_found), the principal's scope allows it (403),
     automation methods only when local automation is on (403), method implemented (400)
  5. params parse into the method's message; unknown fields name the field (400)
"""

from __future__ import annotations

import base64
import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from google.protobuf import json_format
from mcb.world.v1 import world_pb2
from mcb_common.diskfull import disk_full_error, is_disk_full
from mcb_common.errors import ErrorCode, McbError, invalid
from mcb_rpc import pbjson
from mcb_rpc.bodylimit import BodyLimit
from mcb_rpc.errors import HTTP_STATUS
from mcb_rpc.health import health_fields, record_error, record_exception
from mcb_rpc.tokens import TokenTable, bearer
from mcb_rpc.worldclient import method_table
from starlette.concurrency import run_in_threadpool

from .batchparams import parse_batch, parse_many
from .host import Host

log = logging.getLogger("mcb.world.http")

MAX_BODY = 8 * 1024 * 1024
AUTOMATION_METHODS = frozenset({"automation_set_blocks", "automation_chat", "automation_chat_outbox"})
# params read straight from their JSON form (batchparams: the same batches, or None to parse the message)
FAST_PARAMS: dict[str, Callable[[Any], Any]] = {"batch_apply": parse_batch, "batch_apply_many": parse_many}


def _to_json(msg: Any) -> dict[str, Any]:
    return pbjson.to_json(msg)


_BIG_BYTES = 65_536


def _ok_response(result: Any, request_id: Any) -> Response:
    """``{"ok": true, "result", "requestId"}``. A large bytes field (region_read ``indices``: up to
    4 MB) is base64-encoded once and spliced into the body, instead of MessageToDict encoding it
    and json.dumps scanning the 5.6 MB text again: the same JSON (bench/summary_ungenerated.py).
    A handler may answer the JSON form itself (a dict: events_since's pages)."""
    if isinstance(result, dict):
        return JSONResponse({"ok": True, "result": result, "requestId": request_id})
    big = {
        f.name: f.json_name
        for f in result.DESCRIPTOR.fields
        if f.type == f.TYPE_BYTES and not f.is_repeated and len(getattr(result, f.name)) > _BIG_BYTES
    }
    if not big:
        return JSONResponse({"ok": True, "result": _to_json(result), "requestId": request_id})
    rest = type(result)()
    rest.CopyFrom(result)
    marker = uuid.uuid4().hex
    for name in big:
        rest.ClearField(name)
    out = _to_json(rest)
    for json_name in big.values():
        out[json_name] = marker + json_name
    body = json.dumps(
        {"ok": True, "result": out, "requestId": request_id}, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    ).encode("utf-8")
    for name, json_name in big.items():
        body = body.replace(f'"{marker}{json_name}"'.encode(), b'"' + base64.b64encode(getattr(result, name)) + b'"', 1)
    return Response(body, media_type="application/json")


def _error(err: McbError, request_id: Any) -> JSONResponse:
    body: dict[str, Any] = {"ok": False, "error": err.to_dict(), "requestId": request_id}
    return JSONResponse(body, status_code=HTTP_STATUS.get(err.code, 500))


def _parse_error_message(exc: Exception, method: str) -> str:
    text = str(exc)
    # protobuf: 'Message type "mcb.world.v1.X" has no field named "foo" at "X".'
    marker = 'has no field named "'
    if marker in text:
        name = text.split(marker, 1)[1].split('"', 1)[0]
        return f"{method}: unknown params field {name!r}"
    return f"{method}: invalid params: {text}"


def _no_camera_account(_params: Any) -> Any:
    """camera_account_pose: the embedded host has no game server, so no players and no camera
    account to move; the built-in renderer (the default camera driver) needs none."""
    raise McbError(
        ErrorCode.CAMERA_UNAVAILABLE,
        "the embedded world host has no players, so no camera account to move; use the built-in "
        "renderer (MCB_CAMERA_DRIVER=builtin), or a Paper server with camera.account set",
        details={"reason": "no_camera_account"},
    )


def _no_previews(_params: Any) -> Any:
    """chat_preview: client-side blocks need a game server with players (the Paper plugin); the
    embedded host has none. A plan is seen here with camera_capture(plan_id) instead."""
    raise McbError(
        ErrorCode.INVALID_REQUEST,
        "the embedded world host has no players to show a plan to; use camera_capture with plan_id, or a Paper server",
        details={"reason": "no_previews"},
    )


def create_app(host: Host, tokens: TokenTable) -> FastAPI:
    app = FastAPI(title="mcb world host", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BodyLimit, max_bytes=MAX_BODY)
    methods = method_table()
    handlers = {
        "world_info": host.world_info,
        "region_read": host.region_read,
        "chunks_exist": host.chunks_exist,
        "blocks_get": host.blocks_get,
        "batch_apply": host.batch_apply,
        "batch_apply_many": host.batch_apply_many,
        "batch_cancel": host.batch_cancel,
        "events_since": host.events_since,
        "pause": host.pause,
        "resume": host.resume,
        "automation_set_blocks": host.automation_set_blocks,
        "automation_chat": host.automation_chat,
        "automation_chat_outbox": host.automation_chat_outbox,
        "chat_poll": host.chat_poll,
        "chat_reply": host.chat_reply,
        "player_context": host.player_context,
        "camera_account_pose": _no_camera_account,
        "chat_preview": _no_previews,
    }

    @app.get("/health")
    async def health() -> JSONResponse:
        body = _to_json(host.health())
        return JSONResponse({**body, **health_fields(body.get("version", ""))})

    @app.post("/v1/save")
    async def save(request: Request) -> Response:
        """Checkpoint now: when this answers, the region files hold every block answered before
        the call (a person opening the save sees them). Not a world-protocol method (the Java host
        saves with the game); the admin or service token. ``{"ok", "result": {"saved",
        "chunksWritten"}}``."""
        try:
            principal = tokens.principal_for(bearer(request.headers.get("authorization")))
            if principal is None:
                raise McbError(
                    ErrorCode.UNAUTHENTICATED,
                    "missing or unknown bearer token (Authorization: Bearer <token from the secrets folder>)",
                )
            if principal not in ("admin", "service"):
                raise McbError(ErrorCode.PERMISSION_DENIED, f"the {principal} token may not save (admin or service)")
            n = await run_in_threadpool(host.world.checkpoint, "save")
            return JSONResponse({"ok": True, "result": {"saved": True, "chunksWritten": n}})
        except McbError as err:
            record_error(err)
            return _error(err, None)
        except Exception as exc:  # noqa: BLE001 - the boundary: every failure is structured
            record_exception(exc)
            if is_disk_full(exc):
                return _error(
                    disk_full_error(
                        "the world host",
                        "the save is incomplete; every answered batch is kept "
                        "in the write-ahead log and written by a later save",
                    ),
                    None,
                )
            log.exception("internal error in /v1/save")
            return _error(
                McbError(ErrorCode.INTERNAL, f"save failed ({exc.__class__.__name__}); see the world host log"), None
            )

    @app.post("/v1/rpc")
    async def rpc(request: Request) -> Response:
        request_id: Any = None
        try:
            raw = await request.body()  # at most MAX_BODY: BodyLimit refused a larger one before this
            principal = tokens.principal_for(bearer(request.headers.get("authorization")))
            if principal is None:
                raise McbError(
                    ErrorCode.UNAUTHENTICATED,
                    "missing or unknown bearer token (Authorization: Bearer <token from the secrets folder>)",
                )
            try:
                body = json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                raise invalid(f"request body is not valid JSON: {exc}") from None
            if not isinstance(body, dict):
                raise invalid("request body must be a JSON object {method, params, requestId}")
            rid = body.get("requestId")
            request_id = rid if isinstance(rid, (str, int)) else None
            if request_id is None:
                request_id = uuid.uuid4().hex
            method = body.get("method")
            if not isinstance(method, str) or not method:
                raise invalid('missing "method" (a string naming a world-protocol method)')
            spec = methods.get(method)
            if spec is None:
                raise McbError(
                    ErrorCode.NOT_FOUND,
                    f"unknown method {method[:80]!r}; known: {', '.join(sorted(methods))}",
                    details={"method": method[:80]},
                )
            if principal not in spec["scopes"]:
                raise McbError(
                    ErrorCode.PERMISSION_DENIED,
                    f"the {principal} token may not call {method} (allowed: {', '.join(spec['scopes'])})",
                )
            if method in AUTOMATION_METHODS and not host.allow_automation:
                raise McbError(
                    ErrorCode.PERMISSION_DENIED,
                    f"{method} needs local automation, which is off; start the world host with "
                    "MCB_ALLOW_LOCAL_AUTOMATION=1 (the local runner's embedded-world config does)",
                )
            if not spec.get("implemented") or method not in handlers:
                raise invalid(f"{method} is not implemented yet by the embedded host")
            params = body.get("params", {})
            if params is None:
                params = {}
            if not isinstance(params, dict):
                raise invalid(f"{method}: params must be a JSON object")
            msg_cls = getattr(world_pb2, spec["params"])
            read = FAST_PARAMS.get(method)
            msg: Any = read(params) if read is not None else None
            if msg is None:  # every other method, and batch params the fast reader does not take
                try:
                    msg = pbjson.parse(params, msg_cls)
                except json_format.ParseError as exc:
                    raise invalid(_parse_error_message(exc, method)) from None
            result = await run_in_threadpool(handlers[method], msg)
            return _ok_response(result, request_id)
        except McbError as err:
            record_error(err)  # server-side failures only, for /health
            return _error(err, request_id)
        except Exception as exc:  # noqa: BLE001 - the boundary: every failure is structured
            record_exception(exc)
            if is_disk_full(exc):  # e.g. the batch log of an answer that wrote nothing
                log.error("%s: disk full (%s)", method, exc)
                return _error(disk_full_error("the world host", "the request was not completed"), request_id)
            log.exception("internal error in /v1/rpc")
            return _error(
                McbError(ErrorCode.INTERNAL, f"internal error ({exc.__class__.__name__}); see the world host log"),
                request_id,
            )

    return app
