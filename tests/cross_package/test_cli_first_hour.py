"""The first hour with `mcb` (issue 19): doctor's verdict on the chat agent's credentials,
addresses kept in config.json, `mcb world reset`, no traceback when `mcb up` is stopped."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from harness import free_port

ROOT = Path(__file__).resolve().parents[2]


def cli_env(runtime: Path, **extra: str) -> dict[str, str]:
    """A clean environment for `mcb`: no MCB_* or API keys inherited from the caller."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCB_") and "API_KEY" not in k}
    env["MCB_RUNTIME_DIR"] = str(runtime)
    env.update(extra)
    return env


def mcb(args: list[str], env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_doctor_fails_with_a_clear_line_when_the_chat_agent_has_no_credentials(tmp_path: Path):
    down = {f"MCB_{n}_PORT": str(free_port()) for n in ("WORLD_HOST", "REDIS")}
    r = mcb(["doctor"], cli_env(tmp_path, **down))
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    creds = doc["config"]["agent"]["credentials"]
    assert creds["api_key"] is False and creds["codex_login"] is False
    assert any(
        line.startswith("mcb doctor: the chat agent has no credentials: set MCB_OPENAI_API_KEY")
        for line in r.stderr.splitlines()
    ), r.stderr
    # with a key (never printed) that problem is gone
    r2 = mcb(["doctor"], cli_env(tmp_path, MCB_OPENAI_API_KEY="sk-test-not-a-secret-19b", **down))
    assert "no credentials" not in r2.stdout + r2.stderr and "sk-test-not-a-secret-19b" not in r2.stdout + r2.stderr
    assert json.loads(r2.stdout)["config"]["agent"]["credentials"]["api_key"] is True


# -- ports and addresses stick (config.json "ports") ---------------------------------------------


def test_ports_saved_by_mcb_up_are_read_by_every_later_command(tmp_path: Path, monkeypatch):
    from mcb_rpc.settings import DEFAULT_PORTS, Settings

    from mcb_cli.runner import WorldHostTarget, record_addresses, services, write_default_config

    for name in DEFAULT_PORTS:
        monkeypatch.delenv(f"MCB_{name.upper()}_PORT", raising=False)
    for var in (
        "MCB_CONFIG",
        "MCB_WORLD_HOST_URL",
        "MCB_JOURNAL_ADDR",
        "MCB_PLANNER_ADDR",
        "MCB_CAMERA_ADDR",
        "MCB_REDIS_URL",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MCB_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv("MCB_BRIDGE_PORT", "28787")  # `mcb up` started with a non-default port …
    monkeypatch.setenv("MCB_JOURNAL_GRPC_PORT", "28062")
    s = Settings.from_env()
    write_default_config(s)
    cfg = record_addresses(s, WorldHostTarget())
    assert cfg["ports"]["bridge"] == 28787 and cfg["addresses"]["mcp"] == "http://127.0.0.1:28787/mcp"
    assert cfg["addresses"]["journal"] == "127.0.0.1:28062" and cfg["projects"]  # projects kept
    monkeypatch.delenv("MCB_BRIDGE_PORT")  # … a new shell has only MCB_RUNTIME_DIR
    monkeypatch.delenv("MCB_JOURNAL_GRPC_PORT")
    later = Settings.from_env()
    assert later.port("bridge") == 28787 and later.journal_addr == "127.0.0.1:28062"
    assert later.port("redis") == DEFAULT_PORTS["redis"]
    assert any(svc.health_url == "http://127.0.0.1:28787/health" for svc in services(later))
    monkeypatch.setenv("MCB_BRIDGE_PORT", "28788")  # the environment still wins for one run
    assert Settings.from_env().port("bridge") == 28788


def test_bad_saved_ports_are_ignored(tmp_path: Path):
    from mcb_rpc.settings import DEFAULT_PORTS, saved_ports

    assert saved_ports(
        {"ports": {"bridge": "8787", "redis": 0, "journal_grpc": True, "nope": 1, "planner_grpc": 50000}}
    ) == {"planner_grpc": 50000}
    assert saved_ports({"ports": []}) == {} and saved_ports({}) == {}
    assert "bridge" in DEFAULT_PORTS


def test_mcb_status_in_a_new_shell_finds_a_stack_on_saved_ports(tmp_path: Path):
    """A health endpoint on a random port, named only in config.json: `mcb status` reaches it."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Health(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = b'{"status": "ok"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):  # noqa: ANN002
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        port = srv.server_address[1]
        (tmp_path / "config.json").write_text(
            json.dumps({"ports": {"bridge": port, "world_host": free_port(), "redis": free_port()}})
        )
        r = mcb(["status"], cli_env(tmp_path))
    finally:
        srv.shutdown()
    lines = {line.split()[0]: line for line in r.stdout.splitlines() if line and not line.startswith(" ")}
    assert lines["bridge"].split()[1] == "ok" and f":{port}/health" in lines["bridge"], r.stdout
    assert r.returncode == 1  # the rest is down, and says so


def test_printed_client_configs_parse_and_point_at_this_stack(tmp_path: Path, monkeypatch):
    import shlex
    import tomllib

    from mcb_rpc.settings import Settings

    from mcb_cli.runner import client_configs, connection_help

    rt = tmp_path / "a runtime"  # a space, to check the quoting
    monkeypatch.setenv("MCB_RUNTIME_DIR", str(rt))
    monkeypatch.setenv("MCB_BRIDGE_PORT", "28787")
    s = Settings.from_env()
    c = client_configs(s)
    url = "http://127.0.0.1:28787/mcp"
    claude = shlex.split(c["claude_code_http"])
    assert claude[:6] == ["claude", "mcp", "add", "--transport", "http", "minecraft"] and claude[6] == url
    assert claude[7:] == ["--header", "Authorization: Bearer $MCB_AGENT_TOKEN"]
    stdio = shlex.split(c["claude_code_stdio"])
    assert stdio[stdio.index("--env") + 1] == f"MCB_RUNTIME_DIR={rt}" and stdio[-1] == "mcp"
    assert stdio[stdio.index("--") - 1] == "minecraft" and stdio[-2].endswith("/mcb")
    assert tomllib.loads(c["codex_http"]) == {
        "mcp_servers": {"minecraft": {"url": url, "bearer_token_env_var": "MCB_AGENT_TOKEN"}}
    }
    codex_stdio = tomllib.loads(c["codex_stdio"])["mcp_servers"]["minecraft"]
    assert codex_stdio["args"] == ["mcp"] and codex_stdio["env"] == {"MCB_RUNTIME_DIR": str(rt)}
    assert json.loads(c["cursor_http"]) == {
        "mcpServers": {"minecraft": {"url": url, "headers": {"Authorization": "Bearer ${env:MCB_AGENT_TOKEN}"}}}
    }
    assert json.loads(c["cursor_stdio"])["mcpServers"]["minecraft"]["env"] == {"MCB_RUNTIME_DIR": str(rt)}
    text = connection_help(s)
    for value in c.values():
        assert value.splitlines()[0] in text
    assert f"$(cat {shlex.quote(str(rt / 'secrets' / 'agent.token'))})" in text
    # issue 31 item 13: the Inspector's 2.x runs on Node 20 (with --header over HTTP); no stale claim
    assert "last release" not in text and "0.15.0" not in text
    insp = shlex.split(c["inspector_http"])
    assert insp[insp.index("--header") + 1] == "Authorization: Bearer $MCB_AGENT_TOKEN" and url in insp
    assert (
        shlex.split(c["inspector_stdio"])[shlex.split(c["inspector_stdio"]).index("-e") + 1] == f"MCB_RUNTIME_DIR={rt}"
    )


# -- mcb world reset -------------------------------------------------------------------------------


def _old_runtime(tmp_path: Path) -> Path:
    rt = tmp_path / "rt"
    (rt / "world" / "mcb").mkdir(parents=True)
    (rt / "world" / "mcb" / "world.json").write_text(json.dumps({"worldUuid": "old-world", "epoch": 3}))
    (rt / "world" / "level.dat").write_bytes(b"old")
    (rt / "journal").mkdir()
    (rt / "journal" / "journal.sqlite").write_bytes(b"history")
    return rt


def _quiet_ports() -> dict[str, str]:
    return {f"MCB_{n}_PORT": str(free_port()) for n in ("WORLD_HOST", "JOURNAL_HEALTH")}


def test_world_reset_moves_the_old_save_and_gives_a_new_uuid_and_the_next_epoch(tmp_path: Path):
    from mcb_common.registry import Registry
    from mcb_world_host.world import World

    rt = _old_runtime(tmp_path)
    r = mcb(["world", "reset"], cli_env(rt, **_quiet_ports()))
    assert r.returncode == 0, r.stdout + r.stderr
    (backup,) = (rt / "backups").iterdir()
    assert (backup / "world" / "level.dat").read_bytes() == b"old"
    assert (backup / "journal" / "journal.sqlite").read_bytes() == b"history" and not (rt / "journal").exists()
    meta = json.loads((rt / "world" / "mcb" / "world.json").read_text())
    assert meta["epoch"] == 4 and meta["worldUuid"] != "old-world" and meta["previousWorldUuid"] == "old-world"
    assert "epoch 4 (was old-world, epoch 3)" in r.stdout and "journal starts empty" in r.stdout
    # the embedded host creates the new flat world around that identity
    world = World.open_or_create(rt / "world", Registry.load(), "flat", None)
    try:
        assert (world.meta.world_uuid, world.meta.epoch) == (meta["worldUuid"], 4)
    finally:
        world.close()


def test_world_reset_keep_journal_keeps_the_history(tmp_path: Path):
    rt = _old_runtime(tmp_path)
    r = mcb(["world", "reset", "--keep-journal"], cli_env(rt, **_quiet_ports()))
    assert r.returncode == 0 and (rt / "journal" / "journal.sqlite").read_bytes() == b"history"
    (backup,) = (rt / "backups").iterdir()
    assert not (backup / "journal").exists() and "world_changed" in r.stdout


def test_world_reset_refuses_while_the_stack_runs_or_for_a_server_world(tmp_path: Path):
    rt = _old_runtime(tmp_path)
    with socket.socket() as busy:  # something listens on the world host port: the stack runs (or starts)
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = mcb(
            ["world", "reset"],
            cli_env(rt, MCB_WORLD_HOST_PORT=str(port), MCB_JOURNAL_HEALTH_PORT=str(free_port())),
            timeout=60,
        )
    assert r.returncode == 2 and "stop `mcb up`" in r.stdout and not (rt / "backups").exists()
    (rt / "config.json").write_text(json.dumps({"world_host": {"url": "http://127.0.0.1:8765"}}))
    r = mcb(["world", "reset"], cli_env(rt, **_quiet_ports()))
    assert r.returncode == 2 and "reset that server's world there" in r.stdout
    assert json.loads((rt / "world" / "mcb" / "world.json").read_text())["epoch"] == 3
