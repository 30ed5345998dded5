"""Wiring: settings -> database, blobs, clients, core, executor, gRPC server, health."""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

import grpc
from mcb.camera.v1 import camera_pb2, camera_pb2_grpc
from mcb.journal.v1 import journal_pb2_grpc
from mcb.planner.v1 import planner_pb2, planner_pb2_grpc
from mcb_common.errors import McbError
from mcb_rpc.auth import call_metadata
from mcb_rpc.errors import from_rpc_error
from mcb_rpc.service import GRPC_OPTIONS, serve
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import TokenTable, read_token
from mcb_rpc.worldclient import WorldClient

from . import worldid
from .blobs import BlobStore
from .core import JournalCore
from .db import Database
from .observer import Observer
from .queue import ProgressStream
from .servicer import JournalAdminServicer, JournalServicer
from .settings import JournalSettings

log = logging.getLogger("mcb.journal")
VERSION = "0.1.0"
# The cyclic GC while an apply runs (issue 29): its young generation is collected every 700 net
# allocations by default, and each full collection walks every object the start-up made (modules,
# protobuf descriptors, numpy, grpc: a few hundred thousand) though none of them ever becomes
# garbage. After start-up those are frozen out of the collector's walks, and the young generation
# is collected every GC_THRESHOLDS[0] allocations (the journal's garbage is freed by reference
# counting; the collector only finds cycles). Measured (gc.callbacks) during bench/apply_throughput.py's
# 100k-block apply, 196 batches: 0.14 s of collections by default, 0.055 s frozen, 0.007 s frozen and
# with these thresholds (≈ 0.7 ms a batch less).
GC_THRESHOLDS = (50_000, 20, 20)


def tune_gc() -> None:
    """Freeze what start-up made (never collected again, never walked) and collect less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


class GrpcPlanner:
    """The planner over gRPC, called with the stack's own service token (planner SCOPES)."""

    def __init__(self, addr: str, token: str):
        self.channel = grpc.aio.insecure_channel(addr, options=GRPC_OPTIONS)
        self.stub = planner_pb2_grpc.PlannerStub(self.channel)
        self.md = call_metadata(token)

    async def compile(self, req: planner_pb2.CompileRequest) -> planner_pb2.CompileResponse:
        try:
            return await self.stub.Compile(req, timeout=30, metadata=self.md)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "planner", 30) from None

    async def import_schematic(self, req: planner_pb2.ImportSchematicRequest) -> planner_pb2.ImportSchematicResponse:
        try:
            return await self.stub.ImportSchematic(req, timeout=60, metadata=self.md)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "planner", 60) from None

    async def export_schematic(self, req: planner_pb2.ExportSchematicRequest) -> planner_pb2.ExportSchematicResponse:
        try:
            return await self.stub.ExportSchematic(req, timeout=60, metadata=self.md)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "planner", 60) from None


class GrpcCamera:
    """The camera worker over gRPC, called with the stack's service token for a project (camera
    SCOPES): the operations' Before pictures (before.py)."""

    def __init__(self, addr: str, token: str):
        self.channel = grpc.aio.insecure_channel(addr, options=GRPC_OPTIONS)
        self.stub = camera_pb2_grpc.CameraStub(self.channel)
        self.token = token

    async def capture(self, req: camera_pb2.CaptureRequest) -> camera_pb2.CaptureResponse:
        try:
            return await self.stub.Capture(req, timeout=10, metadata=call_metadata(self.token, req.project_id))
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "camera-worker", 10) from None


async def main_async() -> None:
    s = Settings.from_env()
    tunables = JournalSettings.from_env()  # a bad value stops the journal here, naming the variable
    data_dir = s.runtime_dir / "journal"
    db = Database(data_dir / "journal.sqlite")
    blobs = BlobStore(data_dir / "blobs")
    service_token = s.world_host_token("service")
    if not service_token:
        raise SystemExit(
            f"journal: no world-host service token ({s.world_host_token_file or s.secrets_dir}; "
            "run `mcb up` or create service.token)"
        )
    world = WorldClient(s.world_host_url, service_token)
    queue = ProgressStream(s.redis_url)  # progress events only; the apply work stays in SQLite
    # the planner is ours: the stack's own service token (an external world host may have another)
    planner = GrpcPlanner(s.planner_addr, read_token(s.secrets_dir, "service") or "")
    observer = Observer(db, world)
    core = JournalCore(
        db,
        blobs,
        world,
        planner,
        queue,
        observer=observer,
        settings=tunables,
        camera=GrpcCamera(s.camera_addr, read_token(s.secrets_dir, "service") or ""),
    )
    core.projects.load(s.load_config().get("projects", []))
    core.projects.file = s.config_file
    try:  # a new world (a reset save) is noted and logged now; its operations are refused later
        info = await world.world_info()
        worldid.note_world(db, info.world_uuid, info.epoch)
    except McbError:
        pass  # the world host is not up yet: noted at the first prepare or apply
    needing = core.recover_at_start()
    if needing:
        log.warning("operations need recovery before new writes: %s", ", ".join(needing))
    executor = core.executor()
    tune_gc()
    # service: the camera worker reads OperationStatus (only that; see servicer.STATUS_READERS)
    tokens = TokenTable.load(s.secrets_dir, ("agent", "admin", "service"))
    tasks: list[asyncio.Task[Any]] = []

    async def on_start() -> None:
        # The executor takes what SQLite says is queued (oldest first) as soon as it runs.
        tasks.append(asyncio.create_task(executor.run_forever()))
        tasks.append(asyncio.create_task(observer.run_forever(executor.stopping)))

    async def on_stop() -> None:
        executor.stopping.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        executor.close()
        core.reads.close()
        await world.aclose()
        await queue.aclose()
        db.close()

    async def health() -> dict[str, Any]:
        redis_ok = await queue.ping()
        try:
            await world.health()
            world_ok = True
        except McbError:
            world_ok = False
        pending = core.pending_recovery()
        return {
            "status": "ok" if redis_ok else "degraded",
            "version": VERSION,
            "redis": "ok" if redis_ok else "unreachable",
            "world_host": "ok" if world_ok else "unreachable",
            "recovery_required": len(pending),
            "observing": observer.healthy,
        }

    def add(server: grpc.aio.Server) -> None:
        journal_pb2_grpc.add_JournalServicer_to_server(JournalServicer(core, tokens), server)
        journal_pb2_grpc.add_JournalAdminServicer_to_server(JournalAdminServicer(core, tokens), server)

    await serve(
        "journal",
        s.bind_host,
        s.port("journal_grpc"),
        s.port("journal_health"),
        add,
        health,
        on_start=on_start,
        on_stop=on_stop,
    )
