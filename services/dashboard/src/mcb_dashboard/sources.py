"""What the dashboard reads and the few things it does, through the stack's own ports.

Services: each ``GET /health``. World host: ``world_info`` / ``pause`` / ``resume`` through
mcb_rpc.worldclient (the stack's service token for that host). Journal: JournalAdmin
(OperationList, ProjectList, RecoveryReview, RecoveryAbandon) and Journal (OperationCancel, HistoryMap,
RegionHistory, PlanEntries, RollbackPrepare, BuildApply) with the stack's admin token. Redis: the progress stream, the chat queues (``mcb:chat:q:<project>``),
the camera worker's heartbeat and capture records. Images: the camera worker's ``Capture`` poll.
Every failure becomes an McbError (mcb_rpc.errors) that the page shows; no token is ever part
of what is returned.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

import grpc
import httpx
import redis.asyncio as aioredis
from google.protobuf import json_format
from mcb.camera.v1 import camera_pb2, camera_pb2_grpc
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.journal.v1 import journal_pb2_grpc
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.auth import call_metadata
from mcb_rpc.errors import from_rpc_error
from mcb_rpc.pbjson import plain
from mcb_rpc.service import GRPC_OPTIONS
from mcb_rpc.settings import Settings
from mcb_rpc.worldclient import WorldClient
from redis.exceptions import RedisError

PROGRESS_STREAM = "mcb:progress"  # mcb_journal.queue
CHAT_PREFIX = "mcb:chat"  # mcb_bridge.chat.turnqueue
CAMERA_HEARTBEAT = "mcb:camera:worker"  # mcb_camera.server
CAPTURE_RECORD = "mcb:camera:capture:"  # mcb_camera.jobs
MAX_CAPTURES = 200
PREVIEW_SIZE = (480, 270)  # each half of a plan preview (before | after)
REDIS_READ_TIMEOUT_S = 3.0  # a reply slower than this is a RedisError (TimeoutError)
ACTIVE = ("prepared", "queued", "waiting_for_resume", "applying")


def as_dict(msg) -> dict[str, Any]:
    return json_format.MessageToDict(msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)


@dataclass
class ServiceHealth:
    name: str
    url: str
    up: bool = False
    status: str = "down"
    version: str = ""
    uptime_s: float | None = None
    last_error: str = ""
    last_error_at: float | None = None
    body: dict[str, Any] = field(default_factory=dict)


def own_error(err: Any) -> tuple[str, float] | None:
    """A service's ``last_error`` {code, message, at} (mcb_rpc.health) as (text, unix time)."""
    if not isinstance(err, dict) or not err.get("message"):
        return None
    try:
        at = datetime.fromisoformat(str(err.get("at", "")).replace("Z", "+00:00")).timestamp()
    except ValueError:
        at = 0.0
    return f"{err.get('code', 'error')}: {err['message']}", at


class Sources:
    def __init__(self, s: Settings, admin_token: str | None, world_token: str | None):
        h = "http://127.0.0.1"
        self.health_urls = {
            "world-host": f"{s.world_host_url.rstrip('/')}/health",
            "planner": f"{h}:{s.port('planner_health')}/health",
            "journal": f"{h}:{s.port('journal_health')}/health",
            "camera-worker": f"{h}:{s.port('camera_health')}/health",
            "bridge": f"{h}:{s.port('bridge')}/health",
        }
        for name in list(self.health_urls):  # compose: other containers' names (MCB_<NAME>_HEALTH_URL)
            env = os.environ.get(f"MCB_{name.upper().replace('-', '_')}_HEALTH_URL", "").strip()
            if env:
                self.health_urls[name] = env
        self.http = httpx.AsyncClient(timeout=2.0)
        self.redis = aioredis.from_url(
            s.redis_url, decode_responses=True, socket_timeout=REDIS_READ_TIMEOUT_S, socket_connect_timeout=2
        )
        self.world = WorldClient(s.world_host_url, world_token or "", timeout=5.0)
        self.world_token_present = bool(world_token)
        self.channel = grpc.aio.insecure_channel(s.journal_addr, options=GRPC_OPTIONS)
        self.journal = journal_pb2_grpc.JournalStub(self.channel)
        self.admin = journal_pb2_grpc.JournalAdminStub(self.channel)
        self.camera_channel = grpc.aio.insecure_channel(s.camera_addr, options=GRPC_OPTIONS)
        self.camera = camera_pb2_grpc.CameraStub(self.camera_channel)
        self._admin_token = admin_token or ""
        self.errors: dict[str, tuple[str, float]] = {}  # service -> (last error, when)

    async def aclose(self) -> None:
        await self.http.aclose()
        await self.redis.aclose()
        await self.world.aclose()
        await self.channel.close()
        await self.camera_channel.close()

    def _md(self, project_id: str = "") -> tuple[tuple[str, str], ...]:
        if not self._admin_token:
            raise McbError(ErrorCode.UNAUTHENTICATED, "the dashboard has no admin token (secrets/admin.token)")
        return call_metadata(self._admin_token, project_id)

    def _remember(self, name: str, error: str) -> None:
        self.errors[name] = (error, time.time())

    # ------------------------------------------------------------------ health
    async def _one_health(self, name: str, url: str) -> ServiceHealth:
        h = ServiceHealth(name, url)
        try:
            r = await self.http.get(url)
            body = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
            h.body = body if isinstance(body, dict) else {}
            h.up = True
            h.status = str(h.body.get("status", "ok" if r.status_code == 200 else f"http {r.status_code}"))
            h.version = str(h.body.get("version", h.body.get("hostVersion", "")))
            up = h.body.get("uptime_s", h.body.get("uptime_seconds"))
            h.uptime_s = float(up) if isinstance(up, int | float) else None
            if h.status != "ok":
                err = h.body.get("error") or f"status {h.status}"
                self._remember(name, err if isinstance(err, str) else json.dumps(err))
        except (httpx.HTTPError, ValueError) as exc:
            self._remember(name, f"unreachable: {exc.__class__.__name__}")
        # the newer of the service's own last error (mcb_rpc.health) and what the dashboard saw
        seen = [own_error(h.body.get("last_error")), self.errors.get(name)]
        latest = max((x for x in seen if x), key=lambda x: x[1], default=None)
        if latest:
            h.last_error, h.last_error_at = latest
        return h

    async def health(self) -> list[ServiceHealth]:
        return list(await asyncio.gather(*(self._one_health(n, u) for n, u in self.health_urls.items())))

    async def redis_info(self) -> dict[str, Any]:
        try:
            info = await self.redis.info("server")
            return {
                "up": True,
                "version": info.get("redis_version", ""),
                "uptime_s": info.get("uptime_in_seconds"),
                "last_error": self.errors.get("redis", ("",))[0],
            }
        except (RedisError, OSError) as exc:
            self._remember("redis", f"unreachable: {exc.__class__.__name__}")
            return {"up": False, "version": "", "uptime_s": None, "last_error": self.errors["redis"][0]}

    async def world_info(self) -> dict[str, Any]:
        try:
            info = as_dict(await self.world.world_info())
            return {"up": True, **info}
        except McbError as exc:
            self._remember("world-host", exc.message)
            return {"up": False, "error": exc.message}

    async def set_paused(self, paused: bool, reason: str) -> dict[str, Any]:
        res = await self.world.call(
            "pause" if paused else "resume", world_pb2.PauseParams(reason=reason), world_pb2.PauseResult
        )
        return as_dict(res)

    # ------------------------------------------------------------------ journal
    async def _rpc(self, fn, req, project_id: str = ""):
        try:
            return await fn(req, timeout=10, metadata=self._md(project_id))
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "journal") from None

    async def operations(
        self, limit: int = 50, project_id: str = "", old_worlds: bool = False
    ) -> jpb.OperationListResponse:
        return await self._rpc(
            self.admin.OperationList,
            jpb.OperationListRequest(limit=limit, project_id=project_id, include_old_worlds=old_worlds),
        )

    async def operation(self, op_id: str) -> jpb.OperationEntry:
        resp = await self._rpc(self.admin.OperationList, jpb.OperationListRequest(operation_id=op_id, limit=1))
        return resp.operations[0]

    async def projects(self, old_worlds: bool = False) -> jpb.ProjectListResponse:
        return await self._rpc(self.admin.ProjectList, jpb.ProjectListRequest(include_old_worlds=old_worlds))

    async def project(self, project_id: str) -> dict[str, Any]:
        """One project of ProjectList (name, area, owner), or not_found."""
        for p in (await self.projects()).projects:
            if p.project_id == project_id:
                return as_dict(p)
        raise McbError(ErrorCode.NOT_FOUND, f"no project {project_id[:64]!r}; the overview lists the projects")

    async def history_map(self, project_id: str, region: dict[str, Any], until_ms: int) -> dict[str, Any]:
        """The journal's HistoryMap of ``region`` as of ``until_ms`` (0: now), as plain lists."""
        req = jpb.HistoryMapRequest(until_millis=until_ms)
        json_format.ParseDict({"region": region}, req)
        r = await self._rpc(self.journal.HistoryMap, req, project_id)
        return {
            "x": list(r.x),
            "z": list(r.z),
            "who": list(r.who),
            "at_millis": list(r.at_millis),
            "legend": [
                {
                    "source": w.source,
                    "player_id": w.player_id,
                    "player_name": w.player_name,
                    "cause": w.cause,
                    "operation_id": w.operation_id,
                    "columns": w.columns,
                }
                for w in r.legend
            ],
            "first_millis": r.first_millis,
            "last_millis": r.last_millis,
            "note": r.note,
        }

    async def column_history(self, project_id: str, region: dict[str, Any]) -> dict[str, Any]:
        """One page (up to 100 changes, newest first) of RegionHistory for one column's box."""
        req = jpb.RegionHistoryRequest(limit=100, max_bytes=32768)
        json_format.ParseDict({"region": region}, req)
        r = await self._rpc(self.journal.RegionHistory, req, project_id)
        return {
            "entries": [as_dict(x) | {"at_millis": x.at_millis} for x in r.entries],
            "complete": r.complete,
            "note": r.note,
        }

    async def rollback_prepare(
        self, project_id: str, region: dict[str, Any], player: str, cause: str, since_ms: int
    ) -> dict[str, Any]:
        """The journal's RollbackPrepare (issue 32 item 4): a prepared plan's summary, as plain data."""
        req = jpb.RollbackPrepareRequest(player=player, cause=cause, since_millis=since_ms)
        json_format.ParseDict({"region": region}, req)
        return as_dict(await self._rpc(self.journal.RollbackPrepare, req, project_id))

    async def history_of(
        self, project_id: str, region: dict[str, Any], since_ms: int, player: str = "", limit: int = 100
    ) -> list[dict[str, Any]]:
        """RegionHistory's first page of ``region`` since ``since_ms`` (newest first), as plain data."""
        req = jpb.RegionHistoryRequest(limit=limit, max_bytes=32768, since_millis=since_ms, player=player)
        json_format.ParseDict({"region": region}, req)
        r = await self._rpc(self.journal.RegionHistory, req, project_id)
        return [as_dict(x) | {"at_millis": x.at_millis} for x in r.entries]

    async def plan_blocks(self, plan_id: str, project_id: str) -> list[tuple[dict[str, int], str]]:
        """A prepared plan's positions and the state each gets (journal PlanEntries, every entry)."""
        r = await self._rpc(self.journal.PlanEntries, jpb.PlanEntriesRequest(plan_id=plan_id), project_id)
        xyz = list(r.xyz)
        return [
            ({"x": xyz[3 * i], "y": xyz[3 * i + 1], "z": xyz[3 * i + 2]}, r.palette[d]) for i, d in enumerate(r.desired)
        ]

    async def build_apply(
        self, project_id: str, plan_id: str, plan_hash: str, replace_player_blocks: bool
    ) -> jpb.OperationReport:
        """Journal BuildApply with the admin token (an admin's apply: docs/architecture.md "Who may call
        what"); the idempotency key is the plan's own, so a second click returns the same operation."""
        req = jpb.BuildApplyRequest(
            plan_id=plan_id,
            plan_hash=plan_hash,
            idempotency_key=f"dashboard-apply-{plan_id}",
            replace_player_blocks=replace_player_blocks,
        )
        return await self._rpc(self.journal.BuildApply, req, project_id)

    async def recovery_review(self, op_id: str) -> dict[str, Any]:
        return plain(await self._rpc(self.admin.RecoveryReview, jpb.OperationRef(operation_id=op_id)))

    async def recovery_abandon(self, op_id: str, digest: str) -> jpb.OperationReport:
        return await self._rpc(
            self.admin.RecoveryAbandon, jpb.RecoveryAbandonRequest(operation_id=op_id, expected_digest=digest)
        )

    async def cancel(self, op_id: str, project_id: str) -> jpb.OperationReport:
        return await self._rpc(self.journal.OperationCancel, jpb.OperationRef(operation_id=op_id), project_id)

    # ------------------------------------------------------------------ redis: chat, camera, progress
    async def chat_queues(self, project_ids: list[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        try:
            for p in project_ids:
                waiting = [json.loads(x) for x in await self.redis.lrange(f"{CHAT_PREFIX}:q:{p}", 0, 19)]
                active = cast("str | None", await self.redis.get(f"{CHAT_PREFIX}:active:{p}"))  # decoded
                out[p] = {
                    "waiting": waiting,
                    "length": await self.redis.llen(f"{CHAT_PREFIX}:q:{p}"),
                    "active": json.loads(active) if active and active.startswith("{") else active,
                }
        except (RedisError, OSError, ValueError) as exc:
            self._remember("redis", f"chat queues unreadable: {exc.__class__.__name__}")
        return out

    async def camera_state(self) -> dict[str, Any]:
        """The worker's heartbeat and its capture records, newest first."""
        out: dict[str, Any] = {"heartbeat": None, "captures": []}
        try:
            beat = await self.redis.get(CAMERA_HEARTBEAT)
            out["heartbeat"] = json.loads(beat) if beat else None
            # every record (they live a week), read in pipelined batches; the newest MAX_CAPTURES
            # kept (SCAN's order is arbitrary: stopping at MAX_CAPTURES keys kept arbitrary ones)
            keys = [key async for key in self.redis.scan_iter(match=f"{CAPTURE_RECORD}*", count=500)]
            caps = []
            for i in range(0, len(keys), 500):
                pipe = self.redis.pipeline(transaction=False)
                for key in keys[i : i + 500]:
                    pipe.hgetall(key)
                for key, rec in zip(keys[i : i + 500], await pipe.execute(), strict=True):
                    if not rec:
                        continue  # expired between the scan and the read
                    job = json.loads(rec.get("job") or "{}")
                    caps.append(
                        {
                            "capture_id": key[len(CAPTURE_RECORD) :],
                            "status": rec.get("status", ""),
                            "stage": rec.get("stage", ""),
                            "project_id": rec.get("project_id", ""),
                            "created_ms": int(rec.get("created_ms") or 0),
                            "after_operation_id": job.get("after_operation_id") or "",
                            "error": rec.get("error", ""),
                        }
                    )
            out["captures"] = sorted(caps, key=lambda c: -c["created_ms"])[:MAX_CAPTURES]
        except (RedisError, OSError, ValueError) as exc:
            self._remember("redis", f"camera records unreadable: {exc.__class__.__name__}")
        return out

    async def capture_png(self, capture_id: str, project_id: str) -> bytes | None:
        try:
            res = await self.camera.Capture(
                camera_pb2.CaptureRequest(capture_id=capture_id, project_id=project_id),
                timeout=10,
                metadata=self._md(project_id),
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "camera-worker") from None
        return bytes(res.image) if res.status == "completed" and res.image else None

    async def plan(self, plan_id: str, project_id: str = "") -> tuple[str, jpb.PlanEntriesResponse]:
        """(project, header) of a prepared plan (journal PlanEntries, header only): of ``project_id``,
        or of whichever project holds it; not_found / stale_snapshot / world_changed as the journal says."""
        projects = [project_id] if project_id else [p.project_id for p in (await self.projects()).projects]
        last: McbError | None = None
        for p in projects:
            try:
                return p, await self._rpc(
                    self.journal.PlanEntries, jpb.PlanEntriesRequest(plan_id=plan_id, header_only=True), p
                )
            except McbError as exc:
                if exc.code != ErrorCode.NOT_FOUND:
                    raise
                last = exc
        raise last or McbError(ErrorCode.NOT_FOUND, f"plan {plan_id} not found in any project")

    async def plan_preview_png(self, plan_id: str, project_id: str, timeout_s: float = 45.0) -> bytes:
        """A picture of ``plan_id`` before it is applied (camera_capture plan_id, compare: before on the
        left, after on the right) of the plan's box from the diagonal viewpoint; nothing is written."""
        project, head = await self.plan(plan_id, project_id)
        req = camera_pb2.CaptureRequest(
            project_id=project,
            plan_id=plan_id,
            compare=True,
            view="diagonal",
            width=PREVIEW_SIZE[0],
            height=PREVIEW_SIZE[1],
        )
        req.region.CopyFrom(head.bounds)
        deadline = time.monotonic() + timeout_s
        try:
            res = await self.camera.Capture(req, timeout=30, metadata=self._md(project))
            while res.status != "completed":
                if time.monotonic() > deadline:
                    raise McbError(
                        ErrorCode.CAPTURE_NOT_READY,
                        f"the preview of plan {plan_id} was not drawn within {timeout_s:g} s; reload the page",
                        details={"capture_id": res.capture_id},
                    )
                await asyncio.sleep(0.25)
                res = await self.camera.Capture(
                    camera_pb2.CaptureRequest(capture_id=res.capture_id, project_id=project),
                    timeout=10,
                    metadata=self._md(project),
                )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "camera-worker") from None
        return bytes(res.image)

    async def progress_tail(self) -> str:
        """The id of the progress stream's newest entry ("0-0" while empty): a position to read
        after that, unlike "$", loses nothing that arrives between two reads."""
        newest = cast("list[tuple[str, dict[str, str]]]", await self.redis.xrevrange(PROGRESS_STREAM, count=1))
        return newest[0][0] if newest else "0-0"

    async def progress_events(self, last_id: str = "$", block_ms: int = 2000):
        """(entry id, event) pairs from the journal's progress stream after ``last_id``; none
        after ``block_ms`` (kept under the Redis read timeout: a longer block would end in a
        TimeoutError instead of an empty batch)."""
        block_ms = min(block_ms, int(REDIS_READ_TIMEOUT_S * 1000) - 500)
        # RESP2, decoded: [(stream, [(id, fields)])], or none after block_ms
        resp = cast(
            "list[tuple[str, list[tuple[str, dict[str, str]]]]] | None",
            await self.redis.xread({PROGRESS_STREAM: last_id}, count=100, block=block_ms),
        )
        out = []
        for _stream, entries in resp or []:
            for entry_id, fields in entries:
                try:
                    out.append((entry_id, json.loads(fields.get("event", "{}"))))
                except ValueError:
                    continue
        return out
