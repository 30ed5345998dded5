"""The bridge's trusted configuration: who the agent acts for, and with which token.

The model never chooses the project, the player or the world. They come from here:

* ``MCB_PROJECT_ID`` / ``MCB_PLAYER_ID`` when set, else
* ``projects[0]`` of the runtime config file (``Settings.load_config()``), whose entries look
  like ``{"project_id": ..., "owner_player_id": ..., ...}``.

The agent token (``mcb_rpc.tokens.read_token(secrets_dir, "agent")``) authenticates the bridge
to the journal *and* the MCP client to the bridge's HTTP endpoint. It is kept in memory only;
``repr`` never shows it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from mcb_rpc.settings import Settings
from mcb_rpc.tokens import read_token

DEFAULT_HTTP_PATH = "/mcp"


class ConfigError(Exception):
    """The bridge cannot start: the message tells the operator what to set."""


@dataclass(frozen=True)
class BridgeConfig:
    project_id: str
    player_id: str
    journal_addr: str
    bind_host: str
    port: int
    agent_token: str = field(repr=False)
    # Seconds; one deadline per journal call (see journal_client.DEADLINES for the defaults).
    deadline_scale: float = 1.0

    @property
    def mcp_url(self) -> str:
        return f"http://{self.bind_host}:{self.port}{DEFAULT_HTTP_PATH}"


def _identity(settings: Settings) -> tuple[str, str]:
    project = os.environ.get("MCB_PROJECT_ID", "").strip()
    player = os.environ.get("MCB_PLAYER_ID", "").strip()
    if project and player:
        return project, player
    try:
        cfg = settings.load_config()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the runtime config {settings.config_file}: {exc}") from None
    projects = cfg.get("projects") if isinstance(cfg, dict) else None
    first = projects[0] if isinstance(projects, list) and projects else {}
    if not isinstance(first, dict):
        first = {}
    project = project or str(first.get("project_id") or "")
    player = player or str(first.get("owner_player_id") or "")
    if not project or not player:
        raise ConfigError(
            "no project configured for the agent: set MCB_PROJECT_ID and MCB_PLAYER_ID, or run "
            f"`mcb up` so that {settings.config_file} lists projects[0] with project_id and "
            "owner_player_id"
        )
    return project, player


def load_config(settings: Settings | None = None) -> BridgeConfig:
    settings = settings or Settings.from_env()
    project, player = _identity(settings)
    token = read_token(settings.secrets_dir, "agent")
    if not token:
        raise ConfigError(
            f"no agent token: expected {settings.secrets_dir}/agent.token (written by `mcb up`) "
            "or the MCB_AGENT_TOKEN environment variable"
        )
    try:
        scale = float(os.environ.get("MCB_BRIDGE_DEADLINE_SCALE", "1") or "1")
    except ValueError:
        raise ConfigError("MCB_BRIDGE_DEADLINE_SCALE must be a number") from None
    return BridgeConfig(
        project_id=project,
        player_id=player,
        journal_addr=settings.journal_addr,
        bind_host=settings.bind_host,
        port=settings.port("bridge"),
        agent_token=token,
        deadline_scale=max(scale, 0.01),
    )
