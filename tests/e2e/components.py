"""The stack as separately controlled processes (for crash and restart tests).

Unlike `mcb up` (which stops everything when one service dies), each service here can be
killed with SIGKILL and restarted, e.g. the journal with a named fault point armed. The world
host is either one (``worldhost.HOSTS``): the embedded host as one more process here, or the Java
test host, started first with its own secrets and reached by the services as an external host.
"""

from __future__ import annotations

import json
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from e2e.worldhost import PREGEN, OnWorldHost, WorldHost, external_host
from harness import Proc, free_ports, start_process, start_redis

PY = sys.executable


@dataclass
class Components(OnWorldHost):
    runtime: Path
    env: dict[str, str]
    ports: dict[str, int]
    world: WorldHost
    procs: dict[str, Proc] = field(default_factory=dict)

    def start(self, name: str, extra_env: dict[str, str] | None = None) -> Proc:
        if name == "world-host" and self.world.external:
            self.procs[name] = self.world.start()
            return self.procs[name]
        module, args, health = {
            "world-host": ("mcb_world_host", [], f"{self.world_url}/health"),
            "planner": ("mcb_planner", [], f"http://127.0.0.1:{self.ports['planner_health']}/health"),
            "journal": ("mcb_journal", [], f"http://127.0.0.1:{self.ports['journal_health']}/health"),
            "bridge": ("mcb_bridge", ["http"], f"http://127.0.0.1:{self.ports['bridge']}/health"),
            "camera-worker": ("mcb_camera", [], f"http://127.0.0.1:{self.ports['camera_health']}/health"),
            "dashboard": ("mcb_dashboard", [], f"http://127.0.0.1:{self.ports['dashboard']}/health"),
        }[name]
        env = dict(self.env)
        env.update(extra_env or {})
        proc = start_process(
            name, [PY, "-m", module, *args], self.runtime / "logs", env=env, health_url=health, timeout=60
        )
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


def start_components(runtime: Path, host: str = "embedded") -> Components:
    """Redis, a world host of kind ``host``, planner, journal and bridge (the camera worker and the
    dashboard when a test starts them: ``start("camera-worker")``, ``start("dashboard")``)."""
    runtime.mkdir(parents=True, exist_ok=True)
    from mcb_rpc.tokens import PRINCIPALS, ensure_token

    for principal in PRINCIPALS:
        ensure_token(runtime / "secrets", principal)
    player = str(uuid.uuid4())
    (runtime / "config.json").write_text(
        json.dumps(
            {
                "projects": [
                    {
                        "project_id": "default",
                        "name": "Default",
                        "owner_player_id": player,
                        "area": {"min": {"x": -64, "y": -64, "z": -64}, "max": {"x": 63, "y": 319, "z": 63}},
                    }
                ]
            }
        )
    )
    names = [
        "world_host",
        "bridge",
        "planner_grpc",
        "journal_grpc",
        "camera_grpc",
        "planner_health",
        "journal_health",
        "camera_health",
        "dashboard",
    ]
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    env = {
        "MCB_RUNTIME_DIR": str(runtime),
        "MCB_WORLD_CREATE": "flat",
        "MCB_WORLD_PREGEN": PREGEN,
        "MCB_ALLOW_LOCAL_AUTOMATION": "1",
        "MCB_WORLD_DIR": str(runtime / "world"),
        "PYTHONUNBUFFERED": "1",
        # a restarted world host on a loaded 2-core CI machine may take longer than 10 s
        "MCB_LINK_RETRY_SECONDS": "60",
    }
    for n, p in ports.items():
        env[f"MCB_{n.upper()}_PORT"] = str(p)
    procs: dict[str, Proc] = {}
    if host == "embedded":
        world = WorldHost("embedded", f"http://127.0.0.1:{ports['world_host']}", runtime / "secrets")
        names = ["world-host", "planner", "journal", "bridge"]
    else:  # first: it skips the test where no JDK/Maven is found
        world = external_host(host, runtime.parent / f"{host}-host")
        procs["world-host"] = world.proc
        env.update(world.stack_env())
        names = ["planner", "journal", "bridge"]
    c = Components(runtime, env, ports, world, procs)
    try:
        procs["redis"], env["MCB_REDIS_URL"] = start_redis(runtime)
        for name in names:
            c.start(name)
    except BaseException:
        c.stop_all()
        raise
    return c
