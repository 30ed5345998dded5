"""Run a service: a gRPC aio server plus an HTTP ``GET /health`` in one event loop.

Every ``/health`` body gets the shared fields of mcb_rpc.health (version, uptime_s,
started_at, last_error).

Stops cleanly on SIGINT/SIGTERM: the health server closes, the gRPC server drains for a
short grace period, then ``on_stop`` runs (close databases, flush files).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from mcb_rpc.bodylimit import HEALTH_MAX_BODY, BodyLimit
from mcb_rpc.health import PROCESS, health_fields

log = logging.getLogger("mcb")

GRPC_OPTIONS = [
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
]


def configure_logging(service: str) -> None:
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s {service} %(levelname)s %(name)s: %(message)s",
    )
    # httpx logs every request at INFO: a line per call to the world host or another service (the
    # journal's observer polls 4 times a second while idle). Its warnings and errors still show.
    logging.getLogger("httpx").setLevel(logging.WARNING)


def health_app(service: str, health: Callable[[], Awaitable[dict[str, Any]]]) -> FastAPI:
    app = FastAPI(title=f"mcb {service} health", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BodyLimit, max_bytes=HEALTH_MAX_BODY)  # it takes no body

    @app.get("/health")
    async def _health() -> JSONResponse:
        body = await health()
        body.setdefault("service", service)
        body.update(health_fields(str(body.get("version", ""))))  # uptime, last error (mcb_rpc.health)
        status = 200 if body.get("status") == "ok" else 503
        return JSONResponse(body, status_code=status)

    return app


async def serve(
    service: str,
    bind: str,
    grpc_port: int,
    health_port: int,
    add_servicers: Callable[[grpc.aio.Server], None],
    health: Callable[[], Awaitable[dict[str, Any]]],
    on_start: Callable[[], Awaitable[None]] | None = None,
    on_stop: Callable[[], Awaitable[None]] | None = None,
) -> None:
    PROCESS.mark_started()
    server = grpc.aio.server(options=GRPC_OPTIONS)
    add_servicers(server)
    bound = server.add_insecure_port(f"{bind}:{grpc_port}")
    if bound == 0:
        raise SystemExit(f"{service}: cannot bind gRPC port {bind}:{grpc_port} (in use?)")
    if on_start is not None:
        await on_start()
    await server.start()
    config = uvicorn.Config(
        health_app(service, health),
        host=bind,
        port=health_port,
        log_level="warning",
        lifespan="off",
        http="h11",  # not httptools: it drops an h2c-upgrade request's body
    )
    http = uvicorn.Server(config)
    # SIGINT/SIGTERM are this function's (below), not uvicorn's: its serve() would otherwise take them
    # over with signal.signal for as long as it runs (uvicorn >= 0.29: capture_signals)
    http.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    http_task = asyncio.create_task(http.serve())
    log.info("%s listening: gRPC %s:%d, health http://%s:%d/health", service, bind, grpc_port, bind, health_port)
    stopper = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({http_task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if http_task in done and http_task.exception() is not None:
        log.error("%s: health server failed: %s", service, http_task.exception())
    http.should_exit = True
    await server.stop(grace=2.0)
    if on_stop is not None:
        await on_stop()
    await asyncio.gather(http_task, return_exceptions=True)
    stopper.cancel()
    log.info("%s stopped", service)
