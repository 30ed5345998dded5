"""`mcb doctor`: one JSON document — host health, chat configuration (never a secret), pinned
versions, the isolation the agent is started with, and what is NOT isolated."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from importlib import metadata
from typing import Any

from mcb_common.errors import McbError
from mcb_rpc.settings import Settings
from mcb_rpc.worldhost import probe as world_probe

from . import isolation
from .config import ChatConfigError, load_chat_config, pinned_codex_acp
from .login import pinned_codex_cli


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


async def _probe(cfg: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    from .host import HostChat

    host = HostChat(cfg.world_url, cfg.admin_token or "none", timeout=3)
    try:
        out["world_host"] = {"url": cfg.world_url, "health": await host.health()}
    except Exception as exc:  # noqa: BLE001
        out["world_host"] = {"url": cfg.world_url, "error": str(exc)}
    finally:
        await host.aclose()
    import redis.asyncio as aioredis

    r = aioredis.from_url(cfg.redis_url, socket_connect_timeout=2, socket_timeout=2)
    try:
        out["redis"] = {"url": cfg.redis_url, "ok": bool(await r.ping())}
    except Exception as exc:  # noqa: BLE001
        out["redis"] = {"url": cfg.redis_url, "ok": False, "error": exc.__class__.__name__}
    finally:
        await r.aclose()
    return out


def agent_credentials(cfg: Any) -> tuple[dict[str, Any], str | None]:
    """What the chat agent can authenticate with (never the secret itself), and the problem when
    the pinned Codex agent has nothing: no API key (MCB_OPENAI_API_KEY / MCB_CODEX_API_KEY) and no
    device-code login in its own Codex home (`mcb login` writes auth.json there). A custom agent
    (MCB_ACP_COMMAND) brings its own credentials; they are not checked."""
    login = isolation.paths(cfg)["codex_home"] / "auth.json"
    info = {"api_key": bool(cfg.api_key), "codex_login": login.is_file(), "codex_login_file": str(login)}
    if cfg.acp_command:
        return {**info, "checked": False, "note": "custom agent (MCB_ACP_COMMAND): its credentials are its own"}, None
    if cfg.api_key or login.is_file():
        return {**info, "checked": True}, None
    return {**info, "checked": True}, (
        "the chat agent has no credentials: set MCB_OPENAI_API_KEY (or "
        f"MCB_CODEX_API_KEY), or run `mcb login` (device code; writes {login})"
    )


def report() -> dict[str, Any]:
    s = Settings.from_env()
    doc: dict[str, Any] = {"ok": True, "problems": []}
    try:
        cfg = load_chat_config(s, require_tokens=False)
    except ChatConfigError as exc:
        return {"ok": False, "problems": [str(exc)]}
    doc.update(asyncio.run(_probe(cfg)))
    if "error" in doc["world_host"]:
        doc["problems"].append("the world host is not reachable (is `mcb up` running?)")
    else:
        try:  # which host: kind, versions, world, capabilities (checked as `mcb up` checks it)
            ident = world_probe(
                cfg.world_url,
                s.world_host_token("service") or "",
                str(s.world_host_token_file or s.secrets_dir / "service.token"),
                timeout=3.0,
            )
            doc["world_host"]["identity"] = ident.as_dict()
            if not ident.offers_chat:
                doc["problems"].append("the world host does not offer chat: /ai messages cannot reach the agent")
        except McbError as exc:
            doc["world_host"]["identity_error"] = exc.message
            doc["problems"].append(exc.message)
    if not doc["redis"]["ok"]:
        doc["problems"].append("Redis is not reachable")
    try:
        argv = cfg.agent_argv()
        agent = {"argv": argv, "custom": bool(cfg.acp_command)}
    except ChatConfigError as exc:
        agent = {"argv": None, "error": str(exc)}
        doc["problems"].append(str(exc))
    credentials, missing = agent_credentials(cfg)
    agent["credentials"] = credentials
    if missing:
        doc["problems"].append(missing)
    p = isolation.paths(cfg)
    doc["config"] = {
        "runtime_dir": str(cfg.runtime_dir),
        "state_dir": str(cfg.state_dir),
        "agent": agent,
        "model": cfg.model or "(the agent's default)",
        "api_key": (
            "set from " + ("MCB_OPENAI_API_KEY" if os.environ.get("MCB_OPENAI_API_KEY") else "MCB_CODEX_API_KEY")
        )
        if cfg.api_key
        else "not set (OPENAI_API_KEY is never inherited)",
        "auth_method": cfg.auth_method,
        "admin_token": "present" if cfg.admin_token else "missing",
        "agent_token": "present" if cfg.agent_token else "missing",
        "max_queued_per_project": cfg.max_queued,
        "messages_per_second_per_player": cfg.rate_per_s,
        "cancel_grace_s": cfg.cancel_grace_s,
        "projects_with_owner": sorted(cfg.owners),
        "mcp_server_for_agent": list(cfg.mcp_command),
    }
    if not cfg.admin_token or not cfg.agent_token:
        doc["problems"].append("tokens missing: run `mcb up` once (it writes secrets/)")
    doc["pinned"] = {
        "codex_acp": pinned_codex_acp(),
        "codex_cli_for_login": pinned_codex_cli(),
        "agent-client-protocol": _version("agent-client-protocol"),
        "mcp": _version("mcp"),
        "redis-py": _version("redis"),
    }
    doc["isolation"] = {
        **isolation.ISOLATION_SETTINGS,
        "home": str(p["home"]),
        "codex_home": str(p["codex_home"]),
        "codex_config": isolation.CODEX_CONFIG.splitlines()[1:],
        "admin_token_in_agent_env": False,
    }
    doc["not_isolated"] = isolation.NOT_ISOLATED
    doc["ok"] = not doc["problems"]
    return doc


def main() -> int:
    doc = report()
    print(json.dumps(doc, indent=2))
    if not doc["ok"]:  # one clear line per problem where a person looks, beside the JSON
        for problem in doc["problems"]:
            print(f"mcb doctor: {problem}", file=sys.stderr)
    return 0 if doc["ok"] else 1
