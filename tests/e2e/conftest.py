"""The real stack for end-to-end tests: `mcb up` as one process (the README's command),
with Redis and every service as real processes on free loopback ports in a temp runtime dir.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from harness import ROOT, free_ports, wait_until

PORT_NAMES = ["world_host", "bridge", "planner_grpc", "journal_grpc", "camera_grpc",
              "planner_health", "journal_health", "camera_health", "redis"]


@dataclass
class Stack:
    runtime: Path
    ports: dict[str, int]
    env: dict[str, str]
    popen: subprocess.Popen
    log_path: Path

    @property
    def mcp_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['bridge']}/mcp"

    @property
    def world_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['world_host']}"

    def token(self, principal: str) -> str:
        return (self.runtime / "secrets" / f"{principal}.token").read_text().strip()

    def config(self) -> dict:
        return json.loads((self.runtime / "config.json").read_text())

    def world_rpc(self, method: str, params: dict, principal: str = "service") -> dict:
        r = httpx.post(f"{self.world_url}/v1/rpc", json={"method": method, "params": params, "requestId": "t"},
                       headers={"Authorization": f"Bearer {self.token(principal)}"}, timeout=30)
        body = r.json()
        assert body["ok"], body
        return body["result"]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]

    def stop(self) -> int:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(10)
        return self.popen.returncode


def start_stack(runtime: Path) -> Stack:
    ports = dict(zip(PORT_NAMES, free_ports(len(PORT_NAMES)), strict=True))
    env = dict(os.environ)
    env["MCB_RUNTIME_DIR"] = str(runtime)
    for name, port in ports.items():
        env[f"MCB_{name.upper()}_PORT"] = str(port)
    for k in ("MCB_SECRETS_DIR", "MCB_CONFIG", "MCB_AGENT_TOKEN", "MCB_ADMIN_TOKEN", "MCB_SERVICE_TOKEN",
              "MCB_AUTOMATION_TOKEN", "MCB_WORLD_HOST_URL", "MCB_PLANNER_ADDR", "MCB_JOURNAL_ADDR",
              "MCB_CAMERA_ADDR", "MCB_REDIS_URL", "MCB_PROJECT_ID", "MCB_PLAYER_ID"):
        env.pop(k, None)
    runtime.mkdir(parents=True, exist_ok=True)
    log_path = runtime / "mcb-up.log"
    logf = open(log_path, "ab")  # noqa: SIM115
    popen = subprocess.Popen([sys.executable, "-m", "mcb_cli.main", "up"], stdout=logf,
                             stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True)
    stack = Stack(runtime, ports, env, popen, log_path)

    def ready() -> bool:
        if popen.poll() is not None:
            raise RuntimeError(f"mcb up exited with {popen.returncode}:\n{stack.log()}")
        return "READY" in stack.log()

    try:
        wait_until(ready, 120, "mcb up to report READY", interval=0.2)
    except Exception:
        stack.stop()
        raise
    return stack


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    s = start_stack(tmp_path_factory.mktemp("stack") / "runtime")
    yield s
    code = s.stop()
    assert code == 0, f"mcb up did not stop cleanly (exit {code}):\n{s.log()}"
    assert "Stopped." in s.log()


def wait_for(pred, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.1)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
