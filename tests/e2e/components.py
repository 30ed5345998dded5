"""The stack as separately controlled processes (for crash and restart tests).

Unlike `mcb up` (which stops everything when one service dies), each service here can be
killed with SIGKILL and restarted, e.g. the journal with a named fault point armed.
"""

from __future__ import annotations

import json
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from harness import Proc, free_ports, start_process, start_redis

PY = sys.executable


@dataclass
class Components:
    runtime: Path
    env: dict[str, str]
    ports: dict[str, int]
    procs: dict[str, Proc] = field(default_factory=dict)

    def token(self, principal: str) -> str:
        return (self.runtime / "secrets" / f"{principal}.token").read_text().strip()

    @property
    def world_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['world_host']}"

    @property
    def mcp_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['bridge']}/mcp"

    def world_rpc(self, method: str, params: dict, principal: str = "service") -> dict:
        r = httpx.post(f"{self.world_url}/v1/rpc", json={"method": method, "params": params, "requestId": "t"},
                       headers={"Authorization": f"Bearer {self.token(principal)}"}, timeout=30)
        body = r.json()
        assert body["ok"], body
        return body["result"]

    def start(self, name: str, extra_env: dict[str, str] | None = None, wait: bool = True) -> Proc:
        module, args, health = {
            "world-host": ("mcb_world_host", [], f"{self.world_url}/health"),
            "planner": ("mcb_planner", [], f"http://127.0.0.1:{self.ports['planner_health']}/health"),
            "journal": ("mcb_journal", [], f"http://127.0.0.1:{self.ports['journal_health']}/health"),
            "bridge": ("mcb_bridge", ["http"], f"http://127.0.0.1:{self.ports['bridge']}/health"),
        }[name]
        env = dict(self.env)
        env.update(extra_env or {})
        proc = start_process(name, [PY, "-m", module, *args], self.runtime / "logs", env=env,
                             health_url=health, timeout=60)
        self.procs[name] = proc
        return proc

    def stop_all(self) -> None:
        for p in reversed(list(self.procs.values())):
            p.stop()


def run(comp: Components, scenario) -> None:
    """Run ``scenario(client)`` with an MCP client (HTTP, agent token) on ``comp``."""
    import anyio
    from e2e.mcpclient import http_client

    async def main():
        async with http_client(comp.mcp_url, comp.token("agent")) as client:
            await scenario(client)

    anyio.run(main)


def start_components(runtime: Path) -> Components:
    runtime.mkdir(parents=True, exist_ok=True)
    from mcb_rpc.tokens import PRINCIPALS, ensure_token

    for principal in PRINCIPALS:
        ensure_token(runtime / "secrets", principal)
    player = str(uuid.uuid4())
    (runtime / "config.json").write_text(json.dumps({"projects": [{
        "project_id": "default", "name": "Default", "owner_player_id": player,
        "area": {"min": {"x": -64, "y": -64, "z": -64}, "max": {"x": 63, "y": 319, "z": 63}}}]}))
    names = ["world_host", "bridge", "planner_grpc", "journal_grpc", "camera_grpc", "planner_health",
             "journal_health", "camera_health"]
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    redis_proc, redis_url = start_redis(runtime)
    env = {"MCB_RUNTIME_DIR": str(runtime), "MCB_REDIS_URL": redis_url, "MCB_WORLD_CREATE": "flat",
           "MCB_WORLD_PREGEN": "-64,-64,63,63", "MCB_ALLOW_LOCAL_AUTOMATION": "1",
           "MCB_WORLD_DIR": str(runtime / "world"), "PYTHONUNBUFFERED": "1",
           # a restarted world host on a loaded 2-core CI machine may take longer than 10 s
           "MCB_LINK_RETRY_SECONDS": "60"}
    for n, p in ports.items():
        env[f"MCB_{n.upper()}_PORT"] = str(p)
    c = Components(runtime, env, ports, {"redis": redis_proc})
    for name in ("world-host", "planner", "journal", "bridge"):
        c.start(name)
    return c
