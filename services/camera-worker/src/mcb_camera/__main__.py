"""``python -m mcb_camera`` / ``mcb-camera-worker``: run the camera worker.

Ports: gRPC ``MCB_CAMERA_GRPC_PORT`` (50064), health ``MCB_CAMERA_HEALTH_PORT`` (8794), bound to
``MCB_BIND_HOST`` (127.0.0.1). Redis: ``MCB_REDIS_URL``. Tokens: ``MCB_SECRETS_DIR``.
Driver: ``MCB_CAMERA_DRIVER`` = builtin (default) | fabric | none; every ``MCB_CAMERA_*`` variable is
read by settings.py (``CameraSettings``); see README.md for the list.
"""

from __future__ import annotations

import asyncio
import sys

import redis.asyncio as aioredis
from mcb.camera.v1 import camera_pb2_grpc
from mcb_rpc.service import configure_logging, log, serve
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import TokenTable, read_token
from mcb_rpc.worldclient import WorldClient

from .drivers import make_driver
from .jobs import CaptureQueue, OperationWaiter
from .server import CameraService
from .settings import CameraSettings
from .store import CameraStore


def build(settings: Settings, cam: CameraSettings | None = None) -> CameraService:
    cam = cam or CameraSettings.from_env(link_port=settings.ports.get("camera_link"))
    # Every principal is known, so a known-but-not-allowed token gets permission_denied.
    tokens = TokenTable.load(settings.secrets_dir)
    if not any(tokens.has(p) for p in ("agent", "admin", "service")):
        raise SystemExit(
            f"camera-worker: no agent, admin or service token in {settings.secrets_dir}; "
            "run `mcb up` (or the compose secrets-init service) to create them, or point "
            "MCB_SECRETS_DIR at the folder that holds them"
        )
    client = aioredis.from_url(
        settings.redis_url,
        socket_connect_timeout=1.0,
        socket_timeout=3.0,
        retry_on_timeout=False,
        decode_responses=True,
    )
    store = CameraStore(settings.runtime_dir / "camera")
    service_token = settings.world_host_token("service")
    world = WorldClient(settings.world_host_url, service_token or "", timeout=30.0)
    driver = make_driver(
        cam, WorldClient(settings.world_host_url, service_token or "", timeout=30.0), settings.secrets_dir
    )
    # the capture records (which the dashboard reads) share the heartbeat's connection; the jobs
    # themselves stay in this process
    queue = CaptureQueue(
        client,
        driver,
        settings.runtime_dir / "camera",
        # the journal is this stack's: its own service token, not the (external) world host's
        OperationWaiter(settings.journal_addr, read_token(settings.secrets_dir, "service")),
        readiness_timeout_s=cam.readiness_timeout_s,
        operation_timeout_s=cam.operation_timeout_s,
        inline_wait_s=cam.inline_wait_s,
    )
    log.info("camera-worker: driver %s", driver.name or "none")
    return CameraService(tokens, store, driver, client, queue, world)


async def run(settings: Settings) -> None:
    svc = build(settings)
    await serve(
        "camera-worker",
        settings.bind_host,
        settings.port("camera_grpc"),
        settings.port("camera_health"),
        lambda server: camera_pb2_grpc.add_CameraServicer_to_server(svc, server),
        svc.health,
        on_start=svc.start,
        on_stop=svc.stop,
    )


def main() -> None:
    configure_logging("camera-worker")
    settings = Settings.from_env()
    try:
        asyncio.run(run(settings))
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
