"""A small HTTP client for the mod API (stdlib only). Errors are ``ModError`` carrying the mod's
``{"error": type, "details": ...}``; a mod that cannot be reached is ``ModError("unreachable")``."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode

from .config import OniConfig

STATES = ("game", "resources", "duplicants", "buildings", "research", "geysers", "alert", "critters", "actions")
ACTIONS = (
    "dig",
    "build",
    "deconstruct",
    "prioritize",
    "research",
    "schedule",
    "wardrobe",
    "utility",
    "speed",
    "cancel",
    "plant",
    "mop",
    "sweep",
    "harvest",
)


class ModError(Exception):
    def __init__(self, error: str, details: str = "", status: int = 0, payload: dict[str, Any] | None = None):
        super().__init__(f"{error}: {details}" if details else error)
        self.error, self.details, self.status = error, details, status
        self.payload = payload or {"error": error, "details": details}


class ModClient:
    def __init__(self, base_url: str, timeout: float = 10.0) -> None:
        self.base_url, self.timeout = base_url.rstrip("/"), timeout

    @classmethod
    def from_config(cls, cfg: OniConfig) -> ModClient:
        return cls(cfg.base_url, cfg.timeout)

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None, query: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, str]]:
        url = self.base_url + path + (("?" + urlencode(query)) if query else "")
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            url, data=data, method=method, headers={"Content-Type": "application/json"} if data else {}
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - loopback URL
                return json.loads(resp.read() or b"null"), dict(resp.headers)
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                payload = json.loads(raw)
            except ValueError:
                payload = None
            if isinstance(payload, dict) and isinstance(payload.get("error"), str):
                raise ModError(payload["error"], str(payload.get("details") or ""), exc.code, payload) from None
            raise ModError("invalid_response", f"HTTP {exc.code} without an error body", exc.code) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ModError(
                "unreachable",
                f"no mod answering at {self.base_url} ({reason}); is the game "
                "running with the mod enabled, and modPort right in config.json?",
            ) from None
        except ValueError:
            raise ModError("invalid_response", f"{path} did not answer JSON") from None

    def health(self) -> dict[str, Any]:
        return self.request("GET", "/health")[0]

    def state(self, what: str, **query: Any) -> Any:
        return self.request("GET", f"/api/state/{what}", query={k: v for k, v in query.items() if v is not None})[0]

    def state_page(
        self, what: str, offset: int, limit: int, world: int | None = None
    ) -> tuple[list[Any], int, int | None]:
        """One page of a list endpoint: (items, X-Total-Count, X-Next-Offset or None on the last); of
        world ``world`` (Spaced Out's worldId), the active world's when None."""
        query: dict[str, Any] = {"offset": offset, "limit": limit}
        if world is not None:
            query["worldId"] = world
        items, headers = self.request("GET", f"/api/state/{what}", query=query)
        h = {k.lower(): v for k, v in headers.items()}
        nxt = h.get("x-next-offset")
        return items, int(h.get("x-total-count") or len(items)), int(nxt) if nxt else None

    def state_all(self, what: str, page: int = 500) -> list[Any]:
        """Every page of a list endpoint (offset/limit, X-Next-Offset)."""
        out: list[Any] = []
        offset: int | None = 0
        while offset is not None:
            items, _, nxt = self.state_page(what, offset, page)
            out += items
            if nxt is not None and nxt <= offset:  # a mod that does not move on would loop here for good
                raise ModError(
                    "invalid_response", f"/api/state/{what}: X-Next-Offset {nxt} does not advance past offset {offset}"
                )
            offset = nxt
        return out

    def map(self, x: int, y: int, width: int, height: int, world: int | None = None) -> dict[str, Any]:
        return self.state("map", x=x, y=y, width=width, height=height, worldId=world)

    def action(self, what: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", f"/api/action/{what}", body)[0]
