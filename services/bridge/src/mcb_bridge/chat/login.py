"""`mcb login` / `mcb login status`: device-code login of the agent's own Codex home through the
pinned Codex CLI (`@openai/codex` in services/bridge/acp). Only when run explicitly; the bridge
never starts a login itself. The CLI runs with the same environment allowlist and CODEX_HOME
as the agent, so the login lands in `<state>/codex-home`, never in ~/.codex."""

from __future__ import annotations

import json
import subprocess
import sys

from . import isolation
from .config import ACP_DIR, ChatConfigError, load_chat_config

CODEX_PACKAGE = "@openai/codex"


def pinned_codex_cli() -> dict[str, str | None]:
    pinned = None
    try:
        pinned = json.loads((ACP_DIR / "package.json").read_text())["dependencies"].get(CODEX_PACKAGE)
    except (OSError, ValueError, KeyError):
        pass
    name = "codex.exe" if sys.platform == "win32" else "codex"
    found = sorted((ACP_DIR / "node_modules" / "@openai").glob(f"codex-*/vendor/*/bin/{name}"))
    binary = found[0] if found else None
    installed = None
    if binary is not None:
        try:
            installed = json.loads((binary.parents[3] / "package.json").read_text()).get("version")
        except (OSError, ValueError):
            pass
    return {
        "package": CODEX_PACKAGE,
        "pinned": pinned,
        "installed": installed,
        "binary": str(binary) if binary else None,
    }


def run(action: str | None) -> int:
    try:
        cfg = load_chat_config(require_tokens=False)
        isolation.prepare_dirs(cfg)
    except ChatConfigError as exc:
        print(f"mcb login: {exc}", file=sys.stderr)
        return 2
    pin = pinned_codex_cli()
    if not pin["binary"]:
        print(
            f"mcb login: the pinned Codex CLI {pin['pinned']} is not installed: "
            f"run `cd {ACP_DIR} && npm ci --ignore-scripts` (scripts/bootstrap.sh does)",
            file=sys.stderr,
        )
        return 2
    argv = [str(pin["binary"]), "login", *(["status"] if action == "status" else ["--device-auth"])]
    env = isolation.agent_env(cfg)
    print(f"Codex home: {isolation.paths(cfg)['codex_home']}", file=sys.stderr)
    return subprocess.call(argv, env=env, cwd=str(isolation.paths(cfg)["work"]))
