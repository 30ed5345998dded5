"""The local runner: Redis and every service as plain processes on loopback.

The same services compose.yaml runs in containers. State lives in ``MCB_RUNTIME_DIR``
(default ``.runtime/``): secrets/ (tokens, 0600), config.json (projects), world/ (the save),
journal/, camera/, redis/, logs/. Ports come from ``MCB_<NAME>_PORT`` (mcb_rpc.settings).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import PRINCIPALS, ensure_token

DEFAULT_AREA = {"min": {"x": -64, "y": -64, "z": -64}, "max": {"x": 63, "y": 319, "z": 63}}


@dataclass
class Service:
    name: str
    module: str
    args: list[str]
    health_url: str
    env: dict[str, str]


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the runner dies, even by SIGKILL (Linux), so no service
    outlives `mcb up`. Elsewhere this is a no-op and Ctrl-C/SIGTERM stop the stack cleanly."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def write_default_config(s: Settings) -> dict:
    path = s.config_file
    if path.exists():
        return json.loads(path.read_text())
    cfg = {
        "comment": "Non-secret configuration written by `mcb up`. Tokens live in secrets/.",
        "projects": [{
            "project_id": "default",
            "name": "Default project",
            "owner_player_id": str(uuid.uuid4()),
            "area": DEFAULT_AREA,
        }],
        "world": {"create": "flat", "pregenerate": [-64, -64, 63, 63]},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cfg, indent=2) + "\n")
    os.replace(tmp, path)
    return cfg


def _env_for(s: Settings) -> dict[str, str]:
    host = "127.0.0.1"
    return {
        "MCB_RUNTIME_DIR": str(s.runtime_dir),
        "MCB_BIND_HOST": host,
        "MCB_WORLD_HOST_URL": f"http://{host}:{s.port('world_host')}",
        "MCB_PLANNER_ADDR": f"{host}:{s.port('planner_grpc')}",
        "MCB_JOURNAL_ADDR": f"{host}:{s.port('journal_grpc')}",
        "MCB_CAMERA_ADDR": f"{host}:{s.port('camera_grpc')}",
        "MCB_REDIS_URL": f"redis://{host}:{s.port('redis')}/0",
        "PYTHONUNBUFFERED": "1",
    }


def services(s: Settings) -> list[Service]:
    h = "http://127.0.0.1"
    cfg = s.load_config().get("world", {})
    pregen = cfg.get("pregenerate", [-64, -64, 63, 63])
    return [
        Service("world-host", "mcb_world_host", [], f"{h}:{s.port('world_host')}/health", {
            "MCB_WORLD_DIR": str(s.runtime_dir / "world"),
            "MCB_WORLD_CREATE": cfg.get("create", "flat"),
            "MCB_WORLD_PREGEN": ",".join(str(v) for v in pregen),
            # The embedded world is a local sandbox: tests and scripts act as players here.
            "MCB_ALLOW_LOCAL_AUTOMATION": "1",
        }),
        Service("planner", "mcb_planner", [], f"{h}:{s.port('planner_health')}/health", {}),
        Service("journal", "mcb_journal", [], f"{h}:{s.port('journal_health')}/health", {}),
        Service("camera-worker", "mcb_camera", [], f"{h}:{s.port('camera_health')}/health", {}),
        Service("bridge", "mcb_bridge", ["http"], f"{h}:{s.port('bridge')}/health", {}),
    ]


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def _redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class Stack:
    def __init__(self, s: Settings):
        self.s = s
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.logs = s.runtime_dir / "logs"

    def _spawn(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen:
        self.logs.mkdir(parents=True, exist_ok=True)
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 - the child owns it
        full = dict(os.environ)
        full.update(env)
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=full,
                             start_new_session=True, preexec_fn=_die_with_parent)
        self.procs.append((name, p))
        return p

    def _wait(self, name: str, p: subprocess.Popen, ready, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if p.poll() is not None:
                tail = (self.logs / f"{name}.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} exited with code {p.returncode}. Last log lines:\n{tail}")
            if ready():
                return
            time.sleep(0.1)
        raise RuntimeError(f"{name} did not become healthy within {timeout:.0f}s; see {self.logs}/{name}.log")

    def start(self) -> None:
        s = self.s
        base_env = _env_for(s)
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is not installed; `make up` installs it (apt-get install redis-server)")
        rport = s.port("redis")
        if _redis_ping(rport):
            raise RuntimeError(f"something already answers on Redis port {rport}; stop it or set MCB_REDIS_PORT")
        (s.runtime_dir / "redis").mkdir(parents=True, exist_ok=True)
        p = self._spawn("redis", [exe, "--port", str(rport), "--bind", "127.0.0.1", "--dir",
                                  str(s.runtime_dir / "redis"), "--appendonly", "yes", "--save", ""], {})
        self._wait("redis", p, lambda: _redis_ping(rport))
        print(f"  redis          ok  127.0.0.1:{rport}", flush=True)
        for svc in services(s):
            if _healthy(svc.health_url):
                raise RuntimeError(f"something already answers at {svc.health_url}; is another stack running?")
            env = dict(base_env)
            env.update(svc.env)
            p = self._spawn(svc.name, [sys.executable, "-m", svc.module, *svc.args], env)
            self._wait(svc.name, p, lambda u=svc.health_url: _healthy(u))
            print(f"  {svc.name:<14} ok  {svc.health_url}", flush=True)

    def watch(self) -> int:
        while True:
            for name, p in self.procs:
                if p.poll() is not None:
                    print(f"\n{name} exited with code {p.returncode}; see {self.logs}/{name}.log", flush=True)
                    return 1
            time.sleep(0.5)

    def stop(self) -> None:
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    print(f"  {name} did not stop in 15 s; killing it", flush=True)
                    p.kill()
                    p.wait(5)


def connection_help(s: Settings) -> str:
    url = f"http://127.0.0.1:{s.port('bridge')}/mcp"
    tok = s.secrets_dir / "agent.token"
    mcb = Path(sys.executable).with_name("mcb")
    return f"""
The stack is up. MCP endpoint: {url}
The agent token is in {tok} (mode 0600; never paste it into a chat).

  export MCB_AGENT_TOKEN="$(cat {tok})"

Claude Code:
  claude mcp add --transport http minecraft {url} --header "Authorization: Bearer $MCB_AGENT_TOKEN"

Codex (~/.codex/config.toml):
  [mcp_servers.minecraft]
  url = "{url}"
  bearer_token_env_var = "MCB_AGENT_TOKEN"

Any MCP client that spawns a command (stdio):
  command: {mcb}   args: ["mcp"]   env: {{"MCB_RUNTIME_DIR": "{s.runtime_dir}"}}

World save (open it in Minecraft Java 1.21.11 after stopping): {s.runtime_dir / 'world'}
Logs: {s.runtime_dir / 'logs'}    Health: `mcb status`    Stop: Ctrl-C
"""


def run_up(quiet: bool = False) -> int:
    s = Settings.from_env()
    s.runtime_dir.mkdir(parents=True, exist_ok=True)
    for principal in PRINCIPALS:
        ensure_token(s.secrets_dir, principal)
    write_default_config(s)
    stack = Stack(s)
    stopping = {"flag": False}

    def _sig(signum, frame):  # noqa: ANN001
        stopping["flag"] = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _sig)
    print(f"Starting minecraft-builder-mcp in {s.runtime_dir}", flush=True)
    code = 0
    try:
        stack.start()
        if not quiet:
            print(connection_help(s), flush=True)
        print("READY", flush=True)
        code = stack.watch()
    except KeyboardInterrupt:
        print("\nStopping…", flush=True)
    except RuntimeError as exc:
        print(f"\nmcb up failed: {exc}", file=sys.stderr, flush=True)
        code = 1
    finally:
        # A terminal's Ctrl-C reaches this process more than once (from the terminal and
        # forwarded by `make`/`uv run`): once stopping has begun, further signals must not
        # interrupt it, or services would be left running.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stack.stop()
        print("Stopped.", flush=True)
    return code


def run_status() -> int:
    s = Settings.from_env()
    bad = 0
    rport = s.port("redis")
    print(f"{'redis':<14} {'ok' if _redis_ping(rport) else 'DOWN':<9} 127.0.0.1:{rport}")
    for svc in services(s):
        try:
            r = httpx.get(svc.health_url, timeout=2.0)
            body = r.json()
            state = body.get("status", "?") if r.status_code == 200 else f"{body.get('status', 'error')}"
        except (httpx.HTTPError, ValueError):
            state = "DOWN"
        if state != "ok":
            bad += 1
        print(f"{svc.name:<14} {state:<9} {svc.health_url}")
    return 1 if bad else 0
