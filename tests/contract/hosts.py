"""World-host factories for the conformance suite.

A factory starts one host and returns a ``HostHandle``; the suite talks to it only over
HTTP. Register another implementation (e.g. the Java core host) by adding a factory to
``FACTORIES``; tests needing something only some hosts offer check the handle's fields.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness import Proc, free_port, start_process
from mcb_rpc.tokens import ensure_token


@dataclass
class HostHandle:
    name: str
    base_url: str
    tokens: dict[str, str]
    automation: bool
    world_dir: Path | None = None  # set when the host writes a real save we can inspect
    restart: Callable[[bool], None] | None = None  # restart(kill9)
    stop: Callable[[], None] = lambda: None
    extra: dict = field(default_factory=dict)


def embedded(tmp: Path, automation: bool = True) -> HostHandle:
    runtime = tmp / "runtime"
    secrets_dir = runtime / "secrets"
    tokens = {p: ensure_token(secrets_dir, p) for p in ("service", "admin", "automation", "agent")}
    port = free_port()
    env = {
        "MCB_RUNTIME_DIR": str(runtime),
        "MCB_SECRETS_DIR": str(secrets_dir),
        "MCB_WORLD_DIR": str(runtime / "world"),
        "MCB_WORLD_CREATE": "flat",
        "MCB_WORLD_PREGEN": "-32,-32,31,31",
        "MCB_WORLD_HOST_PORT": str(port),
        "MCB_BIND_HOST": "127.0.0.1",
        "MCB_ALLOW_LOCAL_AUTOMATION": "1" if automation else "0",
        # token files only: never a token inherited from the environment
        **{f"MCB_{p.upper()}_TOKEN": "" for p in ("service", "admin", "automation", "agent")},
        "PYTHONUNBUFFERED": "1",
    }
    url = f"http://127.0.0.1:{port}"
    state: dict[str, Proc] = {}

    def start() -> None:
        state["proc"] = start_process("world-host", [sys.executable, "-m", "mcb_world_host"], tmp / "logs",
                                      env=env, health_url=f"{url}/health", timeout=60)

    def restart(kill9: bool) -> None:
        proc = state["proc"]
        if kill9:
            proc.kill9()
        else:
            proc.stop()
        start()

    def stop() -> None:
        state["proc"].stop()

    start()
    return HostHandle("embedded", url, tokens, automation, runtime / "world", restart, stop)


FACTORIES: dict[str, Callable[[Path, bool], HostHandle]] = {"embedded": embedded}
