"""``python -m mcb_world_host``: run the embedded world host.

Environment (besides mcb_rpc.settings' MCB_RUNTIME_DIR / MCB_SECRETS_DIR / MCB_BIND_HOST):
  MCB_WORLD_DIR               the save folder (default <runtime>/world)
  MCB_WORLD_CREATE=flat       create a new flat 1.21.11 world when there is no level.dat
  MCB_WORLD_EXISTING=1        the folder is a person's own save (`mcb up --world PATH`): refused unless its
                              level.dat is 1.21.11's DataVersion and no game holds its session.lock; the
                              host then holds session.lock itself until it stops (existing.py)
  MCB_WORLD_PREGEN            "minX,minZ,maxX,maxZ" block area to pre-generate in a flat world
                              (default -64,-64,63,63; "none" to skip)
  MCB_ALLOW_LOCAL_AUTOMATION  1 to enable automation_set_blocks / automation_chat
  MCB_WORLD_CHECKPOINT_S      seconds between checkpoints while blocks wait in the write-ahead log (default 5)
  MCB_WORLD_CHECKPOINT_MB     checkpoint as soon as the log holds this many MB of batch records (default 64)
  MCB_WORLD_HOST_PORT         the port; else config.json "ports.world_host" (what `mcb up` saved),
                              else 8765 — the same place every service takes its port from
                              (mcb_rpc.settings.Settings.port)
The chat queue's project_id is the first project in the runner's config.json (MCB_CONFIG), else "default".
Stops cleanly on SIGTERM/SIGINT: a last checkpoint writes every logged block into the region files,
the log is cut, files are closed. After a crash the next start replays the log first.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
from pathlib import Path

import uvicorn
from mcb_common.errors import McbError
from mcb_common.registry import Registry
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import TokenTable

from .existing import SessionLock, check_save
from .host import Host
from .server import create_app
from .world import CHECKPOINT_EVERY_S, CHECKPOINT_LOG_MB, World

log = logging.getLogger("mcb.world")


def parse_pregen(text: str | None) -> tuple[int, int, int, int] | None:
    if text is None or text.strip() == "":
        return (-64, -64, 63, 63)
    if text.strip().lower() in ("none", "off", "0"):
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 4:
        raise SystemExit(f"MCB_WORLD_PREGEN must be minX,minZ,maxX,maxZ (got {text!r})")
    try:
        a, b, c, d = (int(p) for p in parts)
    except ValueError:
        raise SystemExit(f"MCB_WORLD_PREGEN must hold 4 integers (got {text!r})") from None
    if abs(c - a) > 4096 or abs(d - b) > 4096:
        raise SystemExit("MCB_WORLD_PREGEN area is limited to 4096×4096 blocks")
    return (a, b, c, d)


async def _serve(host: Host, tokens: TokenTable, bind: str, port: int) -> None:
    # h11, never httptools: uvicorn's httptools protocol drops the body of a request that proposes
    # an h2c upgrade, as Java's HttpClient does by default on http:// (tests/contract)
    config = uvicorn.Config(
        create_app(host, tokens),
        host=bind,
        port=port,
        log_level="warning",
        lifespan="off",
        access_log=False,
        http="h11",
    )
    server = uvicorn.Server(config)
    # (uvicorn before 0.29 installed its own handlers here; later versions have no such method and
    # capture signals in Server.capture_signals instead, so this assignment no longer does anything)
    setattr(server, "install_signal_handlers", lambda: None)  # noqa: B010
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, lambda: setattr(server, "should_exit", True))
    log.info(
        "world host on http://%s:%d (world %s, automation %s)",
        bind,
        port,
        host.world.path,
        "on" if host.allow_automation else "off",
    )
    await server.serve()


def _env_float(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise SystemExit(f"{name} must be a number (got {text!r})") from None
    if value <= 0:
        raise SystemExit(f"{name} must be above 0 (got {text!r})")
    return value


# gen-0 collections every 50,000 new container objects instead of 700 (a 512-block batch makes
# ~4,000: its request's JSON, its log record, its answer), and the older generations 20× rarer
GC_THRESHOLDS = (50_000, 20, 20)


def tune_gc() -> None:
    """Once the world is open and the host built: everything alive now (the block registry, the
    modules, the world's metadata) moves to the permanent generation, where no collection looks at
    it again, and collections run less often. A 100,000-block apply (196 batches) spent ~1 ms a
    batch in the collector, most of it in full collections walking those start-up objects; with
    this, ~0.05 ms (bench/apply_throughput.py, the world host alone). Reference counting frees
    everything as before; only reference cycles wait a little longer for a collection."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s world-host %(levelname)s %(name)s: %(message)s")
    settings = Settings.from_env()
    world_dir = Path(os.environ.get("MCB_WORLD_DIR") or settings.runtime_dir / "world").resolve()
    create = os.environ.get("MCB_WORLD_CREATE") or None
    if create not in (None, "flat"):
        raise SystemExit(f"MCB_WORLD_CREATE must be 'flat' (got {create!r})")
    pregen = parse_pregen(os.environ.get("MCB_WORLD_PREGEN"))
    allow = os.environ.get("MCB_ALLOW_LOCAL_AUTOMATION", "") in ("1", "true", "yes")
    every_s = _env_float("MCB_WORLD_CHECKPOINT_S", CHECKPOINT_EVERY_S)
    log_mb = _env_float("MCB_WORLD_CHECKPOINT_MB", CHECKPOINT_LOG_MB)
    # environment > config.json "ports" > default, like every other service: a plain `mcb up` after
    # a run on other ports waits on the saved port, so the host must listen there (issue 31 item 1)
    port = settings.port("world_host")
    bind = settings.bind_host
    tokens = TokenTable.load(settings.secrets_dir, ("service", "admin", "automation"))
    if not tokens.has("service"):
        log.warning("no service token in %s: only admin/automation tokens will be accepted", settings.secrets_dir)
    existing = os.environ.get("MCB_WORLD_EXISTING", "") in ("1", "true", "yes")
    session: SessionLock | None = None
    try:
        if existing:
            check_save(world_dir)
            session = SessionLock(world_dir)  # refused while the game has the world open
            pregen, create = None, None  # never add chunks to, or create, a person's save
        world = World.open_or_create(world_dir, Registry.load(), create, pregen)
    except McbError as err:
        print(f"world host: {err.message}", file=sys.stderr)
        if session is not None:
            session.close()
        raise SystemExit(2) from None
    if world.replayed:
        log.warning("replayed %d logged batch(es) onto the region files after an unclean stop", world.replayed)
    world.start_checkpointer(every_s, log_mb)
    if world.recovered:
        log.warning("rolled back %d interrupted batch(es): %s", len(world.recovered), ", ".join(world.recovered))
    projects = settings.load_config().get("projects") or [{}]
    project_id = str(projects[0].get("project_id") or "default") if isinstance(projects[0], dict) else "default"
    host = Host(world, allow_automation=allow, project_id=project_id)
    tune_gc()
    try:
        asyncio.run(_serve(host, tokens, bind, port))
    finally:
        world.close()
        if session is not None:
            session.close()
        log.info("world host stopped; files flushed")


if __name__ == "__main__":
    main()
