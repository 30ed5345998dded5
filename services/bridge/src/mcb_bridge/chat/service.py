"""`python -m mcb_bridge chat`: the chat loop as a long-running process (Ctrl-C / SIGTERM stop it)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

import redis.asyncio as aioredis

from .config import ChatConfig, ChatConfigError, load_chat_config
from .host import HostChat
from .loop import ChatLoop

log = logging.getLogger("mcb.chat")


async def serve(cfg: ChatConfig, ready: asyncio.Event | None = None) -> ChatLoop:
    host = HostChat(cfg.world_url, cfg.admin_token)
    r = aioredis.from_url(cfg.redis_url, decode_responses=True, socket_connect_timeout=3)
    loop = ChatLoop(cfg, host, r)
    stop = loop.stopping
    running = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            running.add_signal_handler(sig, stop.set)
    try:
        await loop.run()
    finally:
        await host.aclose()
        await r.aclose()
    return loop


def main() -> int:
    try:
        cfg = load_chat_config()
    except ChatConfigError as exc:
        log.error("cannot start the chat loop: %s", exc)
        return 2
    try:
        cfg.agent_argv()
    except ChatConfigError as exc:
        # Keep polling: every request is answered with this reason instead of hanging.
        log.warning("%s", exc)
    asyncio.run(serve(cfg))
    return 0
