"""The composed stack (compose.yaml) for real, with testcontainers' DockerCompose (issue 15).

Runs wherever a Docker engine and the `docker compose` plugin are reachable (CI: `make test`
runs scripts/docker_env.sh first, which provides both as root). One stack per session, on a
throw-away project name with free loopback ports; its images are built once, by the first
`up --build`. In order:

1. every service healthy, every published port bound to 127.0.0.1, no process running as root;
2. an MCP session with the agent token read from the `secrets` volume; the seed recipe applied and
   its blocks read back from the `world` volume's save by an independent reader (anvil-parser2);
3. `docker compose restart` and `down`/`up` keep world, journal, assets and tokens;
4. `docker kill` of the journal mid-apply -> `recovery_required` once it is back, then review and
   abandon through `docker compose exec journal mcb recovery ...`; the chat loop of `--profile chat`
   runs (its own image, non-root, no port); compose.paper.yaml runs the stack and the chat loop on
   an external world host on loopback (the Java test host);
5. no token in any image: not in `docker history`, not in the images' config, not in any layer's
   files (`docker save`, every layer scanned).

Where no engine is reachable it is skipped with the reason - it never hangs probing.

NOTE: this folder must not get an ``__init__.py``: tests/ is on sys.path and a *package* named
``docker`` there would shadow the Docker SDK that testcontainers imports.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import anyio
import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from e2e.mcpclient import call, http_client, wait_terminal  # noqa: E402
from e2e.test_build_e2e import EXPECTED, REGION, SEED_RECIPE  # noqa: E402
from harness import free_ports  # noqa: E402

HEALTH_IN_CONTAINER = {  # service -> its health URL inside its own container
    "world-host": "http://127.0.0.1:8765/health",
    "planner": "http://127.0.0.1:8791/health",
    "journal": "http://127.0.0.1:8792/health",
    "camera-worker": "http://127.0.0.1:8794/health",
    "bridge": "http://127.0.0.1:8787/health",
}
TOKENS = ("agent", "admin", "service")
STACK_TIMEOUT_S = 300  # after the images are built
PROBE_TIMEOUT_S = 2.0
# A box big enough to be still applying when the journal is killed (the seed build takes under a
# second): 86,400 blocks (the planner's limit is 100,000 per plan), inside the default project area.
BIG_BOX = {
    "version": 1,
    "operations": [
        {
            "type": "box",
            "min": {"x": -60, "y": 80, "z": -60},
            "max": {"x": 59, "y": 85, "z": 59},
            "block": "minecraft:stone",
        }
    ],
}


# ----------------------------------------------------------------------------- engine probe


def _ping(endpoint: str) -> bool:
    """GET /_ping on a Docker engine endpoint (unix:// or tcp://), bounded by PROBE_TIMEOUT_S."""
    u = urlparse(endpoint)
    try:
        if u.scheme == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(PROBE_TIMEOUT_S)
            sock.connect(u.path)
        elif u.scheme == "tcp":
            sock = socket.create_connection((u.hostname, u.port or 2375), timeout=PROBE_TIMEOUT_S)
            if os.environ.get("DOCKER_TLS_VERIFY"):
                sock.close()
                return True  # TLS endpoint accepts connections; the compose call will tell more
        else:
            return False
        with sock:
            sock.sendall(b"GET /_ping HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n")
            return b" 200 " in sock.recv(256)
    except OSError:
        return False


def docker_engine() -> tuple[str | None, str]:
    """(engine endpoint, "") when usable, else (None, the reason to skip)."""
    docker = shutil.which("docker")
    if docker is None:
        return None, "no docker client is installed (scripts/docker_env.sh provides one as root)"
    if os.environ.get("DOCKER_HOST"):
        candidates = [os.environ["DOCKER_HOST"]]
    else:
        candidates = ["unix:///var/run/docker.sock"]
        if os.environ.get("XDG_RUNTIME_DIR"):
            candidates.append(f"unix://{os.environ['XDG_RUNTIME_DIR']}/docker.sock")
        candidates.append(f"unix://{Path.home()}/.docker/run/docker.sock")
    endpoint = next((c for c in candidates if _ping(c)), None)
    if endpoint is None:
        return None, (
            f"no Docker engine is reachable (tried {', '.join(candidates)}); "
            "scripts/docker_env.sh starts one when run as root"
        )
    try:
        r = subprocess.run(
            [docker, "compose", "version"], capture_output=True, timeout=20, env={**os.environ, "DOCKER_HOST": endpoint}
        )
    except (OSError, subprocess.TimeoutExpired):
        return None, "`docker compose version` did not answer"
    if r.returncode != 0:
        return None, (
            "a Docker engine is reachable but the `docker compose` plugin is not installed "
            "(scripts/docker_env.sh builds it as root)"
        )
    return endpoint, ""


def _until(pred: Callable[[], bool], timeout: float, what: str, step: float = 1.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(step)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")


def _extra_ca_certs() -> str:
    """MCB_EXTRA_CA_CERTS for the image builds: as set, else the CAs this machine added locally
    (/usr/local/share/ca-certificates, e.g. a TLS-intercepting proxy's) - the build stage must
    trust the same proxy the machine does to reach PyPI."""
    if os.environ.get("MCB_EXTRA_CA_CERTS"):
        return os.environ["MCB_EXTRA_CA_CERTS"]
    local = Path("/usr/local/share/ca-certificates")
    pems = sorted(local.rglob("*.crt")) if local.is_dir() else []
    return "".join(p.read_text() for p in pems)


def _npm_registry() -> str:
    """MCB_NPM_REGISTRY for the chat image: as set, else this machine's npm configuration."""
    if os.environ.get("MCB_NPM_REGISTRY"):
        return os.environ["MCB_NPM_REGISTRY"]
    try:
        r = subprocess.run(["npm", "config", "get", "registry"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return r.stdout.strip() if r.returncode == 0 else ""


# ----------------------------------------------------------------------------- the stack


class Stack:
    """One compose project: DockerCompose for up/down/exec, plus the few calls it lacks."""

    def __init__(self, compose: Any, project: str, bridge_port: int, world_port: int):
        self.compose = compose
        self.project = project
        self.bridge_port = bridge_port
        self.world_port = world_port
        self.mcp_url = f"http://127.0.0.1:{bridge_port}/mcp"
        self.timings: dict[str, float] = {}
        # every long-running service of the default profile (whatever compose.yaml adds later)
        self.services = [s for s in self.run("config", "--services").stdout.split() if s != "secrets-init"]
        assert {"redis", *HEALTH_IN_CONTAINER} <= set(self.services), self.services
        self.images = sorted(
            {i for i in self.run("config", "--images").stdout.split() if i.startswith("minecraft-builder-mcp/")}
        )

    def run(self, *args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess[str]:
        r = subprocess.run(
            [*self.compose.compose_command_property, *args], cwd=ROOT, text=True, capture_output=True, timeout=timeout
        )
        if check and r.returncode != 0:
            raise AssertionError(f"docker compose {' '.join(args)} -> {r.returncode}\n{r.stdout}\n{r.stderr}")
        return r

    def exec(self, service: str, *cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run("exec", "-T", service, *cmd, check=check, timeout=120)

    def container_id(self, service: str) -> str:
        cid = self.run("ps", "-q", service).stdout.strip()
        assert cid, f"{service} has no container"
        return cid

    def ps(self) -> dict[str, dict[str, Any]]:
        out = self.run("ps", "--all", "--format", "json").stdout.strip()
        rows = json.loads(out) if out.startswith("[") else [json.loads(line) for line in out.splitlines() if line]
        return {r["Service"]: r for r in rows}

    def healthy(self) -> bool:
        rows = self.ps()
        return all(rows.get(s, {}).get("Health") == "healthy" for s in self.services)

    def wait_healthy(self, what: str) -> None:
        _until(self.healthy, STACK_TIMEOUT_S, f"every service healthy ({what})", step=0.5)

    def up_wait(self, what: str) -> float:
        start = time.monotonic()
        self.run("up", "--detach", "--wait", "--wait-timeout", str(STACK_TIMEOUT_S), timeout=STACK_TIMEOUT_S + 60)
        self.wait_healthy(what)
        took = time.monotonic() - start
        self.timings[f"up --wait ({what})"] = round(took, 1)
        return took

    def token(self, name: str) -> str:
        """A token as stored in the secrets volume (read by a service that mounts it read-only)."""
        return self.exec("bridge", "cat", f"/secrets/{name}.token").stdout.strip()

    def tokens(self) -> dict[str, str]:
        return {n: self.token(n) for n in TOKENS}

    def mcp(self, scenario: Callable[[Any], Any], timeout: float = 120) -> Any:
        async def main() -> Any:
            with anyio.fail_after(timeout):
                async with http_client(self.mcp_url, self.token("agent")) as client:
                    return await scenario(client)

        return anyio.run(main)

    def admin(self, *args: str) -> dict[str, Any]:
        r = self.exec("journal", "mcb", *args, check=False)
        assert r.returncode == 0, (args, r.stdout, r.stderr)
        return json.loads(r.stdout)


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    endpoint, reason = docker_engine()
    if endpoint is None:
        pytest.skip(reason)
    from testcontainers.compose import DockerCompose  # imported only where an engine exists

    # a free loopback port for every published port compose.yaml lets one move (never the defaults)
    publish = sorted(set(re.findall(r"\$\{(MCB_\w+_PUBLISH_PORT):-", (ROOT / "compose.yaml").read_text())))
    assert {"MCB_BRIDGE_PUBLISH_PORT", "MCB_WORLD_HOST_PUBLISH_PORT"} <= set(publish), publish
    ports = dict(zip(publish, free_ports(len(publish)), strict=True))
    bridge_port, world_port = ports["MCB_BRIDGE_PUBLISH_PORT"], ports["MCB_WORLD_HOST_PUBLISH_PORT"]
    project = f"mcb-test-{uuid.uuid4().hex[:8]}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DOCKER_HOST", endpoint)
        mp.setenv("COMPOSE_PROJECT_NAME", project)
        for var, port in ports.items():
            mp.setenv(var, str(port))
        mp.setenv("MCB_EXTRA_CA_CERTS", _extra_ca_certs())
        mp.setenv("MCB_NPM_REGISTRY", _npm_registry())
        mp.delenv("MCB_ALLOW_LOCAL_AUTOMATION", raising=False)
        compose = DockerCompose(ROOT, compose_file_name="compose.yaml", build=False, wait=False, keep_volumes=False)
        s = Stack(compose, project, bridge_port, world_port)
        try:
            start = time.monotonic()
            s.run("build", timeout=2400)  # once per session; later ups reuse the images
            s.timings["build"] = round(time.monotonic() - start, 1)
            s.up_wait("first start")
            yield s
        except BaseException:
            r = s.run("logs", "--no-color", "--tail", "200", check=False)
            print(r.stdout[-20000:], r.stderr[-5000:], sep="\n")
            raise
        finally:
            print("compose timings (s):", json.dumps(s.timings))
            # with the chat profile, so its container and its `chat` volume go too
            s.run("--profile", "chat", "down", "--volumes", "--remove-orphans", check=False, timeout=300)


# ----------------------------------------------------------------------------- 1. health


@pytest.mark.docker
@pytest.mark.timeout(2700)  # the first test pays the image build
def test_services_healthy_loopback_only_not_root(stack: Stack) -> None:
    rows = stack.ps()
    assert rows["secrets-init"]["State"] == "exited" and rows["secrets-init"]["ExitCode"] == 0, rows["secrets-init"]
    for service in stack.services:
        assert rows[service]["State"] == "running" and rows[service]["Health"] == "healthy", rows[service]
    for service, url in HEALTH_IN_CONTAINER.items():
        code = (
            f"import sys, urllib.request; sys.stdout.write(urllib.request.urlopen('{url}', timeout=4).read().decode())"
        )
        body = json.loads(stack.exec(service, "python", "-c", code).stdout)
        assert body.get("ok", True) is not False, (service, body)
    health = json.loads(
        stack.exec(
            "camera-worker",
            "python",
            "-c",
            "import urllib.request; print(urllib.request.urlopen("
            "'http://127.0.0.1:8794/health', timeout=4).read().decode())",
        ).stdout
    )
    # the built-in renderer (Mesa llvmpipe) is in the image: ready without a Minecraft client
    assert health["worker_state"] == "ready" and health["redis"] == {"ok": True}, health
    assert stack.exec("redis", "redis-cli", "ping").stdout.strip() == "PONG"

    published: list[tuple[str, str]] = []
    for service in stack.services:
        info = json.loads(
            subprocess.run(
                ["docker", "inspect", stack.container_id(service)], text=True, capture_output=True, check=True
            ).stdout
        )[0]
        for bindings in (info["HostConfig"].get("PortBindings") or {}).values():
            published += [(service, b["HostIp"]) for b in bindings or []]
        for bindings in (info["NetworkSettings"].get("Ports") or {}).values():
            published += [(service, b["HostIp"]) for b in bindings or []]
        # every process of the container, as the engine sees it (docker top): none is root
        top = subprocess.run(
            ["docker", "top", stack.container_id(service), "-eo", "pid,uid,comm"],
            text=True,
            capture_output=True,
            check=True,
        ).stdout.splitlines()[1:]
        uids = {line.split()[1] for line in top if line.strip()}
        assert uids and "0" not in uids, (service, top)
        if service != "redis":
            assert uids == {"10001"}, (service, top)
    assert {"bridge", "world-host"} <= {s for s, _ in published}, published
    assert {ip for _, ip in published} == {"127.0.0.1"}, published
    for port in (stack.world_port, stack.bridge_port):
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200


# ----------------------------------------------------------------------------- 2. MCP + seed build


@pytest.mark.docker
def test_mcp_seed_build_read_back_from_the_world_volume(stack: Stack, tmp_path: Path) -> None:
    token = stack.token("agent")
    stat = stack.exec("bridge", "stat", "-c", "%a %u", "/secrets/agent.token").stdout.split()
    assert stat == ["600", "10001"] and len(token) >= 40
    assert token not in stack.exec("bridge", "env").stdout
    assert httpx.post(stack.mcp_url, json={}, timeout=10).status_code == 401

    async def scenario(client: Any) -> dict[str, Any]:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"project_context", "region_inspect", "build_prepare", "build_apply", "operation_status"} <= tools
        ctx = await call(client, "project_context")
        assert ctx["project"]["project_id"] == "default"
        before = await call(client, "region_inspect", {**REGION, "detail": "summary"})
        assert before["non_air"] == 0
        plan = await call(client, "build_prepare", {"recipe": SEED_RECIPE})
        start = time.monotonic()
        op = await call(
            client,
            "build_apply",
            {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": f"docker-{uuid.uuid4()}"},
        )
        done = await wait_terminal(client, op["operation_id"])
        stack.timings["seed apply"] = round(time.monotonic() - start, 3)
        assert done["state"] == "applied" and done["written"] == plan["changed_blocks"], done
        after = await call(client, "region_inspect", {**REGION, "detail": "summary"})
        assert after["non_air"] == plan["changed_blocks"]
        meta = await call(
            client, "schematic_export", {"name": "docker_seed", "min": REGION["min"], "max": REGION["max"]}
        )
        return {"op": op["operation_id"], "written": done["written"], "asset": meta}

    result = stack.mcp(scenario)
    stack.seed = result  # type: ignore[attr-defined]
    # The save in the world volume, copied out of the running world host and read by anvil-parser2,
    # after a checkpoint (the host answers batches from its write-ahead log and writes region files
    # at checkpoints; POST /v1/save answers when they hold every answered block).
    from e2e.independent import block_at

    saved = stack.exec(
        "world-host",
        "python",
        "-c",
        "import os, urllib.request as u; t = open('/secrets/service.token').read().strip(); "
        "port = os.environ.get('MCB_WORLD_HOST_PORT', '8765'); "
        "req = u.Request(f'http://127.0.0.1:{port}/v1/save', method='POST', headers={'Authorization': 'Bearer ' + t}); "
        "print(u.urlopen(req, timeout=60).read().decode())",
    )
    assert '"saved":true' in saved.stdout.replace(" ", ""), saved.stdout + saved.stderr
    stack.run("cp", "world-host:/data/world", str(tmp_path / "world"))
    assert {pos: block_at(tmp_path / "world", *pos) for pos in EXPECTED} == EXPECTED


# ----------------------------------------------------------------------------- 3. restart, down/up


def _state(stack: Stack) -> dict[str, Any]:
    """What must survive: tokens, the journal's record of the seed build, the asset, the world."""
    op = stack.seed["op"]  # type: ignore[attr-defined]

    async def scenario(client: Any) -> dict[str, Any]:
        st = await call(client, "operation_status", {"operation_id": op})
        assets = await call(client, "asset_list", {"query": "docker_seed"})
        world = await call(client, "region_inspect", {**REGION, "detail": "summary"})
        return {
            "op": (st["state"], st["written"]),
            "assets": sorted(a.get("asset_id") for a in assets.get("assets", [])),
            "world": (world["non_air"], sorted((p["state"], p["count"]) for p in world["palette"])),
        }

    return {
        "tokens": {k: hashlib.sha256(v.encode()).hexdigest() for k, v in stack.tokens().items()},
        **stack.mcp(scenario),
    }


@pytest.mark.docker
def test_restart_and_down_up_keep_world_journal_assets_tokens(stack: Stack) -> None:
    before = _state(stack)
    assert before["op"] == ("applied", stack.seed["written"])  # type: ignore[attr-defined]
    assert before["assets"] == ["docker_seed"]
    assert before["world"][0] > 0

    start = time.monotonic()
    stack.run("restart", timeout=300)
    stack.wait_healthy("after restart")
    stack.timings["restart until healthy"] = round(time.monotonic() - start, 1)
    assert _state(stack) == before

    stack.run("down", timeout=300)  # keeps the named volumes
    assert not stack.run("ps", "-q").stdout.strip()
    stack.up_wait("after down")
    assert _state(stack) == before


# ----------------------------------------------------------------------------- 4. kill mid-apply


@pytest.mark.docker
def test_docker_kill_of_the_journal_mid_apply_needs_recovery(stack: Stack) -> None:
    async def start_apply(client: Any) -> dict[str, Any]:
        plan = await call(client, "build_prepare", {"recipe": BIG_BOX})
        op = await call(
            client,
            "build_apply",
            {
                "plan_id": plan["plan_id"],
                "plan_hash": plan["plan_hash"],
                "idempotency_key": f"docker-kill-{uuid.uuid4()}",
            },
        )
        with anyio.fail_after(60):
            while True:  # kill once the journal has written part of it (a batch done, not all)
                st = await call(client, "operation_status", {"operation_id": op["operation_id"]})
                if st["state"] == "applying" and st["written"] > 0:
                    subprocess.run(["docker", "kill", stack.container_id("journal")], check=True, capture_output=True)
                    return {"op": op["operation_id"], "planned": plan["changed_blocks"], "at": st["written"]}
                assert st["state"] in ("queued", "applying"), st
                await anyio.sleep(0.02)

    killed = stack.mcp(start_apply)
    assert killed["at"] < killed["planned"]
    # `restart: unless-stopped` brings a killed container back; `start` covers engines that
    # treat a kill as a manual stop.
    stack.run("start", "journal")
    stack.wait_healthy("journal after docker kill")

    async def status(client: Any) -> dict[str, Any]:
        return await call(client, "operation_status", {"operation_id": killed["op"]})

    st = stack.mcp(status)
    assert st["state"] == "recovery_required", st

    review = stack.admin("recovery", "review", killed["op"])
    # the blocks of the batches it may have written, each either before or after (nobody else wrote)
    assert review["operation_id"] == killed["op"] and 0 < review["positions"] <= killed["planned"], review
    assert review["matches_before"] + review["matches_after"] == review["positions"], review
    assert review["foreign_states"] == 0, review
    done = stack.admin("recovery", "abandon", killed["op"], "--digest", review["current_digest"])
    assert done["state"] == "failed", done
    assert stack.mcp(status)["state"] == "failed"


# ----------------------------------------------------------------------------- 4b. chat profile


@pytest.mark.docker
@pytest.mark.timeout(900)
def test_chat_loop_runs_as_a_service_of_the_chat_profile(stack: Stack) -> None:
    """`--profile chat`: the chat loop's own image (the Dockerfile's `chat` target, with the
    pinned codex-acp) polls the embedded world host's chat as the non-root user."""
    start = time.monotonic()
    stack.run("--profile", "chat", "build", "chat", timeout=1200)
    stack.timings["build chat"] = round(time.monotonic() - start, 1)
    try:
        stack.run(
            "--profile",
            "chat",
            "up",
            "--detach",
            "--wait",
            "--wait-timeout",
            str(STACK_TIMEOUT_S),
            "chat",
            timeout=STACK_TIMEOUT_S + 60,
        )
        cid = stack.run("--profile", "chat", "ps", "-q", "chat").stdout.strip()
        assert cid
        _until(
            lambda: (
                "chat loop polling http://world-host:8765"
                in stack.run("--profile", "chat", "logs", "--no-color", "chat").stdout
            ),
            60,
            "the chat loop to poll",
        )
        top = subprocess.run(
            ["docker", "top", cid, "-eo", "pid,uid,comm"], text=True, capture_output=True, check=True
        ).stdout.splitlines()[1:]
        assert {line.split()[1] for line in top if line.strip()} == {"10001"}, top
        acp = stack.run(
            "--profile", "chat", "exec", "-T", "chat", "/opt/codex-acp/codex-acp", "--help", check=False, timeout=60
        )
        assert acp.returncode == 0, (acp.stdout, acp.stderr)
        info = json.loads(
            subprocess.run(["docker", "inspect", cid], text=True, capture_output=True, check=True).stdout
        )[0]
        assert not info["HostConfig"].get("PortBindings"), "the chat loop publishes no port"
        tokens = stack.tokens()
        history = subprocess.run(
            ["docker", "history", "--no-trunc", "--format", "{{.CreatedBy}}", "minecraft-builder-mcp/chat:local"],
            text=True,
            capture_output=True,
            check=True,
        ).stdout
        assert not [k for k, v in tokens.items() if v in history]
    finally:
        stack.run("--profile", "chat", "rm", "--stop", "--force", "chat", check=False)


# ----------------------------------------------------------------------------- 4c. Paper override

PAPER_HOST_PORTS = (6389, 50061, 50062, 50064, 8787, 8790, 8791, 8792, 8794)  # compose.paper.yaml's


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


@pytest.mark.docker
@pytest.mark.timeout(900)
def test_paper_override_runs_on_an_external_world_host(stack: Stack, tmp_path: Path) -> None:
    """compose.paper.yaml: the services (and the chat loop) on an external world host listening on
    this machine's loopback - the Java test host, the Paper plugin's core - with its tokens; no
    embedded world host, nothing published, every port bound to 127.0.0.1 only."""
    busy = [p for p in PAPER_HOST_PORTS if not _port_free(p)]
    if busy:
        pytest.skip(f"compose.paper.yaml uses the host's ports {busy}, which are in use here")
    from e2e.worldhost import external_host

    host = external_host("java-core", tmp_path / "java")  # skips with the reason without a JDK/Maven
    host.proc  # noqa: B018 - started
    env = {
        **os.environ,
        "COMPOSE_PROJECT_NAME": f"{stack.project}-paper",
        "MCB_WORLD_HOST_URL": host.url,
        "MCB_WORLD_HOST_TOKEN_DIR": str(host.secrets),
    }
    dc = ["docker", "compose", "-f", "compose.yaml", "-f", "compose.paper.yaml"]

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        r = subprocess.run([*dc, *args], cwd=ROOT, env=env, text=True, capture_output=True, timeout=600)
        if check and r.returncode != 0:
            raise AssertionError(f"{args} -> {r.returncode}\n{r.stdout}\n{r.stderr}")
        return r

    try:
        start = time.monotonic()
        run("up", "--detach", "--wait", "--wait-timeout", str(STACK_TIMEOUT_S), "--no-build")
        stack.timings["paper override up --wait"] = round(time.monotonic() - start, 1)
        services = run("ps", "--format", "{{.Service}}").stdout.split()
        assert "world-host" not in services and {"bridge", "journal", "chat"} <= set(services), services
        for cid in run("ps", "-q").stdout.split():
            info = json.loads(
                subprocess.run(["docker", "inspect", cid], text=True, capture_output=True, check=True).stdout
            )[0]
            assert info["HostConfig"]["NetworkMode"] == "host" and not info["HostConfig"].get("PortBindings")
        listening = subprocess.run(["ss", "-Hltn"], text=True, capture_output=True, check=True).stdout.split("\n")
        for port in PAPER_HOST_PORTS:
            addrs = {
                line.split()[3].rsplit(":", 1)[0]
                for line in listening
                if line.strip() and line.split()[3].endswith(f":{port}")
            }
            assert addrs and addrs <= {"127.0.0.1", "[::ffff:127.0.0.1]"}, (port, addrs)  # loopback only
        token = run("exec", "-T", "bridge", "cat", "/secrets/agent.token").stdout.strip()

        async def scenario() -> None:
            async with http_client("http://127.0.0.1:8787/mcp", token) as client:
                plan = await call(client, "build_prepare", {"recipe": SEED_RECIPE})
                op = await call(
                    client,
                    "build_apply",
                    {
                        "plan_id": plan["plan_id"],
                        "plan_hash": plan["plan_hash"],
                        "idempotency_key": f"paper-{uuid.uuid4()}",
                    },
                )
                done = await wait_terminal(client, op["operation_id"])
                assert done["state"] == "applied" and done["written"] == plan["changed_blocks"], done

        anyio.run(scenario)
        got = host.rpc("blocks_get", {"xyz": [c for pos in EXPECTED for c in pos]})
        assert dict(zip(EXPECTED, (got["palette"][i] for i in got["state"]), strict=True)) == EXPECTED
        _until(
            lambda: f"chat loop polling {host.url}" in run("logs", "--no-color", "chat").stdout,
            60,
            "the chat loop to poll the external host",
        )
    except BaseException:
        print(run("logs", "--no-color", "--tail", "100", check=False).stdout[-15000:])
        # who holds a port of the override's (a service that cannot bind says only "in use"): with
        # the host's network, a loopback connection made earlier may have been given it as its
        # own, ephemeral, port (50061-50064 lie in Linux's default 32768-60999)
        sockets = subprocess.run(["ss", "-Htanp"], text=True, capture_output=True).stdout.splitlines()
        print(
            "\n".join(line for line in sockets if any(f":{port} " in f"{line} " for port in PAPER_HOST_PORTS))
            or "ss: none of the ports"
        )
        raise
    finally:
        run("--profile", "embedded-world", "down", "--volumes", check=False)
        host.stop()


# ----------------------------------------------------------------------------- 5. no token in images


def _scan(stream: Any, needles: list[bytes]) -> set[bytes]:
    """Needles found anywhere in a byte stream (chunked, with overlap across chunk borders)."""
    found: set[bytes] = set()
    keep = max(map(len, needles))
    tail = b""
    while chunk := stream.read(1 << 20):
        buf = tail + chunk
        found |= {n for n in needles if n in buf}
        tail = buf[-keep:]
    return found


@pytest.mark.docker
def test_no_token_in_any_image_layer(stack: Stack, tmp_path: Path) -> None:
    tokens = stack.tokens()
    needles = [t.encode() for t in tokens.values()]
    assert all(len(n) >= 40 for n in needles)
    assert len(stack.images) >= len(HEALTH_IN_CONTAINER), stack.images
    images = [*stack.images, "python:3.11-slim", "redis:7.4-alpine"]
    for image in images:
        history = subprocess.run(
            ["docker", "history", "--no-trunc", "--format", "{{.CreatedBy}}", image],
            text=True,
            capture_output=True,
            check=True,
        ).stdout
        assert history.strip() and not [t for t in tokens.values() if t in history], image
        config = subprocess.run(
            ["docker", "image", "inspect", image], text=True, capture_output=True, check=True
        ).stdout
        assert not [t for t in tokens.values() if t in config], image
    # Every layer's files, as `docker save` exports them: no token bytes, no *.token file. A known
    # string of our code (the journal's admin CLI) must be found: the scan really reads the files.
    control = b"def recover_at_start("
    archive = tmp_path / "images.tar"
    subprocess.run(["docker", "save", "-o", str(archive), *stack.images], check=True, timeout=900)
    layers, found = 0, set()
    with tarfile.open(archive) as outer:
        for member in outer:
            if not member.isfile():
                continue
            f = outer.extractfile(member)
            assert f is not None
            if member.name.endswith("layer.tar") or member.name.startswith("blobs/"):
                try:
                    with tarfile.open(fileobj=f, mode="r|*") as layer:
                        layers += 1
                        for entry in layer:
                            assert not entry.name.endswith(".token"), (member.name, entry.name)
                            if entry.isfile():
                                data = layer.extractfile(entry)
                                assert data is not None
                                hits = _scan(data, [*needles, control])
                                found |= hits
                                assert not hits - {control}, (member.name, entry.name)
                    continue
                except tarfile.ReadError:  # a config or manifest blob, not a layer
                    f = outer.extractfile(member)
                    assert f is not None
            assert not _scan(f, needles), member.name
    assert control in found, "the layer scan did not read the images' files"
    assert layers >= len(stack.images)


# ----------------------------------------------------------------------------- probe (always runs)


def test_engine_probe_is_bounded_and_says_why() -> None:
    """The probe answers quickly with a reason on a machine without an engine."""
    start = time.monotonic()
    endpoint, reason = docker_engine()
    assert time.monotonic() - start < 3 * PROBE_TIMEOUT_S + 25
    assert (endpoint is None) == bool(reason)
    assert not _ping("unix:///nonexistent/docker.sock")
    assert not _ping("ftp://example.invalid")
    # this folder must stay a non-package, or it would shadow the Docker SDK
    import docker as sdk

    assert hasattr(sdk, "from_env"), f"`import docker` found {sdk!r}, not the Docker SDK"
