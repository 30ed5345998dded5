"""The first hour with `mcb` (issue 19): doctor's verdict on the chat agent's credentials,
addresses kept in config.json, `mcb world reset`, no traceback when `mcb up` is stopped."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli_env(runtime: Path, **extra: str) -> dict[str, str]:
    """A clean environment for `mcb`: no MCB_* or API keys inherited from the caller."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCB_") and "API_KEY" not in k}
    env["MCB_RUNTIME_DIR"] = str(runtime)
    env.update(extra)
    return env


def mcb(args: list[str], env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mcb_cli.main", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_doctor_fails_with_a_clear_line_when_the_chat_agent_has_no_credentials(tmp_path: Path):
    down = {f"MCB_{n}_PORT": str(free_port()) for n in ("WORLD_HOST", "REDIS")}
    r = mcb(["doctor"], cli_env(tmp_path, **down))
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    creds = doc["config"]["agent"]["credentials"]
    assert creds["api_key"] is False and creds["codex_login"] is False
    assert any(line.startswith("mcb doctor: the chat agent has no credentials: set MCB_OPENAI_API_KEY")
               for line in r.stderr.splitlines()), r.stderr
    # with a key (never printed) that problem is gone
    r2 = mcb(["doctor"], cli_env(tmp_path, MCB_OPENAI_API_KEY="sk-test-not-a-secret-19b", **down))
    assert "no credentials" not in r2.stdout + r2.stderr and "sk-test-not-a-secret-19b" not in r2.stdout + r2.stderr
    assert json.loads(r2.stdout)["config"]["agent"]["credentials"]["api_key"] is True
