"""The chat loop: poll the world host (admin token, one fresh client_id per process), queue
turns per project in Redis, run each turn through the project's ACP agent, and answer only the
initiator with short stage messages (at most `rate_per_s` per player per second).

Stages: "inspecting", "planned N blocks" (from build_prepare's result), "applying X%" and
"done/conflict/..." (from the journal's `mcb:progress` stream), then the agent's final answer.
`/ai stop` from someone who may stop everything arrives as a message of type "cancel": the host has
already paused writes; here the player's waiting messages are dropped and every running turn is
cancelled (the agent is killed when it ignores the cancel for `cancel_grace_s`). Lines that are
exactly a command arrive as type "command" (commands.py): `stop` there stops only the player's own
requests (their waiting ones, their running turn and its journal operations; writes are not
paused), `resume`/`status` answer at once, `undo` waits in the project's queue like a request.
Each player's messages go to their chosen project (`/ai project use`), else the host's project.
A turn that prepared a plan and ended without applying it leaves it pending for the player, shown
in game where the host can (plans.py): `/ai apply` and `/ai reject` decide, `/ai preview` (answered
by a Paper host itself) hides or shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from mcb.world.v1 import world_pb2
from mcb_common.chatcommands import Command, parse
from mcb_common.errors import ErrorCode, McbError
from redis.exceptions import RedisError

from .agent import AgentDied, AgentEvent, AgentNotLoggedIn, AgentProcess
from .commands import CommandRunner, Services, error_text
from .config import ChatConfig, ChatConfigError
from .plans import PREPARE_TOOLS, PlanPreviews, pending_from
from .projects import ProjectError, ProjectRegistry
from .ratelimit import RateLimiter
from .sessions import SessionRecord, SessionStore
from .turnqueue import TurnQueue

log = logging.getLogger("mcb.chat")

PROGRESS_STREAM = "mcb:progress"
REPLY_MAX = 1000
MAX_LINE = 256  # the host's per-line cap (longer lines are cut there)
MAX_LINES = 4  # the host's lines per reply
# answered before the next polled message is handled: a prompt right after `project use` goes there
INLINE_COMMANDS = {"project create", "project use", "area set"}
INSPECT_TOOLS = {"project_context", "region_inspect", "region_changes", "part_get", "camera_capture"}


@dataclass
class Turn:
    item: dict[str, Any]
    project: str
    player: str
    msg_id: str
    received: float
    agent: AgentProcess | None = None
    session_id: str | None = None
    text: list[str] = field(default_factory=list)
    stages: set[str] = field(default_factory=set)
    operations: list[str] = field(default_factory=list)
    prepared: list[dict[str, Any]] = field(default_factory=list)  # prepare tools' results, in order
    applied_plans: set[str] = field(default_factory=set)
    cancelled: bool = False
    cancel_at: float | None = None
    prompt_sent: float | None = None


def message_item(m: world_pb2.ChatMessage) -> dict[str, Any]:
    d = json_format.MessageToDict(m, preserving_proto_field_name=True)
    return {
        "id": m.id,
        "player_id": m.player_id,
        "project_id": m.project_id,
        "text": m.text,
        "type": m.type or "prompt",
        "position": d.get("position"),
        "target_block": d.get("target_block"),
        "at_millis": int(m.at_millis),
        "received_ms": int(time.time() * 1000),
    }


def build_prompt(item: dict[str, Any], *, summary: str = "", interrupted: SessionRecord | None = None) -> str:
    lines = [
        "You build in Minecraft for the player who wrote the request below, using the `minecraft` "
        "MCP tools (the project, the player and the world are fixed by the server). Answer briefly "
        "in plain text: the answer is shown in the game chat. To let the player see a plan before it "
        "is built (when they ask to see it first, or when build_apply refuses it with "
        "player_blocks_would_be_replaced), call build_prepare and end your turn without build_apply: "
        "the player sees the plan in game and decides with /ai apply or /ai reject.",
    ]
    pos = item.get("position")
    if pos:
        lines.append(
            "Player position: x={:.1f} y={:.1f} z={:.1f}, yaw {:.0f}, pitch {:.0f}{}".format(
                float(pos.get("x", 0)),
                float(pos.get("y", 0)),
                float(pos.get("z", 0)),
                float(pos.get("yaw", 0)),
                float(pos.get("pitch", 0)),
                f", world {pos['world']}" if pos.get("world") else "",
            )
        )
    tb = item.get("target_block")
    if tb:
        lines.append(
            f"Looking at block ({tb.get('x', 0)}, {tb.get('y', 0)}, {tb.get('z', 0)}) {tb.get('state', '')}".rstrip()
        )
    if summary:
        lines.append(f"Summary of the earlier conversation (the full history could not be restored):\n{summary}")
    if interrupted is not None and interrupted.unfinished:
        ops = ", ".join(interrupted.operations) or "none recorded"
        lines.append(
            f"Note: the previous request ({interrupted.unfinished.get('task', '')!r}) was interrupted before it "
            f"finished. Operations it started: {ops}. Check them with operation_status before repeating anything; "
            "nothing was replayed automatically."
        )
    lines.append(f"Request: {item.get('text', '')}")
    return "\n".join(lines)


class ChatLoop:
    def __init__(
        self,
        cfg: ChatConfig,
        host: Any,
        redis: Any,
        *,
        agent_factory: Callable[[str], AgentProcess] | None = None,
        client_id: str | None = None,
        op_checker: Callable[[str, str, list[str]], Awaitable[dict[str, str]]] | None = None,
        services: Any = None,
    ):
        self.cfg, self.host, self.redis = cfg, host, redis
        self.client_id = client_id or f"mcb-bridge-{uuid.uuid4().hex}"
        self.queue = TurnQueue(redis, cfg.max_queued)
        self.limiter = RateLimiter(cfg.rate_per_s)
        self.sessions = SessionStore(cfg.state_dir)
        self.agent_factory = agent_factory or (lambda project: AgentProcess(cfg, project, name=_slug(project)))
        self.agents: dict[str, AgentProcess] = {}
        self.agent_sessions: dict[int, dict[str, str]] = {}  # id(agent) -> player -> session id
        self.workers: dict[str, asyncio.Task] = {}
        self.kicks: dict[str, asyncio.Event] = {}
        self.active: dict[str, Turn] = {}
        self.stopping = asyncio.Event()
        self.tasks: set[asyncio.Task] = set()
        self.metrics: dict[str, list[float]] = {"turn_overhead_ms": [], "stop_latency_ms": []}
        self.took_over = False
        self.op_checker = op_checker or self._journal_states
        self._seq = 0  # order in which this bridge polled messages
        self.stop_seq: dict[str, int] = {}  # project -> seq of its latest /ai stop
        self.projects = ProjectRegistry(cfg.config_path, cfg.state_dir, cfg.owners)
        self.services = services or Services(
            cfg.journal_addr, cfg.camera_addr, cfg.agent_token, cfg.journal_admin_token
        )
        self.commands = CommandRunner(self.projects, self.services, self._world_range, self._world_uuid)
        self.plans = PlanPreviews(
            host, self.client_id, lambda project, player, plan: self.services.plan_entries(project, player, plan)
        )

    # --- the poll loop ----------------------------------------------------------------
    async def start(self) -> None:
        delay = 0.5
        while not self.stopping.is_set():
            try:
                await self.queue.reset()
                return
            except (RedisError, OSError) as exc:
                log.warning("Redis is unreachable at %s (%s); retrying", self.cfg.redis_url, exc.__class__.__name__)
                await self._sleep(delay)
                delay = min(delay * 2, 10)

    async def run(self) -> None:
        await self.start()
        log.info("chat loop polling %s as %s", self.cfg.world_url, self.client_id)
        backoff = 0.5
        try:
            while not self.stopping.is_set():
                try:
                    res = await self.host.chat_poll(self.client_id)
                    backoff = 0.5
                except McbError as exc:
                    log.warning("chat_poll failed: %s", exc)
                    await self._sleep(backoff)
                    backoff = min(backoff * 2, 10)
                    continue
                if res.took_over:
                    self.took_over = True
                    log.info("took over chat from a previous bridge; its leased messages were failed by the host")
                for m in res.messages:
                    try:
                        await self.handle(m)
                    except (RedisError, OSError) as exc:
                        log.warning("turn queue unavailable: %s", exc.__class__.__name__)
                        await self.reply(
                            m.id,
                            m.player_id,
                            "",
                            done=True,
                            error="the bridge's turn queue is unavailable; try again later",
                        )
                if not res.messages:
                    await self._sleep(self.cfg.poll_interval_s)
        finally:
            await self.shutdown()

    async def _sleep(self, s: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), s)

    def _spawn(self, coro: Any) -> asyncio.Task:
        t = asyncio.ensure_future(coro)
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)
        return t

    async def handle(self, m: world_pb2.ChatMessage) -> None:
        item = message_item(m)
        self._seq += 1
        item["seq"] = self._seq
        if not item["project_id"] or not item["player_id"]:
            await self.reply(item["id"], item["player_id"], "", done=True, error="message without project or player")
            return
        try:
            item["project_id"] = self.projects.current(item["player_id"], item["project_id"])
        except ProjectError as exc:
            log.warning("cannot read the players' projects: %s", exc)
        if item["type"] == "cancel":
            for project in {item["project_id"], *self.active}:
                self.stop_seq[project] = item["seq"]
            self._spawn(self.on_cancel(item))
            return
        project = item["project_id"]
        cmd = parse(item["text"]) if item["type"] == "command" else None
        if cmd is not None and cmd.name in INLINE_COMMANDS:
            await self.run_command(item, cmd)  # quick, and the player's next line must see its effect
            return
        if cmd is not None and cmd.name != "undo":
            self._spawn(self.run_command(item, cmd))
            return
        if cmd is not None:
            item["command"] = cmd.name
        pos = await self.queue.push(project, item)
        if pos == 0:
            await self.reply(
                item["id"],
                item["player_id"],
                f"busy, try later: {self.cfg.max_queued} requests are already waiting in this project",
                done=True,
            )
            return
        if project in self.active:
            await self.reply(item["id"], item["player_id"], f"queued (#{pos}); another request is running")
        self._ensure_worker(project)
        self.kicks[project].set()

    def _ensure_worker(self, project: str) -> None:
        if project not in self.kicks:
            self.kicks[project] = asyncio.Event()
        w = self.workers.get(project)
        if w is None or w.done():
            self.workers[project] = asyncio.ensure_future(self._worker(project))

    async def _worker(self, project: str) -> None:
        kick = self.kicks[project]
        while not self.stopping.is_set():
            item = await self.queue.pop(project)
            if item is None:
                await kick.wait()
                kick.clear()
                continue
            try:
                if item.get("command") == "undo":
                    await self.run_undo(project, item)
                else:
                    await self.run_turn(project, item)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - one bad turn must not stop the project's queue
                log.exception("turn %s failed", item.get("id"))

    # --- replies ----------------------------------------------------------------------
    async def reply(self, msg_id: str, player_id: str, text: str, *, done: bool = False, error: str = "") -> bool:
        lines = fit_lines(text, MAX_LINES - (1 if error else 0))
        for _ in range(len(lines) + (1 if error else 0)):
            await self.limiter.acquire(player_id)
        params = world_pb2.ChatReplyParams(
            id=msg_id,
            player_id=player_id,
            text="\n".join(lines),
            done=done,
            error=error[: MAX_LINE - 20],
            client_id=self.client_id,
        )
        for _attempt in range(5):
            try:
                res = await self.host.chat_reply(params)
                return bool(res.delivered)
            except McbError as exc:
                if exc.code == ErrorCode.BUSY:
                    wait = (exc.details or {}).get("retryAfterMillis", 250)
                    await asyncio.sleep(min(float(wait), 2000) / 1000)
                    continue
                log.warning("chat_reply for %s failed: %s", msg_id, exc.code)
                return False
        return False

    async def resume_writes(self, project: str, player: str, reason: str) -> bool | None:
        """Resume the host's writes for the project owner. None: nothing was paused; False: paused
        and this player may not resume."""
        try:
            if not await self.host.writes_paused():
                return None
            owner = self.projects.owner(project)
            if owner is None or owner != player:
                return False
            await self.host.resume(reason)
            return True
        except McbError as exc:
            log.warning("resume failed: %s", exc.code)
            return False

    async def stage(self, turn: Turn, key: str, text: str) -> None:
        if key in turn.stages or turn.cancelled:
            return
        turn.stages.add(key)
        await self.reply(turn.msg_id, turn.player, text)

    # --- turns ------------------------------------------------------------------------
    async def _agent(self, project: str) -> AgentProcess:
        agent = self.agents.get(project)
        if agent is not None and agent.alive:
            return agent
        if agent is not None:
            self.agent_sessions.pop(id(agent), None)
            await agent.close()
        agent = self.agent_factory(project)
        self.agents[project] = agent
        try:
            await agent.start()
        except Exception:  # a half-started agent is never reused: the next turn starts a new one
            self.agents.pop(project, None)
            with contextlib.suppress(Exception):
                await agent.close()
            raise
        self.agent_sessions[id(agent)] = {}
        return agent

    async def run_turn(self, project: str, item: dict[str, Any]) -> None:
        turn = Turn(item=item, project=project, player=item["player_id"], msg_id=item["id"], received=time.monotonic())
        self.active[project] = turn
        await self.queue.set_active(project, item)
        rec = self.sessions.load(project, turn.player)
        interrupted = SessionRecord(**{**rec.__dict__}) if rec.unfinished else None
        rec.unfinished = {"message_id": turn.msg_id, "task": item["text"][:200], "started_ms": int(time.time() * 1000)}
        rec.operations = []
        self.sessions.save(project, turn.player, rec)
        watcher = self._spawn(self._watch_progress(turn))
        stop_reason = "error"
        try:
            agent = await self._agent(project)
            turn.agent = agent
            known = self.agent_sessions.setdefault(id(agent), {})
            how = "cached"
            if turn.player in known:
                turn.session_id = known[turn.player]
            else:
                turn.session_id, how = await agent.open_session(turn.player, rec)
                known[turn.player] = turn.session_id
                rec.session_id = turn.session_id
                self.sessions.save(project, turn.player, rec)
            if how == "new_from_summary":
                await self.reply(
                    turn.msg_id,
                    turn.player,
                    "I could not restore our earlier conversation; continuing from a short summary of it.",
                )
            if interrupted is not None:
                states: dict[str, str] = {}
                if interrupted.operations:
                    try:
                        states = await asyncio.wait_for(
                            self.op_checker(project, turn.player, interrupted.operations[:5]), 10
                        )
                    except Exception as exc:  # noqa: BLE001
                        log.warning("cannot check interrupted operations: %s", exc.__class__.__name__)
                interrupted.operations = [
                    f"{op} ({states.get(op, 'state unknown')})" for op in interrupted.operations[:5]
                ]
                checked = (
                    ("; its operations now: " + ", ".join(interrupted.operations))
                    if interrupted.operations
                    else "; it had started no operation"
                )
                await self.reply(
                    turn.msg_id,
                    turn.player,
                    "Your previous request was interrupted before it finished"
                    + checked
                    + ". Nothing is repeated automatically.",
                )
            # only a request that came after the latest /ai stop resumes writes
            resumed = None
            if item.get("seq", 0) > self.stop_seq.get(project, 0):
                resumed = await self.resume_writes(project, turn.player, f"new request by the owner {turn.player}")
            if resumed is False and not turn.cancelled:
                await self.reply(
                    turn.msg_id,
                    turn.player,
                    "note: writes are paused (after /ai stop or a bridge restart) until the project owner's "
                    "next request or /ai resume",
                )
            if turn.cancelled:
                stop_reason = "cancelled"
            else:
                prompt = build_prompt(
                    item, summary=rec.compact_summary() if how == "new_from_summary" else "", interrupted=interrupted
                )
                turn.prompt_sent = time.monotonic()
                self.metrics["turn_overhead_ms"].append((turn.prompt_sent - turn.received) * 1000)
                stop_reason = await agent.prompt(turn.session_id, prompt, lambda ev: self._on_event(turn, ev))
        except AgentDied as exc:
            stop_reason = "cancelled" if turn.cancelled else "died"
            self.agent_sessions.pop(id(turn.agent), None)
            log.warning("turn %s: %s", turn.msg_id, exc)
        except ChatConfigError as exc:
            await self.reply(turn.msg_id, turn.player, "", done=True, error=f"the chat agent is not configured: {exc}")
            stop_reason = "config"
        except AgentNotLoggedIn as exc:  # one line that says how, in game and in the bridge's log
            log.warning("turn %s: %s", turn.msg_id, exc)
            # the next request starts a new agent process, which reads a login or key given since
            stale = self.agents.pop(project, None)
            if stale is not None:
                self.agent_sessions.pop(id(stale), None)
                with contextlib.suppress(Exception):
                    await stale.close()
            await self.reply(turn.msg_id, turn.player, "", done=True, error=str(exc))
            stop_reason = "not_logged_in"
        except asyncio.CancelledError:
            stop_reason = "shutdown"  # the bridge is stopping: keep the turn flagged as unfinished
            raise
        except Exception as exc:  # noqa: BLE001
            log.exception("turn %s failed", turn.msg_id)
            stop_reason = f"error:{exc.__class__.__name__}"
        finally:
            if turn.cancel_at is not None:
                self.metrics["stop_latency_ms"].append((time.monotonic() - turn.cancel_at) * 1000)
            await asyncio.sleep(0)  # let the progress watcher flush what it already read
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher
            if stop_reason != "shutdown":
                await self._tell_ended_operations(turn)
            self.active.pop(project, None)  # a stop from now on has no running turn to cancel
            if turn.operations and item["text"].strip():
                # block history names the request beside the operations (best effort), before the
                # last line: a player who reads it and asks for the history sees it
                try:
                    await self.services.note_prompt(project, turn.player, turn.operations[:100], item["text"])
                except McbError as exc:
                    log.info("the request was not noted beside its operations: %s", exc.code)
            final = "".join(turn.text).strip()
            if stop_reason in ("config", "not_logged_in"):
                pass  # already answered with the one line that says what to do
            elif stop_reason == "shutdown":
                await self.reply(
                    turn.msg_id,
                    turn.player,
                    "",
                    done=True,
                    error="the chat bridge stopped during this request; nothing is repeated automatically",
                )
            elif turn.cancelled or stop_reason == "cancelled":
                killed = turn.agent is not None and turn.agent.killed
                await self.reply(
                    turn.msg_id,
                    turn.player,
                    "stopped" + (" (the agent ignored the stop and was ended)" if killed else ""),
                    done=True,
                )
            elif stop_reason.startswith("error") or stop_reason == "died":
                await self.reply(
                    turn.msg_id,
                    turn.player,
                    final[: REPLY_MAX // 2],
                    done=True,
                    error="the agent failed during this request; nothing is repeated automatically",
                )
            else:
                if stop_reason not in ("end_turn", "StopReason.end_turn"):
                    final = (final + f" [{stop_reason}]").strip()
                await self._offer_left_plan(turn)
                await self.reply(turn.msg_id, turn.player, final or "done", done=True)
            if turn.agent is not None and turn.agent.tool_rtt_ms:
                self.metrics.setdefault("tool_rtt_ms", []).extend(turn.agent.tool_rtt_ms)
                turn.agent.tool_rtt_ms.clear()
            log.info(
                "turn %s in %s ended: %s (overhead %s ms)",
                turn.msg_id,
                project,
                stop_reason,
                f"{(turn.prompt_sent - turn.received) * 1000:.0f}" if turn.prompt_sent else "-",
            )
            rec.last_task = item["text"][:200]
            rec.last_result = (final or stop_reason)[:300]
            rec.operations = turn.operations[:20]
            if stop_reason != "shutdown":
                rec.unfinished = None
            self.sessions.save(project, turn.player, rec)
            await self.queue.set_active(project, None)

    async def _on_event(self, turn: Turn, ev: AgentEvent) -> None:
        if ev.kind == "text":
            turn.text.append(ev.text)
        elif ev.kind == "tool" and ev.tool in INSPECT_TOOLS:
            await self.stage(turn, "inspect", "inspecting the area...")
        elif ev.kind == "tool_result" and ev.tool in (
            "build_prepare",
            "schematic_import_prepare",
            "operation_undo_prepare",
        ):
            n = (ev.data or {}).get("changed_blocks")
            if isinstance(n, (int, float, str)) and str(n).isdigit():
                await self.stage(turn, f"plan:{n}", f"planned {int(n)} blocks")
            if ev.tool in PREPARE_TOOLS and ev.data:
                turn.prepared.append(ev.data)
        elif ev.kind == "tool_result" and ev.tool == "build_apply" and ev.data:
            op = ev.data.get("operation_id")
            if isinstance(op, str) and op and op not in turn.operations:
                turn.operations.append(op)  # its end is told even when no progress event was read in time
            if ev.data.get("plan_id"):
                plan_id = str(ev.data["plan_id"])
                turn.applied_plans.add(plan_id)
                await self.plans.clear(turn.player, plan_id)  # applied: the preview has done its job
        elif ev.kind == "permission_refused":
            await self.stage(
                turn, "permission", "the agent asked for an extra permission; the chat bridge refuses all such requests"
            )

    async def _offer_left_plan(self, turn: Turn) -> None:
        """The turn's last prepared plan, when the agent left it unapplied, becomes the player's
        pending plan (shown in game where the host can)."""
        for data in reversed(turn.prepared):
            plan = pending_from(turn.project, turn.player, data)
            if plan is None:
                continue
            if plan.plan_id not in turn.applied_plans:
                try:
                    await self.reply(turn.msg_id, turn.player, await self.plans.offer(plan))
                except Exception:  # noqa: BLE001 - the turn's answer must still be sent
                    log.exception("offering plan %s failed", plan.plan_id)
            return

    async def _watch_progress(self, turn: Turn) -> None:
        try:
            last = await self.redis.xrevrange(PROGRESS_STREAM, count=1)
            last_id = last[0][0] if last else "0-0"
        except Exception:  # noqa: BLE001 - progress is best-effort
            return
        pct_sent: dict[str, int] = {}
        while True:
            try:
                resp = await self.redis.xread({PROGRESS_STREAM: last_id}, block=500, count=100)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001
                await asyncio.sleep(1)
                continue
            for _stream, entries in resp or []:
                for entry_id, fields in entries:
                    last_id = entry_id
                    try:
                        ev = json.loads(fields.get("event", "{}"))
                    except ValueError:
                        continue
                    if ev.get("project_id") != turn.project:
                        continue
                    await self._progress_event(turn, ev, pct_sent)

    async def _progress_event(self, turn: Turn, ev: dict[str, Any], pct_sent: dict[str, int]) -> None:
        op, state = str(ev.get("operation_id", "")), ev.get("state")
        if op and op not in turn.operations:
            turn.operations.append(op)
        if state == "applying":
            total = int(ev.get("batches_total") or 0)
            pct = int(100 * int(ev.get("batches_done") or 0) / total) if total else 0
            bucket = pct // 25 * 25
            if bucket > pct_sent.get(op, -1) and pct < 100:
                pct_sent[op] = bucket
                await self.reply(turn.msg_id, turn.player, f"applying... {pct}%")
        elif state == "waiting_for_resume":
            await self.stage(
                turn,
                f"wait:{op}",
                "waiting: writes are paused; it runs when they resume "
                "(your next request or /ai resume), or `stop` cancels it",
            )
        else:
            await self._end_stage(
                turn, op, str(state), ev.get("written", 0), ev.get("already", 0), ev.get("conflicts", 0)
            )

    async def _end_stage(self, turn: Turn, op: str, state: str, written: Any, already: Any, conflicts: Any) -> None:
        """The one line that tells how an operation of the turn ended (once, whichever path saw it)."""
        if state == "applied":
            await self.stage(
                turn,
                f"end:{op}",
                f"done: {written or 0} blocks placed" + (f", {already} already in place" if already else ""),
            )
        elif state == "conflict":
            await self.stage(
                turn,
                f"end:{op}",
                f"stopped on a conflict: {conflicts or 0} block(s) changed under the plan and were not overwritten",
            )
        elif state in ("cancelled", "failed", "recovery_required"):
            await self.stage(turn, f"end:{op}", f"operation {state.replace('_', ' ')}")

    async def _tell_ended_operations(self, turn: Turn) -> None:
        """At a turn's end, the operations it started whose end no progress event told yet.

        The journal publishes an operation's progress event after it commits the state, so the
        agent can read ``applied`` from operation_status and end its turn before the event is
        in the stream (or before the watcher read it). The journal is asked instead; an operation
        still running is left to /ai status. Best effort: the turn's answer never waits long."""
        pending = [op for op in turn.operations[:20] if f"end:{op}" not in turn.stages]
        if not pending or turn.cancelled:
            return

        async def ask() -> None:
            for op in pending:
                try:
                    rep = await self.services.status(turn.project, turn.player, op)
                except McbError as exc:
                    log.info("operation %s: no state for the turn's end (%s)", op, exc.code)
                    continue
                await self._end_stage(turn, op, rep.state, rep.written, rep.already, rep.conflicts)

        try:
            await asyncio.wait_for(ask(), 5)
        except Exception as exc:  # noqa: BLE001 - the turn's answer must still be sent
            log.info("the turn's operations were not all told: %s", exc.__class__.__name__)

    async def _journal_states(self, project: str, player: str, ops: list[str]) -> dict[str, str]:
        """Each operation's state in the journal (agent token, the trusted project/player)."""
        from ..journal_client import JournalClient

        jc = JournalClient(self.cfg.journal_addr, self.cfg.agent_token, project, player)
        out: dict[str, str] = {}
        try:
            for op in ops:
                try:
                    rep = await jc.operation_status(op.split(" ", 1)[0])
                    out[op] = f"{rep.state}, {rep.written} written" if rep.state else "unknown"
                except McbError as exc:
                    out[op] = str(exc.code)
        finally:
            await jc.close()
        return out

    # --- commands -----------------------------------------------------------------------
    async def _world_range(self) -> tuple[int, int]:
        info = await self.host.world_info()
        return int(info.min_y), int(info.max_y)

    async def _world_uuid(self) -> str:
        return str((await self.host.world_info()).world_uuid)

    async def run_command(self, item: dict[str, Any], cmd: Command) -> None:
        """Every command but undo: answered at once, outside the project's queue."""
        player, project = item["player_id"], item["project_id"]
        try:
            if cmd.name == "stop":
                await self.on_own_stop(item)
                return
            if cmd.name == "resume":
                ok = await self.resume_writes(project, player, f"/ai resume by {player}")
                text = {
                    None: "writes are not paused",
                    True: "writes resumed",
                    False: "writes stay paused: only the project owner may resume them",
                }[ok]
            elif cmd.name == "status":
                text = await self.status_text(project, player)
            elif cmd.name == "rollback":  # offered as the player's pending plan: /ai apply is their consent
                text, plan = await self.commands.rollback(item, cmd)
                if plan is not None:
                    text += "\n" + await self.plans.offer(plan)
            elif cmd.name in ("apply", "reject", "preview"):
                text = await self.plan_command(item, cmd.name)
            else:
                handler = {
                    "project create": self.commands.project_create,
                    "project use": self.commands.project_use,
                    "area set": self.commands.area_set,
                    "protect": self.commands.protect,
                    "camera save": self.commands.camera_save,
                    "who": self.commands.who,
                }[cmd.name]
                text = await handler(item, cmd)
        except (ProjectError, McbError) as exc:
            await self.reply(item["id"], player, "", done=True, error=error_text(exc))
            return
        except Exception as exc:  # noqa: BLE001 - the player gets an answer either way
            log.exception("command %s failed", cmd.name)
            await self.reply(item["id"], player, "", done=True, error=f"the command failed ({exc.__class__.__name__})")
            return
        await self.reply(item["id"], player, text, done=True)

    async def plan_command(self, item: dict[str, Any], name: str) -> str:
        """`/ai apply`, `/ai reject`, and `/ai preview` where the host does not answer it itself."""
        player = item["player_id"]
        if name == "preview":
            return await self.plans.toggle(player)
        plan = self.plans.pending.get(player)
        if plan is None:
            return "no plan of yours is waiting: ask /ai for a build first"
        if name == "reject":
            await self.plans.clear(player, plan.plan_id)
            return f"plan {plan.plan_id} dropped; nothing was written"
        if item.get("seq", 0) > self.stop_seq.get(plan.project, 0):
            await self.resume_writes(plan.project, player, f"/ai apply by the owner {player}")
        try:
            return await self.commands.apply_plan(
                plan,
                f"chat-apply-{item['id']}",
                lambda line: self.reply(item["id"], player, line),
                started=lambda op: self._spawn(self.plans.clear(player, plan.plan_id)),
            )
        except McbError as exc:
            if PlanPreviews.gone(exc):
                await self.plans.clear(player, plan.plan_id)
            raise

    async def status_text(self, project: str, player: str) -> str:
        owner = self.projects.owner(project)
        try:
            paused = "paused" if await self.host.writes_paused() else "running"
        except McbError:
            paused = "unknown (the world host did not answer)"
        turn = self.active.get(project)
        running = (
            "nothing" if turn is None else ("your request" if turn.player == player else "another player's request")
        )
        waiting = await self.queue.length(project)
        text = (
            f"project {project} ({'yours' if owner == player else 'owner ' + str(owner or 'unknown')}); "
            f"writes {paused}; running: {running}; {waiting} waiting"
        )
        if owner == player:  # the ids `/ai undo <op>` takes
            try:
                recent = await self.services.recent_operations(project, player)
            except McbError as exc:
                return text + f"\nrecent operations: unknown ({exc.code})"
            text += "\nrecent operations: " + (
                ", ".join(f"{o.operation_id} {o.state.replace('_', ' ')} ({o.written} blocks)" for o in recent[:3])
                or "none"
            )
        return text

    async def run_undo(self, project: str, item: dict[str, Any]) -> None:
        """`/ai undo` as a turn of the project's queue (so it never runs beside a build)."""
        turn = Turn(item=item, project=project, player=item["player_id"], msg_id=item["id"], received=time.monotonic())
        self.active[project] = turn
        await self.queue.set_active(project, item)
        cmd = parse(item["text"]) or Command("undo")
        try:
            if item.get("seq", 0) > self.stop_seq.get(project, 0):
                await self.resume_writes(project, turn.player, f"/ai undo by the owner {turn.player}")
            text = await self.commands.undo(
                item,
                cmd,
                lambda line: self.reply(turn.msg_id, turn.player, line),
                cancelled=lambda: turn.cancelled,
                started=turn.operations.append,
            )
            await self.reply(turn.msg_id, turn.player, "stopped: " + text if turn.cancelled else text, done=True)
        except (ProjectError, McbError) as exc:
            await self.reply(turn.msg_id, turn.player, "", done=True, error=error_text(exc))
        except Exception as exc:  # noqa: BLE001
            log.exception("undo %s failed", turn.msg_id)
            await self.reply(
                turn.msg_id, turn.player, "", done=True, error=f"the undo failed ({exc.__class__.__name__})"
            )
        finally:
            self.active.pop(project, None)
            await self.queue.set_active(project, None)

    # --- stop ---------------------------------------------------------------------------
    async def _drop_queued(self, player: str, why: str) -> None:
        for project in list(self.kicks):
            for dropped in await self.queue.remove_player(project, player):
                await self.reply(dropped["id"], player, why, done=True)

    async def _cancel_turn(self, turn: Turn, *, journal: bool) -> bool:
        """Cancel a running turn; with `journal`, also its operations (writes stop without a pause)."""
        honoured = True
        if not turn.cancelled:
            turn.cancelled = True
            turn.cancel_at = time.monotonic()
            if turn.agent is not None and turn.session_id is not None:
                honoured = await turn.agent.cancel(turn.session_id)
        if journal:
            for op in list(turn.operations):
                try:
                    await self.services.cancel(turn.project, turn.player, op)
                except McbError as exc:
                    log.warning("cannot cancel %s: %s", op, exc.code)
        return honoured

    async def on_cancel(self, item: dict[str, Any]) -> None:
        """A stop by someone who may stop everything: the host paused writes; every running turn ends,
        with its operations (one waiting for writes to resume must not run when they do)."""
        player = item["player_id"]
        await self._drop_queued(player, "cancelled by /ai stop")
        honoured = True
        for turn in list(self.active.values()):
            honoured = await self._cancel_turn(turn, journal=True) and honoured
        await self.reply(
            item["id"],
            player,
            "stopped; writes stay paused until your next request or /ai resume"
            + ("" if honoured else " (the agent ignored the stop and was ended)"),
            done=True,
        )

    async def on_own_stop(self, item: dict[str, Any]) -> None:
        """`/ai stop` by a player who may stop only their own requests (Paper: without mcb.ai.stop)."""
        player = item["player_id"]
        await self._drop_queued(player, "cancelled by your /ai stop")
        mine = [t for t in self.active.values() if t.player == player]
        honoured = True
        for turn in mine:
            honoured = await self._cancel_turn(turn, journal=True) and honoured
        text = "stopped your request" if mine else "nothing of yours was running"
        await self.reply(
            item["id"], player, text + ("" if honoured else " (the agent ignored the stop and was ended)"), done=True
        )

    async def shutdown(self) -> None:
        self.stopping.set()
        for w in list(self.workers.values()) + list(self.tasks):
            w.cancel()
        for w in list(self.workers.values()) + list(self.tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await w
        for agent in list(self.agents.values()):
            with contextlib.suppress(Exception):
                await agent.close()
        self.agents.clear()


def fit_lines(text: str, max_lines: int = MAX_LINES) -> list[str]:
    """At most `max_lines` non-empty lines of at most MAX_LINE characters (what the host shows)."""
    lines = [" ".join(x.split()) for x in text.splitlines()]
    lines = [x for x in lines if x]
    if len(lines) > max_lines:
        lines = lines[: max_lines - 1] + [" ".join(lines[max_lines - 1 :])]
    return [x if len(x) <= MAX_LINE else x[: MAX_LINE - 1] + "\u2026" for x in lines]


def _slug(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", value)[:40] or "project"
