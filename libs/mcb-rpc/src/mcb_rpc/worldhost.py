"""Who answers at the world-host URL, and may this stack write through it?

Used by ``mcb up`` before it starts anything against an external world host (a Paper server),
and by ``mcb status`` / ``mcb doctor``. The rules (``compatibility_problems``) are pure; the probe
is a thin synchronous HTTP call. Every failure is an ``McbError`` (the project's one error tree)
whose message says what is wrong and what to do, with ``details.reason`` a stable word; tokens are
never part of a message.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from mcb_common.errors import ErrorCode, McbError
from mcb_common.registry import KNOWN_VERSIONS

PROTOCOL = "mcb.world.v1"
# Without these the journal cannot write safely (compare-and-set batches, observed events).
REQUIRED_CAPABILITIES = ("region_read", "blocks_get", "batch_apply", "events_since", "pause")


_CODES = {
    "bad_url": ErrorCode.INVALID_REQUEST,
    "token_file": ErrorCode.INVALID_REQUEST,
    "unreachable": ErrorCode.UNAVAILABLE,
    "not_a_world_host": ErrorCode.UNAVAILABLE,
    "unauthenticated": ErrorCode.UNAUTHENTICATED,
    "permission_denied": ErrorCode.PERMISSION_DENIED,
    "incompatible": ErrorCode.VERSION_MISMATCH,
    "world_info_failed": ErrorCode.UNAVAILABLE,
}


def WorldHostProblem(reason: str, message: str) -> McbError:  # noqa: N802 - reads as the error it builds
    """The world host cannot be used: an McbError with ``details.reason`` (a stable word)."""
    return McbError(_CODES[reason], message, details={"reason": reason})


@dataclass(frozen=True)
class WorldHostIdentity:
    url: str
    host_kind: str
    host_version: str
    server_version: str
    minecraft_version: str
    data_version: int
    world_uuid: str
    world_name: str
    epoch: int
    host_instance: str
    paused: bool
    capabilities: tuple[str, ...]
    warnings: tuple[str, ...] = field(default=())
    last_restart: dict[str, Any] = field(default_factory=dict)  # world_info.lastRestart (hosts that keep state)

    @classmethod
    def from_world_info(cls, url: str, info: dict[str, Any]) -> WorldHostIdentity:
        return cls(
            url=url,
            host_kind=str(info.get("hostKind") or "unknown"),
            host_version=str(info.get("hostVersion") or "?"),
            server_version=str(info.get("serverVersion") or ""),
            minecraft_version=str(info.get("minecraftVersion") or "?"),
            data_version=int(info.get("dataVersion") or 0),
            world_uuid=str(info.get("worldUuid") or ""),
            world_name=str(info.get("worldName") or ""),
            epoch=int(info.get("epoch") or 0),
            host_instance=str(info.get("hostInstance") or ""),
            paused=bool(info.get("paused")),
            capabilities=tuple(str(c) for c in info.get("capabilities") or ()),
            last_restart=dict(info.get("lastRestart") or {}),
        )

    def restart_line(self) -> str:
        """What the host's last start found, when it matters to a person (a crash, lost writes, damage)."""
        r = self.last_restart
        if not r or r.get("previousStop") in (None, "", "none", "clean") and not r.get("stateProblem"):
            return ""
        parts = [f"the server's previous stop was {r.get('previousStop', '?')}"]
        if int(r.get("lostWrites") or 0):
            ops = ", ".join(r.get("affectedOperationIds") or [])
            parts.append(
                f"{r['lostWrites']} of our block writes were rolled back with the world"
                + (f" (operations {ops}: apply them again to restore)" if ops else "")
            )
        if int(r.get("doubtfulBatches") or 0):
            parts.append(f"{r['doubtfulBatches']} batches are re-checked when replayed")
        if r.get("stateProblem"):
            parts.append(f"its state file was damaged and set aside ({r['stateProblem']}); writes are paused")
        return "; ".join(parts)

    @property
    def offers_chat(self) -> bool:
        return "chat" in self.capabilities

    def line(self) -> str:
        server = f" on {self.server_version}" if self.server_version else ""
        paused = ", writes PAUSED (/ai resume)" if self.paused else ""
        return (
            f"{self.host_kind} {self.host_version}{server} (Minecraft {self.minecraft_version}, data version "
            f"{self.data_version}), world {self.world_name!r} {self.world_uuid}, epoch {self.epoch}{paused}; "
            f"capabilities: {', '.join(self.capabilities) or 'none'}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "host_kind": self.host_kind,
            "host_version": self.host_version,
            "server_version": self.server_version,
            "minecraft_version": self.minecraft_version,
            "data_version": self.data_version,
            "world_uuid": self.world_uuid,
            "world_name": self.world_name,
            "epoch": self.epoch,
            "paused": self.paused,
            "capabilities": list(self.capabilities),
            "warnings": list(self.warnings),
            "last_restart": self.last_restart,
        }


def check_url(url: str) -> str:
    """A usable http(s) URL without path, query or credentials; returns it without a trailing /."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as exc:
        raise WorldHostProblem("bad_url", f"world host URL {url!r} is not valid ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WorldHostProblem("bad_url", f"world host URL {url!r} is not an http(s) URL like http://127.0.0.1:8765")
    if parts.username or parts.password:
        raise WorldHostProblem("bad_url", "the world host URL must not carry credentials; use --world-host-token-file")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise WorldHostProblem("bad_url", f"world host URL {url!r} must be scheme://host:port only (no path or query)")
    return f"{parts.scheme}://{parts.netloc}"


def read_token_file(path: Path) -> str:
    """The service token in ``path``; a clear problem when it is missing, empty or not a file."""
    try:
        if not path.is_file():
            raise WorldHostProblem(
                "token_file", f"world host token file {path} does not exist or is not a regular file"
            )
        token = path.read_text().strip()
    except OSError as exc:
        raise WorldHostProblem("token_file", f"cannot read world host token file {path}: {exc.strerror}") from None
    if not token:
        raise WorldHostProblem("token_file", f"world host token file {path} is empty")
    return token


def compatibility_problems(info: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(refusals, warnings) for a ``world_info`` answer. Pure."""
    refusals: list[str] = []
    warnings: list[str] = []
    protocol = info.get("protocolVersion") or PROTOCOL  # hosts before this field spoke v1
    if protocol != PROTOCOL:
        refusals.append(
            f"the world host speaks {protocol}; this stack speaks {PROTOCOL}: update the plugin or the stack"
        )
    known = {dv: version for version, (_, dv) in KNOWN_VERSIONS.items()}
    dv = int(info.get("dataVersion") or 0)
    if dv not in known:
        ours = ", ".join(f"{v} (data version {d})" for v, (_, d) in KNOWN_VERSIONS.items())
        refusals.append(
            f"the server runs Minecraft {info.get('minecraftVersion') or '?'} (data version {dv}); this stack plans "
            f"block states for {ours}: run a matching Paper server, or a stack release for that version"
        )
    caps = set(info.get("capabilities") or ())
    missing = [c for c in REQUIRED_CAPABILITIES if c not in caps]
    if missing:
        refusals.append(f"the world host lacks {', '.join(missing)}; update the plugin")
    if not info.get("worldUuid"):
        refusals.append("the world host did not say which world it serves (no world uuid)")
    if "local_automation" in caps:
        warnings.append("local automation is ON on this host (tests only): the automation token can act as a player")
    if info.get("paused"):
        warnings.append(PAUSED_WARNING)
    return refusals, warnings


PAUSED_WARNING = (
    "writes are paused on the host (an /ai stop, the dashboard's Pause writes or a new bridge; a pause "
    "is kept across restarts); `/ai resume` or the dashboard's Resume writes allows them again"
)


def probe(url: str, token: str, token_source: str, timeout: float = 5.0) -> WorldHostIdentity:
    """GET /health, then world_info with the service token; raises McbError (see WorldHostProblem)."""
    url = check_url(url)
    try:
        with httpx.Client(timeout=timeout) as client:
            try:
                health = client.get(f"{url}/health")
            except httpx.TimeoutException:
                raise WorldHostProblem(
                    "unreachable", f"the world host at {url} did not answer /health within {timeout:g} s"
                ) from None
            except httpx.HTTPError as exc:
                raise WorldHostProblem(
                    "unreachable",
                    f"cannot reach the world host at {url} ({exc.__class__.__name__}): is the server running with the "
                    f"MinecraftBuilderMcp plugin, and is `port` in its config.yml the same? Try: curl {url}/health",
                ) from None
            try:
                hbody = health.json()
            except ValueError:
                hbody = None
            if health.status_code != 200 or not isinstance(hbody, dict) or "protocolVersion" not in hbody:
                raise WorldHostProblem(
                    "not_a_world_host",
                    f"{url} answered /health with HTTP {health.status_code} but is not a world host (no {PROTOCOL} "
                    "health document): check the port",
                )
            r = client.post(
                f"{url}/v1/rpc",
                json={"method": "world_info", "params": {}, "requestId": "mcb-up"},
                headers={"Authorization": f"Bearer {token}"},
            )
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise WorldHostProblem(
            "unreachable", f"the world host at {url} failed during world_info ({exc.__class__.__name__})"
        ) from None
    if r.status_code == 401:
        raise WorldHostProblem(
            "unauthenticated",
            f"the world host at {url} refused the service token from {token_source}: put the same token in the "
            "plugin's secrets/service.token (plugins/MinecraftBuilderMcp/secrets/) or point --world-host-token-file "
            "at that file",
        )
    if r.status_code == 403:
        raise WorldHostProblem(
            "permission_denied",
            f"the token from {token_source} is not the world host's service token (it was accepted for another "
            "principal): use service.token, never the admin or automation token",
        )
    try:
        body = r.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or not body.get("ok"):
        err = (body or {}).get("error") or {} if isinstance(body, dict) else {}
        raise WorldHostProblem(
            "world_info_failed",
            f"world_info failed at {url}: HTTP {r.status_code} {err.get('code', '')} {err.get('message', '')}".strip(),
        )
    info = body.get("result") or {}
    refusals, warnings = compatibility_problems(info)
    if refusals:
        raise WorldHostProblem("incompatible", "; ".join(refusals))
    return replace(WorldHostIdentity.from_world_info(url, info), warnings=tuple(warnings))
