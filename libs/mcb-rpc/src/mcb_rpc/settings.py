"""Runtime settings from the environment (``MCB_*``), with loopback defaults.

The local runner (``mcb up``) and compose.yaml set the same variables. Nothing here is
secret: tokens are read from files in ``secrets_dir`` (see tokens.py).

Ports: ``MCB_<NAME>_PORT`` in the environment, else the ``ports`` that `mcb up` wrote into the
runtime's config.json (so every later `mcb` command and the stdio bridge find the stack that runs
there, whatever ports it was started on), else ``DEFAULT_PORTS``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_PORTS = {
    "world_host": 8765,  # world protocol (HTTP)
    "bridge": 8787,  # MCP streamable HTTP + /health
    "planner_grpc": 50061,
    "journal_grpc": 50062,
    "camera_grpc": 50064,
    "planner_health": 8791,
    "journal_health": 8792,
    "camera_health": 8794,
    "dashboard": 8790,  # the ops dashboard (HTTP, services/dashboard)
    "camera_link": 8766,  # the camera worker's WebSocket for a Fabric camera client (docs/camera-link.md)
    "redis": 6389,
}


def _env(name: str, default: str) -> str:
    v = os.environ.get(name)
    return v if v not in (None, "") else default


@dataclass
class Settings:
    runtime_dir: Path
    bind_host: str
    world_host_url: str
    planner_addr: str
    journal_addr: str
    camera_addr: str
    redis_url: str
    ports: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_PORTS))

    @property
    def secrets_dir(self) -> Path:
        return Path(_env("MCB_SECRETS_DIR", str(self.runtime_dir / "secrets")))

    @property
    def world_host_token_file(self) -> Path | None:
        """The external world host's service-token file, or None (the stack's own tokens)."""
        raw = _env("MCB_WORLD_HOST_TOKEN_FILE", "") or str(self._world_host_config().get("token_file") or "")
        return Path(raw).expanduser() if raw else None

    def world_host_token(self, principal: str = "service") -> str | None:
        from .tokens import world_host_token

        return world_host_token(self.secrets_dir, principal, self.world_host_token_file)

    def _world_host_config(self) -> dict[str, Any]:
        try:
            section = self.load_config().get("world_host")
        except (OSError, ValueError):
            return {}
        return section if isinstance(section, dict) else {}

    @property
    def config_file(self) -> Path:
        return Path(_env("MCB_CONFIG", str(self.runtime_dir / "config.json")))

    def port(self, name: str) -> int:
        return int(_env(f"MCB_{name.upper()}_PORT", str(self.ports[name])))

    def all_ports(self) -> dict[str, int]:
        """Every port of the stack as this process sees it (environment, config.json, defaults)."""
        return {name: self.port(name) for name in self.ports}

    def load_config(self) -> dict[str, Any]:
        """The non-secret project configuration written by the runner (projects, world)."""
        try:
            return json.loads(self.config_file.read_text())
        except FileNotFoundError:
            return {}

    @classmethod
    def from_env(cls) -> Settings:
        runtime = Path(_env("MCB_RUNTIME_DIR", ".runtime")).resolve()
        host = "127.0.0.1"
        # An external world host (a Paper server) configured in config.json `world_host.url`
        # applies when MCB_WORLD_HOST_URL is not set (the runner sets it for its children).
        external = ""
        saved: dict[str, int] = {}
        try:
            cfg = json.loads(Path(_env("MCB_CONFIG", str(runtime / "config.json"))).read_text())
            section = cfg.get("world_host")
            if isinstance(section, dict) and isinstance(section.get("url"), str):
                external = section["url"]
            saved = saved_ports(cfg)
        except (OSError, ValueError, AttributeError):
            pass
        # Addresses default to loopback on the ports: MCB_<NAME>_PORT, else those `mcb up` saved.
        base = {**DEFAULT_PORTS, **saved}
        p = {name: int(_env(f"MCB_{name.upper()}_PORT", str(v))) for name, v in base.items()}
        return cls(
            runtime_dir=runtime,
            bind_host=_env("MCB_BIND_HOST", host),
            world_host_url=_env("MCB_WORLD_HOST_URL", external or f"http://{host}:{p['world_host']}"),
            planner_addr=_env("MCB_PLANNER_ADDR", f"{host}:{p['planner_grpc']}"),
            journal_addr=_env("MCB_JOURNAL_ADDR", f"{host}:{p['journal_grpc']}"),
            camera_addr=_env("MCB_CAMERA_ADDR", f"{host}:{p['camera_grpc']}"),
            redis_url=_env("MCB_REDIS_URL", f"redis://{host}:{p['redis']}/0"),
            ports=base,
        )


def saved_ports(cfg: dict[str, Any]) -> dict[str, int]:
    """The ``ports`` section of a config.json (known names, valid TCP ports only)."""
    section = cfg.get("ports") if isinstance(cfg, dict) else None
    if not isinstance(section, dict):
        return {}
    return {
        k: v
        for k, v in section.items()
        if k in DEFAULT_PORTS and isinstance(v, int) and not isinstance(v, bool) and 0 < v < 65536
    }
