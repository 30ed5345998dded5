"""The MCP Inspector commands `mcb up` prints (``mcb_cli.runner.client_configs``) run as printed
with the Inspector's own CLI (issue 31 item 13: 2.12.0 runs on Node 20; over HTTP its
``--header`` carries the token, over stdio ``-e`` passes MCB_RUNTIME_DIR), against a real bridge
process and the stdio bridge, both on the FakeJournal.

Needs ``npx`` (Node.js) and the Inspector package (npx fetches it once with the machine's own npm
configuration); skipped, with the reason, where either is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bridge_testkit import TOKEN, FakeEnv
from harness import free_port, start_process


def _inspector(command: str, env: dict[str, str], cwd: Path) -> dict:
    """Run one printed command through a shell (as a user pastes it) -> its JSON answer."""
    r = subprocess.run(["bash", "-c", command], env=env, cwd=cwd, capture_output=True, text=True, timeout=240)
    out = r.stdout + r.stderr
    if r.returncode != 0 and ("npm error" in out or "npm ERR!" in out):
        pytest.skip(f"npx could not provide the MCP Inspector: {out.strip().splitlines()[-1][:200]}")
    assert r.returncode == 0, out[-2000:]
    return json.loads(r.stdout[r.stdout.index("{") :])


def test_printed_inspector_commands_work_over_http_and_stdio(fake_env: FakeEnv, tmp_path: Path) -> None:
    if shutil.which("npx") is None:
        pytest.skip("npx (Node.js) is not installed")
    from mcb_rpc.settings import Settings

    from mcb_cli.runner import INSPECTOR, client_configs

    runtime = tmp_path / "runtime"
    port = free_port()
    env = fake_env.runtime(runtime) | {"MCB_BRIDGE_PORT": str(port), "MCB_ONI_URL": ""}
    # the journal's address as `mcb up` leaves it: in config.json, so `-e MCB_RUNTIME_DIR` is enough
    cfg = json.loads((runtime / "config.json").read_text())
    cfg["ports"] = {"journal_grpc": fake_env.port, "bridge": port}
    (runtime / "config.json").write_text(json.dumps(cfg))
    bridge = start_process(
        "bridge-http",
        [sys.executable, "-m", "mcb_bridge", "http"],
        tmp_path / "logs",
        env=env,
        health_url=f"http://127.0.0.1:{port}/health",
        timeout=30,
    )
    try:
        old = dict(os.environ)
        os.environ.update({"MCB_RUNTIME_DIR": str(runtime), "MCB_BRIDGE_PORT": str(port)})
        try:
            c = client_configs(Settings.from_env())
        finally:
            os.environ.clear()
            os.environ.update(old)
        assert f"inspector@{INSPECTOR}" in c["inspector_http"] and "--header" in c["inspector_http"]
        # a user's shell: the token exported, nothing else of ours set
        shell = {k: v for k, v in os.environ.items() if not k.startswith("MCB_")} | {"MCB_AGENT_TOKEN": TOKEN}
        listed = _inspector(c["inspector_http"], shell, tmp_path)
        assert "build_prepare" in {t["name"] for t in listed["tools"]}
        called = _inspector(
            c["inspector_http"].replace("--method tools/list", "--method tools/call --tool-name project_context"),
            shell,
            tmp_path,
        )
        assert not called.get("isError"), called
        assert json.loads(called["content"][0]["text"])["project"]["project_id"]
        # stdio from another folder: only what -e passes reaches `mcb mcp`
        listed = _inspector(c["inspector_stdio"], {k: v for k, v in shell.items() if k != "MCB_AGENT_TOKEN"}, tmp_path)
        assert "build_prepare" in {t["name"] for t in listed["tools"]}
    finally:
        bridge.stop()
