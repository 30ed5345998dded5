"""The ACP client: one agent process per project (sessions inside it per player).

The process is started directly (no shell, no npx) in its own process group with the
allowlisted environment; stderr goes to a log file under the state dir, never to chat.
Session updates are turned into *events* for the chat loop (agent text, tool stages); thoughts,
tool arguments and history replay are dropped here. Permission requests are refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    EnvVariable,
    Implementation,
    McpServerStdio,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
)
from mcb_common.procs import with_parent_death_signal

if TYPE_CHECKING:
    from acp.interfaces import Client

from . import isolation
from .config import ChatConfig, ChatConfigError
from .sessions import SessionRecord

log = logging.getLogger("mcb.chat.agent")

TOOL_NAMES = (
    "project_context",
    "region_inspect",
    "region_changes",
    "part_get",
    "build_prepare",
    "build_apply",
    "operation_status",
    "operation_cancel",
    "operation_undo_prepare",
    "part_define",
    "camera_capture",
    "camera_list",
    "asset_list",
    "schematic_export",
    "schematic_import_prepare",
)
_TOOL_RE = re.compile(r"\b(" + "|".join(TOOL_NAMES) + r")\b")


@dataclass
class AgentEvent:
    kind: str  # "text" | "tool" | "tool_result" | "permission_refused"
    text: str = ""
    tool: str = ""
    data: dict[str, Any] | None = None


Sink = Callable[[AgentEvent], Awaitable[None]]


def _tool_name(*candidates: Any) -> str:
    for c in candidates:
        if not c:
            continue
        m = _TOOL_RE.search(c if isinstance(c, str) else json.dumps(c, default=str)[:2000])
        if m:
            return m.group(1)
    return ""


def _result_data(update: Any) -> dict[str, Any] | None:
    raw = getattr(update, "raw_output", None)
    if isinstance(raw, dict):
        return raw
    for item in getattr(update, "content", None) or []:
        block = getattr(item, "content", None)
        text = getattr(block, "text", None)
        if isinstance(text, str):
            with contextlib.suppress(ValueError):
                data = json.loads(text)
                if isinstance(data, dict):
                    return data
    if isinstance(raw, str):
        with contextlib.suppress(ValueError):
            data = json.loads(raw)
            if isinstance(data, dict):
                return data
    return None


class _Client:
    """The ACP Client side: what the agent may ask of us (nearly nothing)."""

    def __init__(self, owner: AgentProcess):
        self.owner = owner

    def on_connect(self, conn: Any) -> None:  # noqa: D401 - protocol hook
        pass

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any):
        self.owner.permission_refusals += 1
        await self.owner.emit(
            session_id,
            AgentEvent(
                "permission_refused",
                tool=_tool_name(getattr(tool_call, "title", None), getattr(tool_call, "raw_input", None)),
            ),
        )
        for opt in options or []:
            if getattr(opt, "kind", "") in ("reject_once", "reject_always"):
                return RequestPermissionResponse(outcome=AllowedOutcome(option_id=opt.option_id, outcome="selected"))
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        o = self.owner
        if o.replaying or session_id != o.active_session:
            return  # history replay and stray sessions never reach chat
        if isinstance(update, AgentMessageChunk):
            text = getattr(update.content, "text", None)
            if isinstance(text, str):
                await o.emit(session_id, AgentEvent("text", text=text))
        elif isinstance(update, ToolCallStart):
            name = _tool_name(update.title, update.raw_input)
            o.tool_names[update.tool_call_id] = name
            o.tool_started[update.tool_call_id] = time.monotonic()
            await o.emit(session_id, AgentEvent("tool", tool=name))
        elif isinstance(update, ToolCallProgress):
            name = o.tool_names.get(update.tool_call_id) or _tool_name(update.title)
            if update.status in ("completed", "failed") and update.tool_call_id in o.tool_started:
                o.tool_rtt_ms.append((time.monotonic() - o.tool_started.pop(update.tool_call_id)) * 1000)
            if update.status == "completed":
                await o.emit(session_id, AgentEvent("tool_result", tool=name, data=_result_data(update)))
        # thoughts, plans, usage, mode/config updates: dropped

    async def write_text_file(self, *a: Any, **k: Any):
        raise RequestError.method_not_found("fs/write_text_file")

    async def read_text_file(self, *a: Any, **k: Any):
        raise RequestError.method_not_found("fs/read_text_file")

    async def create_terminal(self, *a: Any, **k: Any):
        raise RequestError.method_not_found("terminal/create")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


def _ended(returncode: int | None) -> str:
    if returncode is None:
        return "is still running"
    if returncode < 0:
        try:
            return f"was ended by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was ended by signal {-returncode}"
    return f"exited with code {returncode}"


class AgentDied(Exception):
    pass


# ACP's "Authentication required" (acp.RequestError.auth_required): what codex-acp answers to
# session/new or a prompt when it has neither an API key nor a login.
AUTH_REQUIRED = -32000


class AgentNotLoggedIn(Exception):
    """The agent refused for want of credentials. The message is the one line a person is shown
    (in game and in `mcb chat`): how to log the agent in, never the agent's own error text."""

    def __init__(self, cfg: ChatConfig):
        if cfg.acp_command:
            how = (
                "the chat agent (MCB_ACP_COMMAND) is not logged in: log it in with its own tool, or use the "
                "pinned agent with `mcb login` or MCB_OPENAI_API_KEY"
            )
        else:
            how = (
                "the chat agent is not logged in: run `mcb login`, or set MCB_OPENAI_API_KEY (or "
                "MCB_CODEX_API_KEY) where the chat loop runs, then ask again"
            )
        super().__init__(how)


def _not_logged_in(exc: BaseException) -> bool:
    return isinstance(exc, RequestError) and exc.code == AUTH_REQUIRED


class AgentProcess:
    """One ACP agent process. Not thread-safe; one prompt at a time (the turn queue ensures it)."""

    def __init__(self, cfg: ChatConfig, project_id: str, name: str = "agent"):
        self.cfg, self.project_id, self.name = cfg, project_id, name
        self.proc: asyncio.subprocess.Process | None = None
        self.conn: Any = None
        self.init: Any = None
        self.replaying = False
        self.active_session: str | None = None
        self.sinks: dict[str, Sink] = {}
        self.tool_names: dict[str, str] = {}
        self.tool_started: dict[str, float] = {}
        self.tool_rtt_ms: list[float] = []  # tool call start -> completed, as the agent reports them
        self.permission_refusals = 0
        self.killed = False
        self._stderr_file: Any = None
        self._prompt_task: asyncio.Task | None = None

    # --- lifecycle -------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None and not self.killed

    async def start(self) -> Any:
        p = isolation.prepare_dirs(self.cfg)
        argv = self.cfg.agent_argv()
        env = isolation.agent_env(self.cfg)
        if "/" not in argv[0] and shutil.which(argv[0], path=env.get("PATH")) is None:
            raise ChatConfigError(f"the ACP agent command {argv[0]!r} is not on the agent's PATH")
        logdir = self.cfg.state_dir / "logs"
        logdir.mkdir(parents=True, exist_ok=True)
        self._stderr_file = open(logdir / f"agent-{self.name}.log", "ab")  # noqa: SIM115
        self.proc = await asyncio.create_subprocess_exec(
            # no orphan survives a bridge killed with SIGKILL (the group kill covers normal stops)
            *with_parent_death_signal(argv, signal.SIGKILL),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr_file,
            env=env,
            cwd=str(p["work"]),
            start_new_session=True,
            limit=8 * 1024 * 1024,
        )
        # _Client answers a part of acp's Client protocol: acp (router.py _resolve_handler) looks each
        # method up and answers method_not_found for one it lacks
        self.conn = connect_to_agent(cast("Client", _Client(self)), self.proc.stdin, self.proc.stdout)
        self.init = await self._while_alive(
            self.conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="mcb-bridge", title="minecraft-builder chat", version="0.1.0"),
            ),
            60,
            "initialize",
        )
        await self._authenticate()
        return self.init

    async def _while_alive(self, request: Awaitable[Any], timeout: float, what: str) -> Any:
        """The answer to a request, or AgentDied when the process ends first (saying how it ended)."""
        task = asyncio.ensure_future(request)
        assert self.proc is not None  # started
        waiter = asyncio.ensure_future(self.proc.wait())
        try:
            done, _ = await asyncio.wait({task, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if task in done and task.exception() is None:
                return task.result()
            if task in done:  # a closed connection fails the request: was it the process ending?
                await asyncio.wait({waiter}, timeout=2)
            if waiter.done():
                raise AgentDied(
                    f"the agent process {_ended(self.proc.returncode)} during {what}"
                    f" (its stderr: {self.cfg.state_dir / 'logs' / f'agent-{self.name}.log'})"
                )
            if task in done:
                return task.result()  # raises the request's own error
            raise TimeoutError(f"the agent did not answer {what} within {timeout:.0f} s")
        finally:
            waiter.cancel()
            if not task.done():
                task.cancel()

    async def _authenticate(self) -> None:
        methods = [getattr(m, "id", "") for m in (self.init.auth_methods or [])]
        method = self.cfg.auth_method
        if not method and self.cfg.api_key:
            method = next((m for m in methods if "api" in m and "key" in m), None)
        if method:
            try:
                await asyncio.wait_for(self.conn.authenticate(method_id=method), timeout=30)
            except Exception as exc:  # noqa: BLE001 - reported, the prompt will fail clearly
                log.warning("authenticate(%s) failed: %s", method, exc.__class__.__name__)

    def kill(self) -> None:
        self.killed = True
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    async def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.conn.close(), 2)
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(Exception):
                assert self.proc.stdin is not None  # (a pipe)
                self.proc.stdin.close()
            try:
                await asyncio.wait_for(self.proc.wait(), 3)
            except TimeoutError:
                self.kill()
        if self.proc is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), 5)
        if self._stderr_file:
            self._stderr_file.close()
            self._stderr_file = None

    # --- sessions ---------------------------------------------------------------------
    def mcp_servers(self, player_id: str) -> list[McpServerStdio]:
        cmd = list(self.cfg.mcp_command)
        env = isolation.mcp_server_env(self.cfg, self.project_id, player_id)
        return [
            McpServerStdio(
                name="minecraft",
                command=cmd[0],
                args=cmd[1:],
                env=[EnvVariable(name=k, value=v) for k, v in env.items()],
            )
        ]

    async def open_session(self, player_id: str, rec: SessionRecord) -> tuple[str, str]:
        """(session_id, how): how is "loaded", "new" or "new_from_summary"."""
        cwd = str(isolation.paths(self.cfg)["work"])
        caps = getattr(self.init, "agent_capabilities", None)
        if rec.session_id and caps is not None and getattr(caps, "load_session", False):
            self.replaying = True
            try:
                resp = await self._while_alive(
                    self.conn.load_session(cwd=cwd, session_id=rec.session_id, mcp_servers=self.mcp_servers(player_id)),
                    60,
                    "session/load",
                )
                await self._select_model(rec.session_id, resp)
                return rec.session_id, "loaded"
            except AgentDied:
                raise
            except RequestError as exc:
                if _not_logged_in(exc):
                    raise AgentNotLoggedIn(self.cfg) from None
                log.info("session/load failed (%s); starting a new session", exc.__class__.__name__)
            except Exception as exc:  # noqa: BLE001 - fall back to a new session
                log.info("session/load failed (%s); starting a new session", exc.__class__.__name__)
            finally:
                self.replaying = False
        try:
            resp = await self._while_alive(
                self.conn.new_session(cwd=cwd, mcp_servers=self.mcp_servers(player_id)), 60, "session/new"
            )
        except RequestError as exc:
            if _not_logged_in(exc):
                raise AgentNotLoggedIn(self.cfg) from None
            raise
        await self._select_model(resp.session_id, resp)
        return resp.session_id, ("new_from_summary" if rec.session_id or rec.compact_summary() else "new")

    async def _select_model(self, session_id: str, resp: Any) -> None:
        if not self.cfg.model or resp is None:
            return
        for opt in getattr(resp, "config_options", None) or []:
            oid = getattr(opt, "id", "")
            if getattr(opt, "category", None) == "model" or oid == "model":
                values = []
                for o in getattr(opt, "options", None) or []:
                    values += [x.value for x in getattr(o, "options", [])] if hasattr(o, "group") else [o.value]
                if self.cfg.model in values:
                    with contextlib.suppress(Exception):
                        await self.conn.set_config_option(config_id=oid, session_id=session_id, value=self.cfg.model)
                        return
                log.warning("MCB_MODEL=%s is not offered by the agent's model selector", self.cfg.model)
                return
        log.warning("MCB_MODEL is set but the agent offers no model selector")

    # --- turns ------------------------------------------------------------------------
    async def emit(self, session_id: str, event: AgentEvent) -> None:
        sink = self.sinks.get(session_id)
        if sink is not None:
            await sink(event)

    async def prompt(self, session_id: str, text: str, sink: Sink) -> str:
        """Run one prompt; the stop reason ("end_turn", "cancelled", ...). Raises AgentDied."""
        self.active_session = session_id
        self.sinks[session_id] = sink
        self._prompt_task = asyncio.ensure_future(self.conn.prompt(session_id=session_id, prompt=[text_block(text)]))
        assert self.proc is not None  # started
        waiter = asyncio.ensure_future(self.proc.wait())
        try:
            done, _ = await asyncio.wait({self._prompt_task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if self._prompt_task in done and not self._prompt_task.cancelled():
                try:
                    return str(self._prompt_task.result().stop_reason)
                except RequestError as exc:
                    if _not_logged_in(exc):
                        raise AgentNotLoggedIn(self.cfg) from None
                    raise
            self._prompt_task.cancel()
            raise AgentDied(
                f"the agent process {_ended(self.proc.returncode)} during the turn"
                + (" (killed after ignoring cancel)" if self.killed else "")
            )
        except asyncio.CancelledError:
            self._prompt_task.cancel()
            raise
        finally:
            waiter.cancel()
            self.sinks.pop(session_id, None)
            self.active_session = None
            self._prompt_task = None

    async def cancel(self, session_id: str) -> bool:
        """Cancel the running prompt; kill the process if it has not ended within the grace
        period. True when the agent honoured the cancel."""
        task = self._prompt_task
        if task is None:
            return True
        with contextlib.suppress(Exception):
            await self.conn.cancel(session_id=session_id)
        done, _ = await asyncio.wait({task}, timeout=self.cfg.cancel_grace_s)
        if done:
            return True
        log.warning("agent ignored cancel for %.1f s; killing it", self.cfg.cancel_grace_s)
        self.kill()
        return False
