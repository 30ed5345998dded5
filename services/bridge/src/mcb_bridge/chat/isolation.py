"""What the agent process may see: an environment ALLOWLIST, its own HOME/CODEX_HOME under the
state dir (never ~/.codex), a minimal Codex config, and the MCP server entry with the *agent*
token and the trusted player/project. The admin token is never put anywhere the child can read
through its environment or its config.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcb_common.files import atomic_write

from .config import ChatConfig, ChatConfigError

# Inherited from the bridge's environment when set; nothing else is.
INHERITED = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")

CONFIG_MARKER = "# written by mcb-bridge chat; rewritten on every start"

# The requested Codex settings (seed 003): read-only sandbox, approval on request (and the
# bridge refuses every permission request), no network, no shell/apps/browser/hooks/plugins/
# extra agents, no history file. They are requests to the pinned CLI: `mcb doctor` lists them
# and what they do not isolate.
CODEX_CONFIG = f"""{CONFIG_MARKER}
sandbox_mode = "read-only"
approval_policy = "on-request"
check_for_update_on_startup = false

[sandbox_workspace_write]
network_access = false

[features]
shell_tool = false
unified_exec = false
apps = false
web_search_request = false
view_image_tool = false
browser = false
computer_use = false
hooks = false
plugins = false
multi_agent = false

[history]
persistence = "none"
"""

ISOLATION_SETTINGS = {
    "sandbox_mode": "read-only",
    "approval_policy": "on-request (every permission request is refused by the bridge)",
    "network_access": False,
    "disabled": [
        "shell_tool",
        "unified_exec",
        "apps",
        "web_search",
        "view_image",
        "browser",
        "computer_use",
        "hooks",
        "plugins",
        "multi_agent",
    ],
    "client_capabilities": "no fs, no terminal",
    "environment": f"allowlist {list(INHERITED)} + own HOME/XDG/CODEX_HOME/TMPDIR; API key only from "
    "MCB_OPENAI_API_KEY/MCB_CODEX_API_KEY",
}

NOT_ISOLATED = [
    "The agent runs as the same OS user: files that user can read (including the runtime's "
    "secrets/ folder) are not hidden by the bridge; Codex's read-only sandbox limits writes, not reads.",
    "codex-acp's read-only mode may still hand a workspace-write sandbox (without network) to its "
    "tools for the session folder and temp paths.",
    "Codex feature flags are requests to the pinned CLI; a CLI version may ignore unknown flags.",
    "The MCP server the agent starts holds the agent token (scope: the trusted project's tools).",
    "Model quality and real Codex turns are not exercised by the tests (a scripted ACP agent is).",
]


def paths(cfg: ChatConfig) -> dict[str, Path]:
    home = cfg.state_dir / "agent-home"
    return {
        "home": home,
        "codex_home": cfg.state_dir / "codex-home",
        "tmp": cfg.state_dir / "tmp",
        "xdg_config": home / ".config",
        "xdg_cache": home / ".cache",
        "xdg_data": home / ".local" / "share",
        "secrets": cfg.state_dir / "agent-secrets",  # deliberately empty
        "work": cfg.state_dir / "work",
    }


def prepare_dirs(cfg: ChatConfig) -> dict[str, Path]:
    p = paths(cfg)
    for d in p.values():
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, 0o700)
    os.chmod(cfg.state_dir, 0o700)
    write_codex_config(p["codex_home"])
    return p


def write_codex_config(codex_home: Path) -> Path:
    """Write the minimal config; refuse to overwrite a config.toml that someone else wrote."""
    path = codex_home / "config.toml"
    if path.exists():
        current = path.read_text(errors="replace")
        if current == CODEX_CONFIG:
            return path
        if not current.startswith(CONFIG_MARKER):
            raise ChatConfigError(
                f"{path} exists and was not written by the bridge; refusing to replace it. "
                "Use an empty MCB_CHAT_STATE_DIR, not a normal Codex profile."
            )
    atomic_write(path, CODEX_CONFIG, mode=0o600)
    return path


def agent_env(cfg: ChatConfig, source: dict[str, str] | None = None) -> dict[str, str]:
    """The agent's complete environment (an allowlist, not a filtered copy)."""
    src = os.environ if source is None else source
    p = paths(cfg)
    env = {k: src[k] for k in INHERITED if src.get(k)}
    env.update(
        {
            "HOME": str(p["home"]),
            "USERPROFILE": str(p["home"]),
            "CODEX_HOME": str(p["codex_home"]),
            "XDG_CONFIG_HOME": str(p["xdg_config"]),
            "XDG_CACHE_HOME": str(p["xdg_cache"]),
            "XDG_DATA_HOME": str(p["xdg_data"]),
            "TMPDIR": str(p["tmp"]),
            "NO_BROWSER": "1",
        }
    )
    if cfg.api_key:
        env["OPENAI_API_KEY"] = cfg.api_key
        env["CODEX_API_KEY"] = cfg.api_key
    return env


def mcp_server_env(cfg: ChatConfig, project_id: str, player_id: str) -> dict[str, str]:
    """Environment of our MCP server as started by the agent: agent token + trusted identity."""
    p = paths(cfg)
    env = {
        "MCB_AGENT_TOKEN": cfg.agent_token,
        "MCB_PROJECT_ID": project_id,
        "MCB_PLAYER_ID": player_id,
        "MCB_JOURNAL_ADDR": cfg.journal_addr,
        "MCB_RUNTIME_DIR": str(p["work"]),
        "MCB_SECRETS_DIR": str(p["secrets"]),
        "MCB_CONFIG": str(p["work"] / "no-config.json"),
    }
    if os.environ.get("PATH"):
        env["PATH"] = os.environ["PATH"]
    return env
