"""The real stack for end-to-end tests, on each world host of ``worldhost.HOSTS``.

``stack``: `mcb up` as one process (the README's command), with Redis and every service as real
processes on free loopback ports in a temp runtime dir; on ``java-core`` (``paper-mock``) that host runs
first and `mcb up --world-host URL --world-host-token-file F` points the stack at it.
``comp``: the same services started one by one (crash and restart tests, ``components.py``).

``host`` is a session-scoped parameter, so pytest runs every test of one host, then the other's,
and each module starts one stack per host.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from e2e.components import start_components
from e2e.worldhost import (
    EXTERNAL,
    HOSTS,
    PAPER_MOCK_SUBSET,
    PAPER_MOCK_UNMODELLED,
    OnWorldHost,
    WorldHost,
    external_host,
)
from harness import ROOT, free_ports, interrupt, wait_until

PORT_NAMES = [
    "world_host",
    "bridge",
    "planner_grpc",
    "journal_grpc",
    "camera_grpc",
    "planner_health",
    "journal_health",
    "camera_health",
    "redis",
    "dashboard",
    "camera_link",
]


@dataclass
class Stack(OnWorldHost):
    runtime: Path
    ports: dict[str, int]
    env: dict[str, str]
    popen: subprocess.Popen
    log_path: Path
    world: WorldHost

    def config(self) -> dict:
        return json.loads((self.runtime / "config.json").read_text())

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]

    def stop(self) -> int:
        return interrupt(self.popen)


def start_stack(
    runtime: Path, world: WorldHost | None = None, saved_ports: bool = False, extra_args: tuple[str, ...] = ()
) -> Stack:
    """`mcb up` in ``runtime``: with its embedded host, or pointed at ``world`` (an external host,
    already running) with ``--world-host URL --world-host-token-file F``. ``saved_ports``: no
    ``MCB_*_PORT`` in the environment at all (a new shell): the stack takes the ports an earlier
    `mcb up` saved in the runtime's config.json. ``extra_args``: more `mcb up` arguments (``--world``)."""
    env = dict(os.environ)
    env["MCB_RUNTIME_DIR"] = str(runtime)
    if saved_ports:
        saved = json.loads((runtime / "config.json").read_text())["ports"]
        ports = {name: int(saved[name]) for name in PORT_NAMES}
        for name in PORT_NAMES:
            env.pop(f"MCB_{name.upper()}_PORT", None)
    else:
        ports = dict(zip(PORT_NAMES, free_ports(len(PORT_NAMES)), strict=True))
        for name, port in ports.items():
            env[f"MCB_{name.upper()}_PORT"] = str(port)
    for k in (
        "MCB_SECRETS_DIR",
        "MCB_CONFIG",
        "MCB_AGENT_TOKEN",
        "MCB_ADMIN_TOKEN",
        "MCB_SERVICE_TOKEN",
        "MCB_AUTOMATION_TOKEN",
        "MCB_WORLD_HOST_URL",
        "MCB_WORLD_HOST_TOKEN_FILE",
        "MCB_PLANNER_ADDR",
        "MCB_JOURNAL_ADDR",
        "MCB_CAMERA_ADDR",
        "MCB_REDIS_URL",
        "MCB_PROJECT_ID",
        "MCB_PLAYER_ID",
    ):
        env.pop(k, None)
    argv = [sys.executable, "-m", "mcb_cli.main", "up", *extra_args]
    if world is not None and world.external:
        # the README's command for a Paper server; saved in config.json for later `mcb` commands.
        # --no-chat: the chat tests run the loop themselves (`mcb chat`), one loop per host.
        argv += [
            "--world-host",
            world.url,
            "--world-host-token-file",
            world.stack_env()["MCB_WORLD_HOST_TOKEN_FILE"],
            "--no-chat",
        ]
    else:
        world = WorldHost("embedded", f"http://127.0.0.1:{ports['world_host']}", runtime / "secrets")
    runtime.mkdir(parents=True, exist_ok=True)
    log_path = runtime / "mcb-up.log"
    logf = open(log_path, "ab")  # noqa: SIM115
    popen = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True)
    stack = Stack(runtime, ports, env, popen, log_path, world)

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip on paper-mock, with the reason, what MockBukkit cannot model (worldhost.PAPER_MOCK_UNMODELLED), and the
    cases outside a representative subset (worldhost.PAPER_MOCK_SUBSET: CI time)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or callspec.params.get("host") != "paper-mock":
            continue
        name = getattr(item, "originalname", "")
        reason = PAPER_MOCK_UNMODELLED.get(name)
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"paper-mock: {reason}"))
        elif name in PAPER_MOCK_SUBSET:
            param, kept = PAPER_MOCK_SUBSET[name]
            if callspec.params.get(param) not in kept:
                item.add_marker(
                    pytest.mark.skip(
                        reason=f"paper-mock runs {name} for {param} in {kept} only (CI time; "
                        "the other cases run on embedded and java-core)"
                    )
                )


@pytest.fixture(scope="session", params=HOSTS)
def host(request) -> str:
    """The world host the stack runs against: "embedded", "java-core" or "paper-mock"."""
    return request.param


@pytest.fixture(scope="module")
def comp(host: str, tmp_path_factory: pytest.TempPathFactory):
    c = start_components(tmp_path_factory.mktemp(f"comp-{host}") / "runtime", host)
    yield c
    c.stop_all()


@pytest.fixture(scope="module")
def stack(host: str, tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp(f"stack-{host}")
    world = external_host(host, tmp / f"{host}-host") if host in EXTERNAL else None
    try:
        s = start_stack(tmp / "runtime", world)
    except BaseException:
        if world is not None:
            world.stop()
        raise
    yield s
    code = s.stop()
    if world is not None:
        world.stop()
    assert code == 0, f"mcb up did not stop cleanly (exit {code}):\n{s.log()}"
    assert "Stopped." in s.log()
