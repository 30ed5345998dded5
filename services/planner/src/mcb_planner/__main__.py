"""``python -m mcb_planner``: serve ``Planner`` over gRPC plus ``GET /health``.

The world host (``MCB_WORLD_HOST_URL``, service token from the secrets folder) is read only by
``replace``. Callers authenticate with a bearer token from the same secrets folder: service (the
journal) or admin (servicer.SCOPES). Ports: ``MCB_PLANNER_GRPC_PORT`` (default 50061) and ``MCB_PLANNER_HEALTH_PORT`` (8791), bound
on ``MCB_BIND_HOST`` (127.0.0.1). Every known block registry is loaded before the port opens,
so a broken registry fails the start instead of the first request.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from mcb.planner.v1 import planner_pb2_grpc
from mcb_common.registry import KNOWN_VERSIONS, Registry
from mcb_rpc.service import configure_logging, serve
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import TokenTable
from mcb_rpc.worldclient import WorldClient

from . import PLANNER_VERSION
from .servicer import SCOPES, PlannerServicer


def _registries() -> dict[str, Any]:
    out = {}
    for version in KNOWN_VERSIONS:
        r = Registry.load(version)
        out[version] = {"dataVersion": r.data_version, "sha256": r.sha256, "blockCount": len(r.blocks)}
    return out


async def _run(settings: Settings) -> None:
    registries = _registries()
    # replace reads the world's current states: the world host with the service token (as the
    # journal does). Without a token the planner still serves everything else.
    token = settings.world_host_token("service")
    world = WorldClient(settings.world_host_url, token) if token else None

    # Every principal is known, so a known-but-not-allowed token gets permission_denied.
    tokens = TokenTable.load(settings.secrets_dir)
    if not any(tokens.has(p) for p in SCOPES["Compile"]):
        raise SystemExit(
            f"planner: no service or admin token in {settings.secrets_dir}; run `mcb up` "
            "(or the compose secrets-init service) to create them, or point MCB_SECRETS_DIR at them"
        )

    def add(server: grpc.aio.Server) -> None:
        planner_pb2_grpc.add_PlannerServicer_to_server(PlannerServicer(tokens, world=world), server)

    async def health() -> dict[str, Any]:
        return {"status": "ok", "service": "planner", "version": PLANNER_VERSION, "registries": registries}

    await serve(
        "planner",
        settings.bind_host,
        settings.port("planner_grpc"),
        settings.port("planner_health"),
        add,
        health,
    )


def main() -> None:
    configure_logging("planner")
    asyncio.run(_run(Settings.from_env()))


if __name__ == "__main__":
    main()
