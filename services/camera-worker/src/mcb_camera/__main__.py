"""``python -m mcb_camera`` / ``mcb-camera-worker``: run the camera worker.

Ports: gRPC ``MCB_CAMERA_GRPC_PORT`` (50064), health ``MCB_CAMERA_HEALTH_PORT`` (8794), bound to
``MCB_BIND_HOST`` (127.0.0.1). Redis: ``MCB_REDIS_URL``. Tokens: ``MCB_SECRETS_DIR``.
"""

from __future__ import annotations

import asyncio
import sys

import redis.asyncio as aioredis
from mcb.camera.v1 import camera_pb2_grpc
from mcb_rpc.service import configure_logging, log, serve
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import TokenTable

from .drivers import NoDriver
from .server import CameraService
from .store import CameraStore


def build(settings: Settings) -> CameraService:
    # Every principal is known, so a known-but-not-allowed token gets permission_denied.
    tokens = TokenTable.load(settings.secrets_dir)
    if not any(tokens.has(p) for p in ("agent", "admin", "service")):
        raise SystemExit(
            f"camera-worker: no agent, admin or service token in {settings.secrets_dir}; "
            "run `mcb up` (or the compose secrets-init service) to create them, or point "
            "MCB_SECRETS_DIR at the folder that holds them"
        )
    client = aioredis.from_url(
        settings.redis_url, socket_connect_timeout=1.0, socket_timeout=1.0,
        retry_on_timeout=False, decode_responses=True,
    )
    store = CameraStore(settings.runtime_dir / "camera")
    return CameraService(tokens, store, NoDriver(), client)


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
    log.info("camera-worker: no capture driver configured (it arrives with the camera issue); "
             "captures answer camera_unavailable")
    try:
        asyncio.run(run(settings))
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
