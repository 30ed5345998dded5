"""The local runner: Redis and every service as plain processes on loopback.

The same services compose.yaml runs in containers. State lives in ``MCB_RUNTIME_DIR``
(default ``.runtime/``): secrets/ (tokens, 0600), config.json (projects), world/ (the save),
journal/, camera/, redis/, logs/. Ports come from ``MCB_<NAME>_PORT``, else config.json "ports"
(mcb_rpc.settings); `mcb up` writes the ports and addresses it uses there, so later commands with
the same runtime folder reach this stack (docs/runtime.md).

The world host is either the embedded one (a process of this stack writing ``world/``) or an
external one, a Paper server with the plugin: ``mcb up --world-host URL --world-host-token-file F``
(kept in config.json ``world_host``; ``MCB_WORLD_HOST_URL`` / ``MCB_WORLD_HOST_TOKEN_FILE`` in the
environment do the same for one run). Then every service but the embedded host starts, after the
host's identity was checked (mcb_rpc.worldhost), and the in-game chat loop starts with it when the
host offers chat.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
from mcb_common.errors import ErrorCode, McbError
from mcb_common.files import atomic_write
from mcb_common.procs import with_parent_death_signal
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import PRINCIPALS, ensure_token, token_path
from mcb_rpc.worldhost import PAUSED_WARNING, WorldHostIdentity, check_url, probe, read_token_file

# How long the journal waits for an external world host that went away mid-apply (a Paper
# restart takes a minute or two) before the apply is left recovery_required; the embedded host's
# default stays the journal's own (10 s). MCB_LINK_RETRY_SECONDS overrides both.
EXTERNAL_LINK_RETRY_SECONDS = 180
DEFAULT_AREA = {"min": {"x": -64, "y": -64, "z": -64}, "max": {"x": 63, "y": 319, "z": 63}}


@dataclass
class Service:
    name: str
    module: str
    args: list[str]
    health_url: str | None  # None: ready when its log says ``ready_line`` (no HTTP endpoint)
    env: dict[str, str]
    ready_line: str = ""


@dataclass(frozen=True)
class WorldHostTarget:
    """Where the world protocol is served. ``url`` None: the embedded host of this stack."""

    url: str | None = None
    token_file: Path | None = None
    source: str = "embedded"

    @property
    def external(self) -> bool:
        return self.url is not None

    def token_source(self, s: Settings) -> str:
        return str(self.token_file or token_path(s.secrets_dir, "service"))

    def token(self, s: Settings) -> str:
        return read_token_file(self.token_file or token_path(s.secrets_dir, "service"))


def resolve_world_host(
    s: Settings, url: str | None = None, token_file: str | None = None, embedded: bool = False
) -> WorldHostTarget:
    """Flags, then the environment given to `mcb up`, then config.json ``world_host``. Flags are
    saved into config.json so every later `mcb` command (status, mcp, doctor) uses the same host;
    ``--embedded`` removes that setting. Raises McbError (invalid_request) for a bad URL."""
    cfg = s.load_config()
    if embedded:
        if "world_host" in cfg:
            _save_config(s, {k: v for k, v in cfg.items() if k != "world_host"})
        return WorldHostTarget()
    if url:
        tf = str(Path(token_file).expanduser().resolve()) if token_file else None
        target = WorldHostTarget(check_url(url), Path(tf) if tf else None, "--world-host")
        _save_config(s, {**cfg, "world_host": {"url": target.url, **({"token_file": tf} if tf else {})}})
        return target
    if token_file:
        raise McbError("invalid_request", "--world-host-token-file needs --world-host URL")
    env_url = os.environ.get("MCB_WORLD_HOST_URL", "").strip()
    section = cfg.get("world_host") if isinstance(cfg.get("world_host"), dict) else {}
    raw_url = env_url or str(section.get("url") or "")
    if not raw_url:
        return WorldHostTarget()
    raw_tf = os.environ.get("MCB_WORLD_HOST_TOKEN_FILE", "").strip() or str(section.get("token_file") or "")
    return WorldHostTarget(
        check_url(raw_url),
        Path(raw_tf).expanduser() if raw_tf else None,
        "MCB_WORLD_HOST_URL" if env_url else f"{s.config_file} world_host",
    )


def _save_config(s: Settings, cfg: dict) -> None:
    atomic_write(s.config_file, json.dumps(cfg, indent=2) + "\n")


def write_default_config(s: Settings) -> dict:
    path = s.config_file
    if path.exists():
        return json.loads(path.read_text())
    cfg = {
        "comment": "Non-secret configuration written by `mcb up`. Tokens live in secrets/.",
        "projects": [
            {
                "project_id": "default",
                "name": "Default project",
                "owner_player_id": str(uuid.uuid4()),
                "area": DEFAULT_AREA,
            }
        ],
        "world": {"create": "flat", "pregenerate": [-64, -64, 63, 63]},
    }
    _save_config(s, cfg)
    return cfg


def _env_for(s: Settings, target: WorldHostTarget) -> dict[str, str]:
    host = "127.0.0.1"
    world = (
        {"MCB_WORLD_HOST_URL": target.url}
        if target.external
        else {"MCB_WORLD_HOST_URL": f"http://{host}:{s.port('world_host')}"}
    )
    # Children read the world host's tokens from this file (mcb_rpc.tokens.world_host_token);
    # empty means the stack's own secrets/ (what the embedded host also reads).
    world["MCB_WORLD_HOST_TOKEN_FILE"] = str(target.token_file) if target.external and target.token_file else ""
    if target.external and not os.environ.get("MCB_LINK_RETRY_SECONDS"):
        # A game server restart takes longer than the embedded host's: the journal waits for it
        # (same batch ids, re-checked) before an apply is left recovery_required.
        world["MCB_LINK_RETRY_SECONDS"] = str(EXTERNAL_LINK_RETRY_SECONDS)
    return {
        "MCB_RUNTIME_DIR": str(s.runtime_dir),
        "MCB_BIND_HOST": host,
        **world,
        "MCB_PLANNER_ADDR": f"{host}:{s.port('planner_grpc')}",
        "MCB_JOURNAL_ADDR": f"{host}:{s.port('journal_grpc')}",
        "MCB_CAMERA_ADDR": f"{host}:{s.port('camera_grpc')}",
        "MCB_REDIS_URL": f"redis://{host}:{s.port('redis')}/0",
        "PYTHONUNBUFFERED": "1",
    }


def services(s: Settings, target: WorldHostTarget | None = None, chat: bool = False) -> list[Service]:
    """The processes of this stack, in start order: the embedded world host unless the target is
    external; the chat loop last when ``chat`` (the host offers chat and it was not turned off)."""
    target = target or WorldHostTarget()
    h = "http://127.0.0.1"
    cfg = s.load_config().get("world", {})
    pregen = cfg.get("pregenerate", [-64, -64, 63, 63])
    world_env = {
        "MCB_WORLD_DIR": str(s.runtime_dir / "world"),
        "MCB_WORLD_CREATE": cfg.get("create", "flat"),
        "MCB_WORLD_PREGEN": ",".join(str(v) for v in pregen),
        "MCB_WORLD_EXISTING": "",
        # The embedded world is a local sandbox: tests and scripts act as players here.
        "MCB_ALLOW_LOCAL_AUTOMATION": "1",
    }
    if cfg.get("path"):  # a person's own save (`mcb up --world PATH`): never created or extended
        world_env.update(
            {
                "MCB_WORLD_DIR": str(cfg["path"]),
                "MCB_WORLD_CREATE": "",
                "MCB_WORLD_PREGEN": "none",
                "MCB_WORLD_EXISTING": "1",
            }
        )
    out = [
        Service("world-host", "mcb_world_host", [], f"{h}:{s.port('world_host')}/health", world_env),
        Service("planner", "mcb_planner", [], f"{h}:{s.port('planner_health')}/health", {}),
        Service("journal", "mcb_journal", [], f"{h}:{s.port('journal_health')}/health", {}),
        Service("camera-worker", "mcb_camera", [], f"{h}:{s.port('camera_health')}/health", {}),
        Service("bridge", "mcb_bridge", ["http"], f"{h}:{s.port('bridge')}/health", {}),
        # the ops dashboard (services/dashboard): loopback only, read-only without the admin token
        Service("dashboard", "mcb_dashboard", [], f"{h}:{s.port('dashboard')}/health", {}),
    ]
    if target.external:
        out = out[1:]
    if chat:
        out.append(Service("chat", "mcb_bridge", ["chat"], None, {}, ready_line="chat loop polling"))
    return out


def _healthy(url: str | None) -> bool:
    if url is None:
        return False
    try:
        return httpx.get(url, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def _paused(health_url: str) -> bool:
    try:
        return httpx.get(health_url, timeout=2.0).json().get("paused") is True
    except (httpx.HTTPError, ValueError, AttributeError):
        return False


def _redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class Interrupted(Exception):
    """Ctrl-C/SIGTERM arrived while the stack was starting (raised by Stack at a safe point)."""


class Stack:
    """The processes of this stack. A stop request (``stop_requested``, set by the signal handler
    of run_up) is checked at safe points between steps: the handler never raises, so a signal that
    lands inside fork/exec of a service cannot lose a child or interrupt the stopping."""

    def __init__(
        self,
        s: Settings,
        target: WorldHostTarget | None = None,
        chat: bool | None = None,
        stop_requested: threading.Event | None = None,
    ):
        self.stop_requested = stop_requested or threading.Event()
        self.s = s
        self.target = target or WorldHostTarget()
        self.chat = chat  # None: start the chat loop when an external host offers chat
        self.identity: WorldHostIdentity | None = None
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.logs = s.runtime_dir / "logs"

    def _spawn(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen:
        self.logs.mkdir(parents=True, exist_ok=True)
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 - the child owns it
        full = dict(os.environ)
        full.update(env)
        # SIGTERM when the runner dies, even by SIGKILL, so no service outlives `mcb up`
        p = subprocess.Popen(
            with_parent_death_signal(argv, signal.SIGTERM),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=full,
            start_new_session=True,
        )
        self.procs.append((name, p))
        return p

    def _wait(self, name: str, p: subprocess.Popen, ready, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.stop_requested.is_set():
                raise Interrupted
            if p.poll() is not None:
                tail = (self.logs / f"{name}.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} exited with code {p.returncode}. Last log lines:\n{tail}")
            if ready():
                return
            time.sleep(0.1)
        raise RuntimeError(f"{name} did not become healthy within {timeout:.0f}s; see {self.logs}/{name}.log")

    def check_world_host(self) -> WorldHostIdentity:
        """The external host's identity, printed; raises McbError with what to do."""
        t = self.target
        ident = probe(t.url or "", t.token(self.s), t.token_source(self.s))
        print(f"  world host     ok  {ident.url}  ({t.source})\n                     {ident.line()}", flush=True)
        for w in ident.warnings:
            print(f"                     warning: {w}", flush=True)
        if ident.restart_line():
            print(f"                     {ident.restart_line()}", flush=True)
        self.identity = ident
        return ident

    def start(self) -> None:
        s = self.s
        base_env = _env_for(s, self.target)
        chat = False
        if self.target.external:
            ident = self.check_world_host()
            chat = ident.offers_chat if self.chat is None else self.chat
            if self.chat and not ident.offers_chat:
                raise RuntimeError("--chat was asked for, but the world host does not offer chat")
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is not installed; `make up` installs it (apt-get install redis-server)")
        rport = s.port("redis")
        if _redis_ping(rport):
            raise RuntimeError(f"something already answers on Redis port {rport}; stop it or set MCB_REDIS_PORT")
        (s.runtime_dir / "redis").mkdir(parents=True, exist_ok=True)
        p = self._spawn(
            "redis",
            [
                exe,
                "--port",
                str(rport),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(s.runtime_dir / "redis"),
                "--appendonly",
                "yes",
                "--save",
                "",
            ],
            {},
        )
        self._wait("redis", p, lambda: _redis_ping(rport))
        print(f"  redis          ok  127.0.0.1:{rport}", flush=True)
        for svc in services(s, self.target, chat):
            if self.stop_requested.is_set():
                raise Interrupted
            if _healthy(svc.health_url):
                raise RuntimeError(f"something already answers at {svc.health_url}; is another stack running?")
            env = dict(base_env)
            env.update(svc.env)
            p = self._spawn(svc.name, [sys.executable, "-m", svc.module, *svc.args], env)
            if svc.health_url:
                self._wait(svc.name, p, lambda u=svc.health_url: _healthy(u))
                print(f"  {svc.name:<14} ok  {svc.health_url}", flush=True)
                if svc.name == "world-host" and _paused(svc.health_url):  # the embedded host keeps a pause
                    print(f"                     warning: {PAUSED_WARNING}", flush=True)
            else:
                self._wait(svc.name, p, lambda n=svc.name, line=svc.ready_line: self._logged(n, line))
                print(
                    f"  {svc.name:<14} ok  polling {self.target.url or 'the embedded host'} for /ai messages",
                    flush=True,
                )

    def _logged(self, name: str, line: str) -> bool:
        try:
            return line in (self.logs / f"{name}.log").read_text(errors="replace")
        except FileNotFoundError:
            return False

    def watch(self) -> int:
        host = HostWatch(self.s, self.target, self.identity) if self.target.external else None
        while not self.stop_requested.is_set():
            for name, p in self.procs:
                if p.poll() is not None:
                    print(f"\n{name} exited with code {p.returncode}; see {self.logs}/{name}.log", flush=True)
                    return 1
            if host:
                host.tick()
            time.sleep(0.5)
        raise Interrupted

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


class HostWatch:
    """Tells the person running `mcb up` when the external world host goes away, comes back, or
    restarted (a new host instance). The stack keeps running: the journal retries a batch with
    the same id while the host is away and leaves an interrupted apply `recovery_required`."""

    def __init__(self, s: Settings, target: WorldHostTarget, ident: WorldHostIdentity | None, every: float = 2.0):
        self.s, self.target, self.every = s, target, every
        self.instance = ident.host_instance if ident else ""
        self.world = ident.world_uuid if ident else ""
        self.down_since: float | None = None
        self.next = time.monotonic() + every

    def tick(self) -> None:
        now = time.monotonic()
        if now < self.next:
            return
        self.next = now + self.every
        try:
            ident = probe(
                self.target.url or "", self.target.token(self.s), self.target.token_source(self.s), timeout=2.0
            )
        except McbError as exc:
            if self.down_since is None:
                self.down_since = now
                print(
                    f"\n  world host     DOWN {self.target.url}: {exc.message}\n"
                    "                     writes wait: the journal retries the same batch for "
                    f"{os.environ.get('MCB_LINK_RETRY_SECONDS') or EXTERNAL_LINK_RETRY_SECONDS} s "
                    "(MCB_LINK_RETRY_SECONDS), then leaves the apply recovery_required (mcb recovery review OP)",
                    flush=True,
                )
            return
        if self.down_since is not None:
            print(f"  world host     back after {now - self.down_since:.0f} s", flush=True)
            self.down_since = None
        if ident.world_uuid != self.world:
            print(
                f"  world host     now serves ANOTHER world ({ident.world_uuid}, was {self.world}): plans and cursors "
                "of the old world are refused",
                flush=True,
            )
            self.world = ident.world_uuid
        if ident.host_instance != self.instance:
            print(
                "  world host     restarted (new host instance): cursors of the change feed answer resync_required; "
                f"{ident.line()}",
                flush=True,
            )
            if ident.restart_line():
                print(f"                     {ident.restart_line()}", flush=True)
            self.instance = ident.host_instance


def connection_help(s: Settings, target: WorldHostTarget | None = None) -> str:
    target = target or WorldHostTarget()
    world_line = (
        f"World: the server at {target.url} (its own save; blocks reach disk at the server's save)"
        if target.external
        else f"World save (open it in Minecraft Java 1.21.11 after stopping): {s.runtime_dir / 'world'}"
    )
    url = mcp_url(s)
    tok = s.secrets_dir / "agent.token"
    c = client_configs(s)
    indent = "\n  ".join
    return f"""
The stack is up. MCP endpoint: {url}
The agent token is in {tok} (mode 0600; never paste it into a chat).
Every address of this stack is in {s.config_file} ("ports"); `mcb status`, `mcb mcp` and the
other commands read it, so set MCB_RUNTIME_DIR={s.runtime_dir} and nothing else.

  export MCB_AGENT_TOKEN="$(cat {shlex.quote(str(tok))})"

Claude Code (HTTP; the header is expanded now and stored in Claude Code's config):
  {c["claude_code_http"]}
Claude Code (stdio):
  {c["claude_code_stdio"]}

Codex, ~/.codex/config.toml (HTTP; start codex where MCB_AGENT_TOKEN is exported):
  {indent(c["codex_http"].splitlines())}
Codex (stdio, instead of the above):
  {indent(c["codex_stdio"].splitlines())}

Cursor, ~/.cursor/mcp.json or .cursor/mcp.json (HTTP; MCB_AGENT_TOKEN exported where Cursor starts):
  {c["cursor_http"]}
Cursor (stdio, instead of the above):
  {c["cursor_stdio"]}

MCP Inspector CLI ({INSPECTOR}, runs on Node 20 too), over HTTP with the token header:
  {c["inspector_http"]}
or over stdio (it passes the server only the variables given with -e):
  {c["inspector_stdio"]}

{world_line}
Ops dashboard: http://127.0.0.1:{s.port("dashboard")}/ (actions need the admin token: {s.secrets_dir / "admin.token"})
Logs: {s.runtime_dir / "logs"}    Health: `mcb status`    Stop: Ctrl-C
"""


# The MCP Inspector release the printed commands name: checked on Node 20.20 over HTTP (--header)
# and stdio (-e) by services/bridge/tests/test_inspector_cli.py.
INSPECTOR = "2.12.0"


def mcp_url(s: Settings) -> str:
    return f"http://127.0.0.1:{s.port('bridge')}/mcp"


def client_configs(s: Settings) -> dict[str, str]:
    """Ready-to-paste MCP client settings for this stack (HTTP with the agent token from the
    environment variable MCB_AGENT_TOKEN, or stdio through `mcb mcp` with MCB_RUNTIME_DIR, which
    finds every address in config.json). Formats: Claude Code `claude mcp add`, Codex
    config.toml [mcp_servers.*], Cursor mcp.json "mcpServers"."""
    url, rt = mcp_url(s), str(s.runtime_dir)
    mcb = str(Path(sys.executable).with_name("mcb"))
    q = shlex.quote
    toml_str = json.dumps  # a TOML basic string accepts JSON's escapes for these paths
    return {
        "claude_code_http": f"claude mcp add --transport http minecraft {url} "
        '--header "Authorization: Bearer $MCB_AGENT_TOKEN"',
        "claude_code_stdio": f"claude mcp add --transport stdio --env MCB_RUNTIME_DIR={q(rt)} minecraft -- {q(mcb)} mcp",
        "codex_http": f'[mcp_servers.minecraft]\nurl = {toml_str(url)}\nbearer_token_env_var = "MCB_AGENT_TOKEN"',
        "codex_stdio": f'[mcp_servers.minecraft]\ncommand = {toml_str(mcb)}\nargs = ["mcp"]\n'
        f"env = {{ MCB_RUNTIME_DIR = {toml_str(rt)} }}",
        "cursor_http": json.dumps(
            {"mcpServers": {"minecraft": {"url": url, "headers": {"Authorization": "Bearer ${env:MCB_AGENT_TOKEN}"}}}}
        ),
        "cursor_stdio": json.dumps(
            {"mcpServers": {"minecraft": {"command": mcb, "args": ["mcp"], "env": {"MCB_RUNTIME_DIR": rt}}}}
        ),
        "inspector_http": f"npx -y @modelcontextprotocol/inspector@{INSPECTOR} --cli {url} --transport http "
        '--header "Authorization: Bearer $MCB_AGENT_TOKEN" --method tools/list',
        "inspector_stdio": f"npx -y @modelcontextprotocol/inspector@{INSPECTOR} --cli -e MCB_RUNTIME_DIR={q(rt)} "
        f"{q(mcb)} mcp --method tools/list",
    }


def stack_addresses(s: Settings, target: WorldHostTarget) -> dict[str, str]:
    """Every address this stack serves or uses, for people and clients (config.json "addresses")."""
    h = "127.0.0.1"
    return {
        "mcp": mcp_url(s),
        "world_host": target.url or f"http://{h}:{s.port('world_host')}",
        "planner": f"{h}:{s.port('planner_grpc')}",
        "journal": f"{h}:{s.port('journal_grpc')}",
        "camera": f"{h}:{s.port('camera_grpc')}",
        "redis": f"redis://{h}:{s.port('redis')}/0",
        **{name: f"http://{h}:{port}/health" for name, port in s.all_ports().items() if name.endswith("_health")},
    }


def record_addresses(s: Settings, target: WorldHostTarget) -> dict:
    """Write the ports this run uses (environment > config.json > defaults) and the addresses
    they make into config.json, so that every later `mcb` command and the stdio bridge started
    with the same MCB_RUNTIME_DIR reach this stack, not one on the default ports."""
    cfg = {**s.load_config(), "ports": s.all_ports(), "addresses": stack_addresses(s, target)}
    _save_config(s, cfg)
    return cfg


def parse_area(text: str) -> dict:
    """``minX,minY,minZ,maxX,maxY,maxZ`` → a project area (any corner order; y within the world)."""
    from mcb_common.geometry import Box

    parts = [p.strip() for p in str(text).replace(" ", ",").split(",") if p.strip()]
    try:
        v = [int(p) for p in parts]
    except ValueError:
        raise McbError(
            ErrorCode.INVALID_REQUEST, f"the area must be 6 integers minX,minY,minZ,maxX,maxY,maxZ (got {text!r})"
        ) from None
    if len(v) != 6:
        raise McbError(
            ErrorCode.INVALID_REQUEST, f"the area must be 6 integers minX,minY,minZ,maxX,maxY,maxZ (got {len(v)})"
        )
    box = Box.parse({"x": v[0], "y": v[1], "z": v[2]}, {"x": v[3], "y": v[4], "z": v[5]}, "area")
    if box.min.y < -64 or box.max.y > 319:
        raise McbError(ErrorCode.OUT_OF_BOUNDS, f"the area's y must lie within -64..319 (got {box.min.y}..{box.max.y})")
    return box.as_dict()


def set_area(s: Settings, text: str, project_id: str | None = None) -> str:
    """Set a project's build area in config.json (the journal re-reads it; no restart needed)."""
    area = parse_area(text)
    cfg = write_default_config(s)
    projects = cfg.get("projects") or []
    target = next(
        (p for p in projects if isinstance(p, dict) and (project_id is None or p.get("project_id") == project_id)), None
    )
    if target is None:
        raise McbError(
            ErrorCode.NOT_FOUND,
            f"no project {project_id!r} in {s.config_file}",
            details={"projects": [p.get("project_id") for p in projects if isinstance(p, dict)]},
        )
    target["area"] = area
    _save_config(s, cfg)
    a, b = area["min"], area["max"]
    return (
        f"project {target.get('project_id')}: build area x {a['x']}..{b['x']}, y {a['y']}..{b['y']}, "
        f"z {a['z']}..{b['z']}"
    )


def use_world(s: Settings, world: str | None, own_world: bool) -> None:
    """Remember ``--world PATH`` (a person's save) or ``--own-world`` (back to runtime/world) in config.json."""
    if world is None and not own_world:
        return
    cfg = write_default_config(s)
    section = dict(cfg.get("world") or {})
    if own_world:
        section.pop("path", None)
        section.setdefault("create", "flat")
        section.setdefault("pregenerate", [-64, -64, 63, 63])
    else:
        section["path"] = str(Path(str(world)).expanduser().resolve())
    cfg["world"] = section
    _save_config(s, cfg)


def prepare_existing_world(s: Settings) -> str | None:
    """For a configured save (``world.path``): refuse while the game holds its session.lock or
    for another data version, else back it up. Returns what to tell the owner (None: no save)."""
    from mcb_world_host.existing import backup, check_save, refuse_if_locked

    path = (s.load_config().get("world") or {}).get("path")
    if not path:
        return None
    info = check_save(Path(path))
    refuse_if_locked(Path(path))
    dest = backup(Path(path), s.runtime_dir / "backups")
    return (
        f"Opening your save {path} ({info['name'] or 'unnamed'}, Minecraft {info['minecraftVersion']}); "
        f"backed up first to {dest}"
    )


def run_up(
    quiet: bool = False,
    world_host: str | None = None,
    world_host_token_file: str | None = None,
    embedded: bool = False,
    chat: bool | None = None,
    world: str | None = None,
    own_world: bool = False,
    area: str | None = None,
) -> int:
    stop_requested = threading.Event()

    def _sig(signum, frame):  # noqa: ANN001
        # Only a flag: the stack checks it between steps (Stack). Raising here could land inside
        # fork/exec of a service; more signals (a terminal sends Ctrl-C to `make`, `uv run` and
        # this process alike) change nothing once stopping has begun.
        stop_requested.set()

    code = 0
    signal.signal(signal.SIGINT, _sig)
    signal.signal(signal.SIGTERM, _sig)
    try:
        s = Settings.from_env()
        s.runtime_dir.mkdir(parents=True, exist_ok=True)
        for principal in PRINCIPALS:
            ensure_token(s.secrets_dir, principal)
        write_default_config(s)
        try:
            target = resolve_world_host(s, world_host, world_host_token_file, embedded)
            if world is not None and target.external:
                raise McbError(
                    ErrorCode.INVALID_REQUEST,
                    "--world opens a save with the embedded world host; "
                    f"this stack uses the external host {target.url} (add --embedded)",
                )
            if world is not None:  # a wrong path or version is never remembered
                from mcb_world_host.existing import check_save

                check_save(Path(world).expanduser())
            use_world(s, world, own_world)
            if area is not None:
                print(set_area(s, area), flush=True)
            opened = None if target.external else prepare_existing_world(s)
        except McbError as exc:
            print(f"mcb up: {exc.message}", file=sys.stderr, flush=True)
            return 2
        if opened:
            print(opened, flush=True)
            if area is None:
                a = (s.load_config().get("projects") or [{}])[0].get("area") or DEFAULT_AREA
                print(
                    f"Build area x {a['min']['x']}..{a['max']['x']}, y {a['min']['y']}..{a['max']['y']}, "
                    f"z {a['min']['z']}..{a['max']['z']} — choose where the agent may build with --area or "
                    "`mcb area set minX,minY,minZ,maxX,maxY,maxZ`",
                    flush=True,
                )
        record_addresses(s, target)
        stack = Stack(s, target, chat, stop_requested)
    except KeyboardInterrupt:  # a signal before the handlers above were installed
        stop_requested.set()
    if stop_requested.is_set():
        print("\nStopped before anything was started.", flush=True)
        return 0
    try:
        print(f"Starting minecraft-builder-mcp in {s.runtime_dir}", flush=True)
        stack.start()
        if not quiet:
            print(connection_help(s, target), flush=True)
        print("READY", flush=True)
        code = stack.watch()
    except (Interrupted, KeyboardInterrupt):
        print("\nStopping…", flush=True)
    except RuntimeError as exc:
        print(f"\nmcb up failed: {exc}", file=sys.stderr, flush=True)
        code = 1
    except McbError as exc:
        print(f"\nmcb up failed: {exc.message}", file=sys.stderr, flush=True)
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
    try:
        target = resolve_world_host(s)
    except McbError as exc:
        print(f"{'world host':<14} {'CONFIG':<9} {exc.message}")
        return 1
    try:
        ident = probe(target.url or s.world_host_url, target.token(s), target.token_source(s), timeout=2.0)
        print(
            f"{'world host':<14} {'ok':<9} {ident.url} ({'external' if target.external else 'embedded'})\n"
            f"{'':<24} {ident.line()}"
        )
        for w in ident.warnings:
            print(f"{'':<24} warning: {w}")
        if ident.restart_line():
            print(f"{'':<24} {ident.restart_line()}")
    except McbError as exc:
        bad += 1
        print(f"{'world host':<14} {'DOWN':<9} {exc.message}")
    for svc in services(s, target):
        if svc.name == "world-host":
            continue  # shown above with its identity
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
