"""config.json as seed 004 defines it: {"modHost": "127.0.0.1", "modPort": 23876, "timeout": 10}.

Lookup: an explicit path, else $ONI_AGENT_CONFIG, else ./config.json, else the defaults. modHost must
be a loopback address (the mod listens on 127.0.0.1 only).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PORT = 23876
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class OniConfig:
    modHost: str = "127.0.0.1"  # noqa: N815 - the seed's names
    modPort: int = DEFAULT_PORT  # noqa: N815
    timeout: float = 10.0

    @property
    def base_url(self) -> str:
        host = f"[{self.modHost}]" if ":" in self.modHost else self.modHost
        return f"http://{host}:{self.modPort}"

    @classmethod
    def from_dict(cls, data: object, where: str = "config") -> OniConfig:
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: must be a JSON object with modHost, modPort, timeout")
        extra = set(data) - {"modHost", "modPort", "timeout"}
        if extra:
            raise ConfigError(f"{where}: unknown key {sorted(extra)[0]!r} (allowed: modHost, modPort, timeout)")
        host = data.get("modHost", "127.0.0.1")
        port = data.get("modPort", DEFAULT_PORT)
        timeout = data.get("timeout", 10)
        if host not in LOOPBACK:
            raise ConfigError(f"{where}: modHost must be 127.0.0.1 (the mod listens on loopback only), not {host!r}")
        if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
            raise ConfigError(f"{where}: modPort must be an integer 1..65535")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= 300:
            raise ConfigError(f"{where}: timeout must be a number of seconds in (0, 300]")
        return cls(host, port, float(timeout))


def load(path: str | os.PathLike[str] | None = None) -> OniConfig:
    candidates = [path] if path else [os.environ.get("ONI_AGENT_CONFIG") or None, "config.json"]
    for c in candidates:
        if not c:
            continue
        p = Path(c)
        if not p.exists():
            if path:
                raise ConfigError(f"{p}: no such file")
            continue
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{p}: cannot read it as JSON: {exc}") from None
        return OniConfig.from_dict(data, str(p))
    return OniConfig()
