"""`mcb chat`: talk to the agent from a terminal against the embedded world (no Paper needed).

Each stdin line is injected as the player's chat line with `automation_chat` (automation token;
the embedded host allows it under `mcb up`), and everything the host shows that player
(`automation_chat_outbox`) is printed. The chat loop runs in this process unless `--no-loop`
(another bridge is already polling). On end of input it waits for the running turns to finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time

import redis.asyncio as aioredis
from mcb.world.v1 import world_pb2
from mcb_common.errors import McbError
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import read_token
from mcb_rpc.worldclient import WorldClient

from .config import ChatConfigError, load_chat_config
from .host import HostChat
from .loop import ChatLoop


def _new_lines(prev: list[str], cur: list[str]) -> list[str]:
    """Lines of `cur` after the overlap with the end of `prev` (the outbox is a bounded window)."""
    for k in range(min(len(prev), len(cur)), 0, -1):
        if prev[-k:] == cur[:k]:
            return cur[k:]
    return cur


async def run(player: str | None, use_loop: bool, wait_s: float, out=sys.stdout) -> int:
    s = Settings.from_env()
    try:
        cfg = load_chat_config(s)
    except ChatConfigError as exc:
        print(f"mcb chat: {exc}", file=sys.stderr)
        return 2
    auto = read_token(s.secrets_dir, "automation")
    if not auto:
        print(f"mcb chat: no automation token in {s.secrets_dir} (run `mcb up`)", file=sys.stderr)
        return 2
    player = player or next(iter(cfg.owners.values()), None)
    if not player:
        print("mcb chat: no project owner in the runtime config; pass --player", file=sys.stderr)
        return 2
    world = WorldClient(cfg.world_url, auto, timeout=30)
    loop: ChatLoop | None = None
    loop_task = None
    host = redis = None
    if use_loop:
        host = HostChat(cfg.world_url, cfg.admin_token)
        redis = aioredis.from_url(cfg.redis_url, decode_responses=True, socket_connect_timeout=3)
        loop = ChatLoop(cfg, host, redis)
        loop_task = asyncio.ensure_future(loop.run())
    seen: list[str] = []
    try:
        seen = list(
            (
                await world.call(
                    "automation_chat_outbox",
                    world_pb2.AutomationChatOutboxParams(player_id=player),
                    world_pb2.AutomationChatOutboxResult,
                )
            ).lines
        )
    except McbError as exc:
        print(f"mcb chat: the world host refused automation_chat_outbox: {exc}", file=sys.stderr)
        return 1
    print(f"chatting as player {player} (Ctrl-D to end; `stop` cancels the running request)", file=sys.stderr)

    async def printer() -> None:
        nonlocal seen
        while True:
            with contextlib.suppress(McbError):
                cur = list(
                    (
                        await world.call(
                            "automation_chat_outbox",
                            world_pb2.AutomationChatOutboxParams(player_id=player),
                            world_pb2.AutomationChatOutboxResult,
                        )
                    ).lines
                )
                for line in _new_lines(seen, cur):
                    print(line, file=out, flush=True)
                seen = cur
            await asyncio.sleep(0.2)

    printing = asyncio.ensure_future(printer())
    reader = asyncio.get_running_loop()
    sent = 0
    try:
        while True:
            line = await reader.run_in_executor(None, sys.stdin.readline)
            if not line:
                break
            text = line.strip()
            if not text:
                continue
            try:
                await world.call(
                    "automation_chat",
                    world_pb2.AutomationChatParams(player_id=player, text=text),
                    world_pb2.AutomationChatResult,
                )
                sent += 1
            except McbError as exc:
                print(f"mcb chat: not sent: {exc}", file=sys.stderr)
        if loop is not None and sent:
            # wait for the queued and running turns, then a quiet moment for the last lines
            deadline = time.monotonic() + wait_s
            await asyncio.sleep(1.0)
            while time.monotonic() < deadline:
                busy = bool(loop.active) or any([await loop.queue.length(p) for p in list(loop.kicks)])
                if not busy:
                    break
                await asyncio.sleep(0.2)
            await asyncio.sleep(0.8)
        return 0
    finally:
        printing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await printing
        if loop is not None:
            assert loop_task is not None and host is not None and redis is not None  # made with the loop
            loop.stopping.set()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(loop_task, 30)
            await host.aclose()
            await redis.aclose()
        await world.aclose()


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="mcb chat", description="talk to the agent against the embedded world")
    ap.add_argument("--player", help="player id (default: the first project's owner)")
    ap.add_argument("--no-loop", action="store_true", help="do not run the chat loop here (another bridge polls)")
    ap.add_argument("--wait", type=float, default=600, help="seconds to wait for running turns at end of input")
    args = ap.parse_args(argv)
    try:
        return asyncio.run(run(args.player, not args.no_loop, args.wait))
    except KeyboardInterrupt:
        return 130
