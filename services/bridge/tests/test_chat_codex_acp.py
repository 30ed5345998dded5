"""The real pinned codex-acp binary (services/bridge/acp, `npm ci`): an ACP `initialize`
handshake in the bridge's isolated environment and Codex home. No session, no model call."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcb_bridge.chat.agent import AgentProcess
from mcb_bridge.chat.config import ChatConfig, pinned_codex_acp
from mcb_bridge.chat.login import pinned_codex_cli

PIN = pinned_codex_acp()


@pytest.mark.skipif(
    PIN["binary"] is None,
    reason=f"the pinned {PIN['package']} {PIN['pinned']} is not installed (npm ci impossible here?): "
    f"run `{PIN['install_hint']}`",
)
def test_codex_acp_initialize_handshake(tmp_path: Path) -> None:
    assert PIN["installed"] == PIN["pinned"], PIN
    lock = json.loads((Path(PIN["binary"]).parents[4] / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/@zed-industries/codex-acp"]["version"] == PIN["pinned"]
    cfg = ChatConfig(
        world_url="http://127.0.0.1:9",
        redis_url="redis://127.0.0.1:9/0",
        journal_addr="127.0.0.1:9",
        runtime_dir=tmp_path,
        state_dir=tmp_path / "chat",
        admin_token="ADMIN",
        agent_token="AGENT",
        mcp_command=("/bin/false",),
    )

    async def main():
        agent = AgentProcess(cfg, "p1")
        try:
            init = await asyncio.wait_for(agent.start(), 60)
            return init, agent.proc.pid
        finally:
            await agent.close()

    init, _pid = asyncio.run(main())
    assert init.protocol_version == 1
    assert init.agent_capabilities.load_session is True
    methods = [m.id for m in init.auth_methods or []]
    assert methods, "codex-acp offers at least one auth method"
    assert (cfg.state_dir / "codex-home" / "config.toml").exists()


CLI = pinned_codex_cli()


@pytest.mark.skipif(
    CLI["binary"] is None,
    reason=f"the pinned {CLI['package']} {CLI['pinned']} is not installed (npm ci impossible here?)",
)
def test_login_status_uses_the_agents_own_codex_home(tmp_path: Path) -> None:
    assert CLI["installed"] and CLI["installed"].startswith(str(CLI["pinned"])), CLI
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCB_") and k != "CODEX_HOME"}
    env.update({"MCB_RUNTIME_DIR": str(tmp_path / "rt"), "HOME": str(tmp_path / "user-home")})
    r = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", "login", "status"], env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Not logged in" in r.stdout + r.stderr
    assert str(tmp_path / "rt" / "chat" / "codex-home") in r.stderr
    assert not (tmp_path / "user-home" / ".codex").exists(), "never the user's ~/.codex"


@pytest.mark.skipif(
    PIN["binary"] is None,
    reason=f"the pinned {PIN['package']} {PIN['pinned']} is not installed (npm ci impossible here?): "
    f"run `{PIN['install_hint']}`",
)
def test_codex_acp_without_credentials_is_one_line_naming_mcb_login(tmp_path: Path) -> None:
    """Issue 31 item 3: the pinned agent with neither an API key nor a login answers session/new
    with ACP's "Authentication required"; the bridge turns it into the one line a player sees."""
    from mcb_bridge.chat.agent import AgentNotLoggedIn
    from mcb_bridge.chat.sessions import SessionRecord

    cfg = ChatConfig(
        world_url="http://127.0.0.1:9",
        redis_url="redis://127.0.0.1:9/0",
        journal_addr="127.0.0.1:9",
        runtime_dir=tmp_path,
        state_dir=tmp_path / "chat",
        admin_token="ADMIN",
        agent_token="AGENT",
        mcp_command=("/bin/false",),
    )
    assert cfg.api_key is None and cfg.acp_command is None

    async def main() -> str:
        agent = AgentProcess(cfg, "p1")
        try:
            await asyncio.wait_for(agent.start(), 60)
            with pytest.raises(AgentNotLoggedIn) as refused:
                await asyncio.wait_for(agent.open_session("player-1", SessionRecord()), 60)
            return str(refused.value)
        finally:
            await agent.close()

    line = asyncio.run(main())
    assert "\n" not in line and "`mcb login`" in line and "MCB_OPENAI_API_KEY" in line, line
    assert "Authentication required" not in line
