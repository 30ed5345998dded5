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
    """A bad config.json; ``field`` names the key at fault (None: the file itself)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field

    def payload(self) -> dict[str, object]:
        """The toolchain's structured error (the mod's shape: error, details, field)."""
        out: dict[str, object] = {"error": "invalid_config", "details": str(self)}
        if self.field:
            out["field"] = self.field
        return out


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
            raise ConfigError(
                f"{where}: unknown key {sorted(extra)[0]!r} (allowed: modHost, modPort, timeout)", sorted(extra)[0]
            )
        host = data.get("modHost", "127.0.0.1")
        port = data.get("modPort", DEFAULT_PORT)
        timeout = data.get("timeout", 10)
        if host not in LOOPBACK:
            raise ConfigError(
                f"{where}: modHost must be 127.0.0.1 (the mod listens on loopback only), not {host!r}", "modHost"
            )
        if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
            raise ConfigError(f"{where}: modPort must be an integer 1..65535", "modPort")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= 300:
            raise ConfigError(f"{where}: timeout must be a number of seconds in (0, 300]", "timeout")
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


def config_path(path: str | os.PathLike[str] | None = None) -> Path:
    """Where `oni setup` writes: the explicit path, else $ONI_AGENT_CONFIG, else ./config.json."""
    return Path(path or os.environ.get("ONI_AGENT_CONFIG") or "config.json")


def setup(path: Path, overrides: dict[str, object], fresh: bool = False) -> tuple[OniConfig, str]:
    """Write config.json with ``overrides`` over what the file holds (or the defaults when it does
    not exist or ``fresh``); validated before anything is written. Returns the settings and what
    happened: "created", "updated" or "unchanged" (the same settings twice write nothing)."""
    current: dict[str, object] = {}
    if path.exists() and not fresh:
        try:
            current = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{path}: cannot read it as JSON ({exc}); fix it or pass --fresh") from None
        if not isinstance(current, dict):
            raise ConfigError(f"{path}: must be a JSON object; fix it or pass --fresh")
    base = OniConfig()
    merged = {
        "modHost": base.modHost,
        "modPort": base.modPort,
        "timeout": base.timeout,
        **current,
        **{k: v for k, v in overrides.items() if v is not None},
    }
    cfg = OniConfig.from_dict(merged, str(path))
    t = int(cfg.timeout) if cfg.timeout == int(cfg.timeout) else cfg.timeout
    text = json.dumps({"modHost": cfg.modHost, "modPort": cfg.modPort, "timeout": t}, indent=2) + "\n"
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return cfg, "unchanged"
    what = "updated" if path.exists() else "created"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return cfg, what
