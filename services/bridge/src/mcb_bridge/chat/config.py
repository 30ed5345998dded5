"""Trusted configuration of the chat loop. Nothing here comes from the model or from chat.

Environment:
  MCB_ADMIN_TOKEN / secrets/admin.token   chat_poll / chat_reply (never given to the agent)
  MCB_AGENT_TOKEN / secrets/agent.token   handed to the agent's MCP server only
  MCB_CHAT_STATE_DIR                      default $MCB_RUNTIME_DIR/chat
  MCB_ACP_COMMAND, MCB_ACP_ARGS           another ACP agent: a path and a JSON array (no shell)
  MCB_MODEL                               model id, applied through the agent's model selector
  MCB_OPENAI_API_KEY / MCB_CODEX_API_KEY  the only sources of an API key for the agent
  MCB_ACP_AUTH_METHOD                     ACP auth method id to call `authenticate` with
  MCB_CHAT_MAX_QUEUED (8), MCB_CHAT_RATE (4 messages/s per player), MCB_CHAT_CANCEL_GRACE (5 s)
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mcb_rpc.settings import Settings
from mcb_rpc.tokens import read_token

BRIDGE_DIR = Path(__file__).resolve().parents[3]  # services/bridge
ACP_DIR = BRIDGE_DIR / "acp"
CODEX_ACP_PACKAGE = "@zed-industries/codex-acp"


class ChatConfigError(Exception):
    """The chat loop cannot start; the message says what to set."""


def _platform_package() -> str:
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}.get(
        platform.system(), platform.system().lower()
    )
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return f"{CODEX_ACP_PACKAGE}-{system}-{arch}"


def pinned_codex_acp() -> dict[str, str | None]:
    """Version pinned in acp/package.json, the installed version and its native binary (or None)."""
    pinned = None
    try:
        pinned = json.loads((ACP_DIR / "package.json").read_text())["dependencies"][CODEX_ACP_PACKAGE]
    except (OSError, ValueError, KeyError):
        pass
    pkg_dir = ACP_DIR / "node_modules" / _platform_package()
    binary = pkg_dir / "bin" / ("codex-acp.exe" if sys.platform == "win32" else "codex-acp")
    installed = None
    try:
        installed = json.loads((pkg_dir / "package.json").read_text()).get("version")
    except (OSError, ValueError):
        pass
    return {
        "package": CODEX_ACP_PACKAGE,
        "pinned": pinned,
        "installed": installed,
        "binary": str(binary) if binary.exists() else None,
        "install_hint": f"cd {ACP_DIR} && npm ci --ignore-scripts",
    }


def mcp_server_command() -> list[str]:
    """How the agent starts our MCP server over stdio: `mcb mcp` (or `python -m mcb_bridge stdio`)."""
    mcb = Path(sys.executable).with_name("mcb")
    if mcb.exists():
        return [str(mcb), "mcp"]
    return [sys.executable, "-m", "mcb_bridge", "stdio"]


@dataclass(frozen=True)
class ChatConfig:
    world_url: str
    redis_url: str
    journal_addr: str
    runtime_dir: Path
    state_dir: Path
    admin_token: str = field(repr=False)  # the WORLD HOST's admin token: chat_poll / chat_reply only
    agent_token: str = field(repr=False)
    acp_command: str | None = None
    acp_args: tuple[str, ...] = ()
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)
    auth_method: str | None = None
    max_queued: int = 8
    rate_per_s: int = 4
    cancel_grace_s: float = 5.0
    poll_interval_s: float = 0.2
    mcp_command: tuple[str, ...] = ()
    # this stack's own admin token, for the journal (part protection); never sent to the world host
    journal_admin_token: str = field(default="", repr=False)
    owners: dict[str, str] = field(default_factory=dict)  # project id -> owner player id (trusted config)
    camera_addr: str = "127.0.0.1:9"
    config_file: Path | None = None  # the runtime config (projects); default runtime_dir/config.json

    @property
    def config_path(self) -> Path:
        return self.config_file or self.runtime_dir / "config.json"

    def agent_argv(self) -> list[str]:
        """The agent's argv; raises ChatConfigError when no agent is available."""
        if self.acp_command:
            return [self.acp_command, *self.acp_args]
        pin = pinned_codex_acp()
        if not pin["binary"]:
            raise ChatConfigError(
                f"the pinned {CODEX_ACP_PACKAGE} {pin['pinned']} is not installed: run `{pin['install_hint']}` "
                "(scripts/bootstrap.sh does), or set MCB_ACP_COMMAND to another ACP agent"
            )
        return [str(pin["binary"]), *self.acp_args]


def _num(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ChatConfigError(f"{name} must be a number") from None


def load_chat_config(settings: Settings | None = None, *, require_tokens: bool = True) -> ChatConfig:
    s = settings or Settings.from_env()
    admin = s.world_host_token("admin") or ""  # chat_poll/chat_reply on the world host
    agent = read_token(s.secrets_dir, "agent") or ""
    if require_tokens and not admin:
        where = (
            (
                f"{s.world_host_token_file.parent}/admin.token (beside the world host's service token file; the "
                "plugin creates it at first start)"
            )
            if s.world_host_token_file
            else f"{s.secrets_dir}/admin.token (written by `mcb up`) or MCB_ADMIN_TOKEN"
        )
        raise ChatConfigError(f"no admin token for the world host's chat: expected {where}")
    if require_tokens and not agent:
        raise ChatConfigError(
            f"no agent token: expected {s.secrets_dir}/agent.token (written by `mcb up`) or MCB_AGENT_TOKEN"
        )
    command = os.environ.get("MCB_ACP_COMMAND", "").strip() or None
    if command and not os.path.isabs(command):
        found = shutil.which(command)
        if not found:
            raise ChatConfigError(f"MCB_ACP_COMMAND={command!r} is not an absolute path and not on PATH")
        command = found
    raw_args = os.environ.get("MCB_ACP_ARGS", "").strip()
    args: tuple[str, ...] = ()
    if raw_args:
        try:
            parsed = json.loads(raw_args)
        except ValueError:
            raise ChatConfigError("MCB_ACP_ARGS must be a JSON array of strings") from None
        if not isinstance(parsed, list) or not all(isinstance(a, str) for a in parsed):
            raise ChatConfigError("MCB_ACP_ARGS must be a JSON array of strings")
        args = tuple(parsed)
    owners: dict[str, str] = {}
    try:
        projects = (s.load_config() or {}).get("projects") or []
    except (OSError, ValueError):
        projects = []
    for p in projects if isinstance(projects, list) else []:
        if isinstance(p, dict) and p.get("project_id") and p.get("owner_player_id"):
            owners[str(p["project_id"])] = str(p["owner_player_id"])
    state = Path(os.environ.get("MCB_CHAT_STATE_DIR", "").strip() or (s.runtime_dir / "chat")).resolve()
    api_key = (os.environ.get("MCB_OPENAI_API_KEY") or os.environ.get("MCB_CODEX_API_KEY") or "").strip() or None
    return ChatConfig(
        world_url=s.world_host_url,
        redis_url=s.redis_url,
        journal_addr=s.journal_addr,
        runtime_dir=s.runtime_dir,
        state_dir=state,
        admin_token=admin,
        journal_admin_token=read_token(s.secrets_dir, "admin") or "",
        agent_token=agent,
        acp_command=command,
        acp_args=args,
        model=os.environ.get("MCB_MODEL", "").strip() or None,
        api_key=api_key,
        auth_method=os.environ.get("MCB_ACP_AUTH_METHOD", "").strip() or None,
        max_queued=int(_num("MCB_CHAT_MAX_QUEUED", 8)),
        rate_per_s=max(1, int(_num("MCB_CHAT_RATE", 4))),
        cancel_grace_s=_num("MCB_CHAT_CANCEL_GRACE", 5.0),
        mcp_command=tuple(mcp_server_command()),
        owners=owners,
        camera_addr=s.camera_addr,
        config_file=s.config_file,
    )
