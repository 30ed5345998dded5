"""`mcb up --world-host URL --world-host-token-file F` against a real external world host (the Java
test host from paper-plugin/, the Paper plugin's core): identity printed, no embedded host started,
the chat loop started because the host offers chat, clear refusals for a wrong URL, a wrong token
and version skew, and a host restart reported while the stack keeps running."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from contract.hosts import java_core
from harness import ROOT, free_ports, interrupt, wait_until

PORTS = [
    "bridge",
    "planner_grpc",
    "journal_grpc",
    "camera_grpc",
    "planner_health",
    "journal_health",
    "camera_health",
    "redis",
    "world_host",
    "dashboard",
]


class Up:
    """`mcb up` as a process with its own runtime dir and free ports; output in a log file."""

    def __init__(self, runtime: Path, *args: str):
        runtime.mkdir(parents=True, exist_ok=True)
        self.runtime = runtime
        self.ports = dict(zip(PORTS, free_ports(len(PORTS)), strict=True))
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCB_")}
        env.update({f"MCB_{n.upper()}_PORT": str(p) for n, p in self.ports.items()})
        env["MCB_RUNTIME_DIR"] = str(runtime)
        env["MCB_ACP_COMMAND"] = sys.executable  # the chat loop starts without the pinned agent
        env["MCB_ACP_ARGS"] = json.dumps([str(ROOT / "tests" / "scripted_acp_agent.py")])
        self.env = env
        self.log_path = runtime / "mcb-up.log"
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "mcb_cli.main", "up", *args],
            stdout=open(self.log_path, "ab"),
            stderr=subprocess.STDOUT,  # noqa: SIM115
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_exit(self, timeout: float = 60) -> int:
        return self.popen.wait(timeout)

    def wait_log(self, text: str, timeout: float = 120) -> None:
        def seen() -> bool:
            if text in self.log():
                return True
            if self.popen.poll() is not None:
                raise AssertionError(f"mcb up exited {self.popen.returncode} before {text!r}:\n{self.log()[-4000:]}")
            return False

        wait_until(seen, timeout, f"{text!r} in the mcb up log", interval=0.2)

    def status(self) -> str:
        r = subprocess.run(
            [sys.executable, "-m", "mcb_cli.main", "status"],
            env=self.env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return r.stdout + r.stderr

    def stop(self) -> int:
        return interrupt(self.popen)


@pytest.fixture(scope="module")
def java_host(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("java-host")
    h = java_core(tmp)
    # java_core keeps the host's tokens in <tmp>/runtime/secrets, as the plugin keeps its secrets/
    h.extra["token_file"] = tmp / "runtime" / "secrets" / "service.token"
    yield h
    h.stop()


def test_stack_runs_against_the_external_host(java_host, tmp_path: Path):
    token_file = java_host.extra["token_file"]
    up = Up(tmp_path / "rt", "--world-host", java_host.base_url, "--world-host-token-file", str(token_file))
    try:
        up.wait_log("READY")
        log = up.log()
        assert f"world host     ok  {java_host.base_url}" in log
        assert "java-testhost" in log and "data version 4671" in log and "chat" in log
        assert "world-host " not in log.replace("world host ", "")  # no embedded host process
        assert not (tmp_path / "rt" / "world").exists()
        assert "chat           ok  polling" in log  # the host offers chat: the loop runs
        assert java_host.tokens["service"] not in log  # no token in the output
        # the stack's own service token is NOT what it uses for the host: the plugin's file is
        assert (tmp_path / "rt" / "secrets" / "service.token").read_text().strip() != java_host.tokens["service"]
        status = up.status()
        assert "(external)" in status and "java-testhost" in status, status
        # a build goes through to the external host (the journal uses the token file)
        cfg = json.loads((tmp_path / "rt" / "config.json").read_text())
        assert cfg["world_host"]["url"] == java_host.base_url
        _build_seed(up)
        got = httpx.post(
            f"{java_host.base_url}/v1/rpc",
            json={"method": "blocks_get", "params": {"xyz": [0, 64, 0, 1, 65, 1]}, "requestId": "t"},
            headers={"Authorization": f"Bearer {java_host.tokens['service']}"},
            timeout=30,
        ).json()
        assert got["ok"], got
        palette, idx = got["result"]["palette"], got["result"]["state"]
        assert [palette[i] for i in idx] == ["minecraft:stone_bricks", "minecraft:air"], got["result"]
        # the host restarts (kill -9): the stack keeps running and says so
        java_host.restart(True)
        up.wait_log("restarted (new host instance)", timeout=60)
        assert up.popen.poll() is None
    finally:
        code = up.stop()
    assert code == 0, up.log()[-3000:]


def _build_seed(up: Up) -> None:
    import anyio
    from e2e.mcpclient import apply_and_wait, call, http_client

    token = (up.runtime / "secrets" / "agent.token").read_text().strip()
    recipe = {
        "version": 1,
        "operations": [
            {
                "type": "box",
                "min": {"x": 0, "y": 64, "z": 0},
                "max": {"x": 2, "y": 66, "z": 2},
                "block": "minecraft:stone_bricks",
                "hollow": True,
            }
        ],
    }

    async def main() -> None:
        async with http_client(f"http://127.0.0.1:{up.ports['bridge']}/mcp", token) as client:
            plan = await call(client, "build_prepare", {"recipe": recipe})
            st = await apply_and_wait(client, plan)
            assert st["state"] == "applied", st

    anyio.run(main)


def test_wrong_token_is_refused_with_what_to_do(java_host, tmp_path: Path):
    # the stack's own service token: never copied into the plugin's secrets
    up = Up(tmp_path / "rt", "--world-host", java_host.base_url)
    assert up.wait_exit() == 1
    log = up.log()
    assert "refused the service token" in log and "secrets/service.token" in log, log[-2000:]
    assert "READY" not in log


def test_wrong_url_is_refused(tmp_path: Path):
    (port,) = free_ports(1)
    up = Up(tmp_path / "rt", "--world-host", f"http://127.0.0.1:{port}")
    assert up.wait_exit() == 1
    assert "cannot reach the world host" in up.log()


class _SkewedHost(BaseHTTPRequestHandler):
    """A stand-in world host (named as such) that claims Minecraft 1.21.5: only the runner's
    version check is under test here; no real host of another version can run on this machine."""

    def _send(self, body: dict) -> None:
        raw = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):  # noqa: N802
        self._send({"status": "ok", "service": "paper-plugin", "version": "0.1.0", "protocolVersion": "mcb.world.v1"})

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._send(
            {
                "ok": True,
                "result": {
                    "worldUuid": "u",
                    "dataVersion": 4325,
                    "minecraftVersion": "1.21.5",
                    "protocolVersion": "mcb.world.v1",
                    "capabilities": ["region_read", "blocks_get", "batch_apply", "events_since", "pause"],
                },
            }
        )

    def log_message(self, *a):  # noqa: D102
        pass


def test_version_skew_is_refused(tmp_path: Path):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _SkewedHost)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        tf = tmp_path / "service.token"
        tf.write_text("t\n")
        up = Up(
            tmp_path / "rt",
            "--world-host",
            f"http://127.0.0.1:{srv.server_address[1]}",
            "--world-host-token-file",
            str(tf),
        )
        assert up.wait_exit() == 1
        assert "Minecraft 1.21.5 (data version 4325)" in up.log()
    finally:
        srv.shutdown()
