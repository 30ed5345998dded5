"""Real processes for tests: free ports, a real redis-server, services started as
subprocesses and waited on by their ``/health`` with a deadline (never a bare sleep).

Every process started here is killed at teardown; its log is kept in the test's tmp dir and
printed on failure to start.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from mcb_common.procs import with_parent_death_signal

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


# Ports a test hands to a server it starts are taken from below the kernel's ephemeral range.
# A port the OS picked with bind(0) is free only for a moment: every outgoing connection (a gRPC
# channel, a Redis client, httpx) also takes its local port from the ephemeral range, and one did take
# 48545 between the pick and the journal's bind in a CI run ("Address already in use"). Below that
# range the kernel never hands a port out by itself, so the bind check here stays true unless another
# program listens there, and the counter keeps one test run from handing out the same port twice.
_LOW, _HIGH = 20000, 32768


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_high = min(_HIGH, _ephemeral_low())
_next_port = _LOW + (os.getpid() * 7919) % max(1, _high - _LOW)


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(n: int) -> list[int]:
    """n distinct ports nothing listens on, outside the ephemeral range where the system can; else
    ports the OS picks (bind to 0, all held until every one is chosen)."""
    global _next_port
    if _high - _LOW < 1000:  # an unusual ephemeral range: fall back to the OS's choice
        socks = []
        try:
            for _ in range(n):
                s = socket.socket()
                s.bind(("127.0.0.1", 0))
                socks.append(s)
            return [s.getsockname()[1] for s in socks]
        finally:
            for s in socks:
                s.close()
    ports: list[int] = []
    for _ in range(_high - _LOW):
        port = _next_port
        _next_port = _LOW + (_next_port + 1 - _LOW) % (_high - _LOW)
        if _bindable(port):
            ports.append(port)
            if len(ports) == n:
                return ports
    raise RuntimeError(f"no {n} free ports between {_LOW} and {_high}")


def wait_until(pred: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-8000:]
        except FileNotFoundError:
            return ""

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> int | None:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        return self.popen.returncode

    def kill9(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(5)


def start_process(
    name: str,
    argv: list[str],
    log_dir: Path,
    env: dict[str, str] | None = None,
    health_url: str | None = None,
    ready: Callable[[], bool] | None = None,
    timeout: float = 30.0,
) -> Proc:
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{name}.log"
    full_env = dict(os.environ)
    full_env.update(env or {})
    logf = open(log_path, "ab")  # noqa: SIM115 - owned by the child for its lifetime
    # SIGKILL if the test process dies, so no server outlives a run
    popen = subprocess.Popen(
        with_parent_death_signal(argv), stdout=logf, stderr=subprocess.STDOUT, env=full_env, cwd=ROOT
    )
    proc = Proc(name, popen, log_path, env or {})

    def _ready() -> bool:
        if popen.poll() is not None:
            raise RuntimeError(f"{name} exited with {popen.returncode}:\n{proc.log()}")
        if ready is not None:
            return ready()
        try:
            return httpx.get(health_url, timeout=1.0).status_code == 200  # type: ignore[arg-type]
        except httpx.HTTPError:
            return False

    try:
        wait_until(_ready, timeout, f"{name} to become healthy")
    except TimeoutError:
        proc.kill9()
        raise TimeoutError(f"{name} did not become healthy in {timeout}s:\n{proc.log()}") from None
    return proc


def interrupt(popen: subprocess.Popen, timeout: float = 60) -> int:
    """Stop a process started in its own session as Ctrl-C would (SIGINT, then SIGKILL of its group
    after ``timeout``); its exit code."""
    if popen.poll() is None:
        popen.send_signal(signal.SIGINT)
        try:
            popen.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(popen.pid, signal.SIGKILL)
            popen.wait(10)
    return popen.returncode


def redis_ping(port: int) -> bool:
    """True when a Redis server answers PING on 127.0.0.1:port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start_redis(tmp: Path) -> tuple[Proc, str]:
    exe = shutil.which("redis-server")
    if exe is None:
        raise RuntimeError("redis-server is not installed (make test installs it: apt-get install redis-server)")
    port = free_port()
    data = tmp / "redis"
    data.mkdir(parents=True, exist_ok=True)
    argv = [
        exe,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(data),
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "yes",
    ]

    def ping() -> bool:
        return redis_ping(port)

    proc = start_process("redis", argv, tmp / "logs", ready=ping, timeout=15)
    return proc, f"redis://127.0.0.1:{port}/0"
