"""The chat loop against a small fake world host (the chat_poll/chat_reply contract), a real
Redis and a real ACP agent process (tests/scripted_acp_agent.py: the SDK, no model)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from harness import ROOT
from mcb.journal.v1 import journal_pb2
from mcb.world.v1 import world_pb2
from mcb_bridge.chat.agent import AgentEvent
from mcb_bridge.chat.config import ChatConfig, ChatConfigError
from mcb_bridge.chat.isolation import CONFIG_MARKER, write_codex_config
from mcb_bridge.chat.loop import ChatLoop, Turn
from mcb_bridge.chat.ratelimit import RateLimiter
from mcb_bridge.chat.sessions import SessionStore
from mcb_common.chatcommands import message_type
from mcb_common.errors import ErrorCode, McbError

SCRIPTED = ROOT / "tests" / "scripted_acp_agent.py"
ADMIN = "ADMIN-" + uuid.uuid4().hex
AGENT = "AGENT-" + uuid.uuid4().hex


class FakeHost:
    """The world host's chat side: an inbox of ChatMessages and every reply it was sent."""

    def __init__(self) -> None:
        self.inbox: list[world_pb2.ChatMessage] = []
        self.replies: list[tuple[float, world_pb2.ChatReplyParams]] = []
        self.polls: set[str] = set()
        self.paused = False
        self.resumes: list[str] = []

    async def writes_paused(self) -> bool:
        return self.paused

    async def resume(self, reason: str) -> None:
        self.paused = False
        self.resumes.append(reason)

    async def world_info(self) -> world_pb2.WorldInfo:
        return world_pb2.WorldInfo(min_y=-64, max_y=319, world_uuid="w-1", paused=self.paused)

    def say(self, player: str, text: str, project: str = "p1", type_: str | None = None, **extra) -> str:
        """A line as the host queues it: its type from the shared rule unless given."""
        mid = f"m-{uuid.uuid4().hex[:8]}"
        type_ = type_ or message_type(text)
        if type_ == "cancel":
            self.paused = True  # as the host does on /ai stop
        self.inbox.append(
            world_pb2.ChatMessage(
                id=mid,
                player_id=player,
                project_id=project,
                text=text,
                type=type_,
                at_millis=int(time.time() * 1000),
                **extra,
            )
        )
        return mid

    async def chat_poll(self, client_id: str, max_messages: int = 16) -> world_pb2.ChatPollResult:
        self.polls.add(client_id)
        out, self.inbox = self.inbox[:max_messages], self.inbox[max_messages:]
        return world_pb2.ChatPollResult(messages=out)

    async def chat_reply(self, p: world_pb2.ChatReplyParams) -> world_pb2.ChatReplyResult:
        assert len([x for x in p.text.split("\n") if x]) + (1 if p.error else 0) <= 4, "at most 4 lines per reply"
        assert all(len(x) <= 256 for x in p.text.split("\n"))
        self.replies.append(
            (time.monotonic(), world_pb2.ChatReplyParams(**{f.name: getattr(p, f.name) for f in p.DESCRIPTOR.fields}))
        )
        return world_pb2.ChatReplyResult(delivered=True)

    def texts(self, mid: str) -> list[str]:
        return [p.text + (f" [error: {p.error}]" if p.error else "") for _, p in self.replies if p.id == mid]

    def done(self, mid: str) -> bool:
        return any(p.done for _, p in self.replies if p.id == mid)

    def final(self, mid: str) -> str:
        return next(
            p.text + (f" [error: {p.error}]" if p.error else "") for _, p in self.replies if p.id == mid and p.done
        )


def make_cfg(tmp: Path, redis_url: str, *args: str, grace: float = 1.0, max_queued: int = 8, **kw) -> ChatConfig:
    return ChatConfig(
        world_url="http://fake-host.invalid",
        redis_url=redis_url,
        journal_addr="127.0.0.1:9",
        runtime_dir=tmp,
        state_dir=tmp / "chat",
        admin_token=ADMIN,
        agent_token=AGENT,
        acp_command=sys.executable,
        acp_args=(str(SCRIPTED), *args),
        cancel_grace_s=grace,
        max_queued=max_queued,
        poll_interval_s=0.02,
        mcp_command=(sys.executable, "-m", "mcb_bridge", "stdio"),
        owners={"p1": "alice", "p2": "carol"},
        **kw,
    )


async def wait_for(pred: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        await asyncio.sleep(0.02)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}")


def run_loop(
    cfg: ChatConfig,
    scenario: Callable[[ChatLoop, FakeHost], Awaitable[None]],
    host: FakeHost | None = None,
    services: object | None = None,
) -> FakeHost:
    host = host or FakeHost()

    async def main() -> None:
        r = aioredis.from_url(cfg.redis_url, decode_responses=True)
        await r.flushdb()
        loop = ChatLoop(cfg, host, r, services=services)
        task = asyncio.ensure_future(loop.run())
        try:
            await asyncio.wait_for(scenario(loop, host), 60)
        finally:
            loop.stopping.set()
            await asyncio.wait_for(task, 30)
            await r.aclose()

    asyncio.run(main())
    return host


def assert_rate(host: FakeHost, rate: int = 4) -> None:
    by_player: dict[str, list[float]] = {}
    for t, p in host.replies:
        n = len([x for x in p.text.split("\n") if x]) + (1 if p.error else 0)
        by_player.setdefault(p.player_id, []).extend([t] * n)
    for times in by_player.values():
        for i in range(rate, len(times)):
            assert times[i] - times[i - rate] >= 0.99, f"more than {rate} messages within a second"


# ------------------------------------------------------------------------------------------------


def test_turn_reaches_only_the_initiator_without_thoughts_or_history(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url)

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        mid = host.say(
            "alice",
            "hello there",
            position=world_pb2.PlayerPosition(x=1.5, y=65, z=-3, yaw=90),
            target_block=world_pb2.TargetBlock(x=2, y=64, z=-3, state="minecraft:grass_block"),
        )
        await wait_for(lambda: host.done(mid), 30, "the answer")
        assert host.final(mid) == "echo: hello there"
        assert loop.metrics["turn_overhead_ms"], "the bridge measures message in -> prompt sent"

    host = run_loop(cfg, scenario)
    assert {p.player_id for _, p in host.replies} == {"alice"}
    assert len(host.polls) == 1 and next(iter(host.polls)).startswith("mcb-bridge-")
    assert not any("secret thoughts" in p.text for _, p in host.replies)
    rec = SessionStore(cfg.state_dir).load("p1", "alice")
    assert rec.session_id and rec.unfinished is None and rec.last_result == "echo: hello there"
    path = SessionStore(cfg.state_dir).path("p1", "alice")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_agent_environment_is_an_allowlist_without_the_admin_token(
    tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "inherited-key-must-not-leak")
    monkeypatch.setenv("MCB_ADMIN_TOKEN", ADMIN)
    monkeypatch.setenv("MCB_SOMETHING_ELSE", "nope")
    cfg = make_cfg(tmp_path, redis_url, api_key="mcb-provided-key")

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        mid = host.say("alice", "hi")
        await wait_for(lambda: host.done(mid), 30, "the answer")

    run_loop(cfg, scenario)
    home = cfg.state_dir / "agent-home"
    env = json.loads((home / "env.json").read_text())
    assert ADMIN not in json.dumps(env)
    assert env["OPENAI_API_KEY"] == "mcb-provided-key" and env["CODEX_API_KEY"] == "mcb-provided-key"
    assert env["HOME"] == str(home) and env["CODEX_HOME"] == str(cfg.state_dir / "codex-home")
    assert not any(k.startswith("MCB_") for k in env), sorted(env)
    assert ".codex" not in env["CODEX_HOME"]
    mcp = json.loads(next(home.glob("mcp-*.json")).read_text())
    mcp_env = {e["name"]: e["value"] for e in mcp[0]["env"]}
    assert (
        mcp_env["MCB_AGENT_TOKEN"] == AGENT
        and mcp_env["MCB_PLAYER_ID"] == "alice"
        and mcp_env["MCB_PROJECT_ID"] == "p1"
    )
    assert ADMIN not in json.dumps(mcp)
    assert not any((cfg.state_dir / "agent-secrets").iterdir())
    config = (cfg.state_dir / "codex-home" / "config.toml").read_text()
    assert ADMIN not in config and AGENT not in config
    assert 'sandbox_mode = "read-only"' in config and "network_access = false" in config
    for path in cfg.state_dir.rglob("*"):
        if path.is_file() and path.suffix != ".log":
            assert ADMIN not in path.read_text(errors="replace"), path


def test_a_foreign_codex_config_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('model = "mine"\n')
    with pytest.raises(ChatConfigError):
        write_codex_config(tmp_path)
    assert (tmp_path / "config.toml").read_text() == 'model = "mine"\n'
    (tmp_path / "config.toml").unlink()
    assert write_codex_config(tmp_path).read_text().startswith(CONFIG_MARKER)


def test_queue_order_limit_and_busy(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url, max_queued=8)

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        slow = host.say("alice", "slow job")
        await wait_for(lambda: any("working" in t for t in host.texts(slow)) or "p1" in loop.active, 30, "turn start")
        await wait_for(lambda: loop.active.get("p1") is not None and loop.active["p1"].prompt_sent, 30, "prompt")
        queued = [host.say("bob", f"job {i}") for i in range(8)]
        busy = host.say("bob", "one too many")
        await wait_for(lambda: host.done(busy), 10, "the busy answer")
        assert host.final(busy).startswith("busy, try later")
        assert await loop.queue.length("p1") == 8
        assert host.texts(queued[0])[0].startswith("queued (#1)")
        stop = host.say("alice", "", type_="cancel")
        await wait_for(lambda: host.done(stop) and host.done(slow), 10, "the stop")
        assert host.final(slow).startswith("stopped")
        await wait_for(lambda: all(host.done(q) for q in queued), 40, "every queued turn")
        finals = [host.final(q) for q in queued]
        assert finals == [f"echo: job {i}" for i in range(8)]
        order = [next(i for i, (_, p) in enumerate(host.replies) if p.id == q and p.done) for q in queued]
        assert order == sorted(order), "queued turns ran in arrival order"

    host = run_loop(cfg, scenario)
    assert_rate(host)


def test_two_projects_run_independently(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url)

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        slow = host.say("alice", "slow build", project="p1")
        await wait_for(lambda: "p1" in loop.active and loop.active["p1"].prompt_sent, 30, "p1 turn")
        other = host.say("carol", "hello from p2", project="p2")
        await wait_for(lambda: host.done(other), 30, "the p2 answer")
        assert host.final(other) == "echo: hello from p2"
        assert not host.done(slow), "p1's turn is still running while p2 answered"
        assert len(loop.agents) == 2 and loop.agents["p1"] is not loop.agents["p2"]
        host.say("alice", "", project="p1", type_="cancel")
        await wait_for(lambda: host.done(slow), 10, "p1 stopped")

    run_loop(cfg, scenario)


def test_stop_cancels_the_turn_and_progress_comes_from_the_journal_stream(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url)

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        slow = host.say("alice", "slow build")
        await wait_for(lambda: "p1" in loop.active and loop.active["p1"].prompt_sent, 30, "turn")
        await asyncio.sleep(0.3)  # the progress watcher is reading the stream
        for done, state in ((0, "applying"), (2, "applying"), (4, "applied")):
            await loop.redis.xadd(
                "mcb:progress",
                {
                    "event": json.dumps(
                        {
                            "operation_id": "op_1",
                            "project_id": "p1",
                            "state": state,
                            "written": 40 if done == 4 else 0,
                            "already": 0,
                            "conflicts": 0,
                            "batches_done": done,
                            "batches_total": 4,
                        }
                    )
                },
            )
        await loop.redis.xadd(
            "mcb:progress",
            {"event": json.dumps({"operation_id": "op_x", "project_id": "p2", "state": "applied", "written": 9})},
        )
        await wait_for(lambda: any(t.startswith("done: 40 blocks") for t in host.texts(slow)), 10, "done stage")
        t0 = time.monotonic()
        stop = host.say("alice", "", type_="cancel")
        await wait_for(lambda: host.done(slow) and host.done(stop), 10, "stop")
        assert time.monotonic() - t0 < 3
        assert host.final(slow) == "stopped"
        assert "writes stay paused" in host.final(stop)
        assert loop.metrics["stop_latency_ms"] and loop.metrics["stop_latency_ms"][0] < 3000
        texts = host.texts(slow)
        assert "applying... 0%" in texts and "applying... 50%" in texts
        assert not any("9 blocks" in t for t in texts), "another project's progress is not shown"
        assert SessionStore(cfg.state_dir).load("p1", "alice").operations == ["op_1"]

    run_loop(cfg, scenario)


def test_an_operation_that_ended_before_its_progress_event_was_read_is_told_from_the_journal(
    tmp_path: Path, redis_url: str
) -> None:
    """The journal commits an operation's state before it publishes the progress event, so the agent
    can see ``applied`` (operation_status) and end its turn before the event is read (CI, 2026-12-03:
    no "done:" line). The turn's end asks the journal for what no event told; once per operation."""
    cfg = make_cfg(tmp_path, redis_url)

    class Journal:
        def __init__(self) -> None:
            self.asked: list[str] = []
            self.states = {"op_a": ("applied", 42, 3), "op_b": ("applying", 5, 0), "op_c": ("conflict", 1, 0)}

        async def status(self, project: str, player: str, op: str) -> journal_pb2.OperationReport:
            self.asked.append(op)
            if op == "op_gone":
                raise McbError(ErrorCode.NOT_FOUND, "no such operation")
            state, written, already = self.states[op]
            return journal_pb2.OperationReport(
                operation_id=op, state=state, written=written, already=already, conflicts=2 if op == "op_c" else 0
            )

    journal = Journal()

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        turn = Turn(item={"text": "x"}, project="p1", player="alice", msg_id="m-1", received=time.monotonic())
        for op in ("op_a", "op_b", "op_c", "op_gone", "op_told"):
            await loop._on_event(turn, AgentEvent("tool_result", tool="build_apply", data={"operation_id": op}))
        # op_told's end came as a progress event; it is not told again, nor asked for
        await loop._progress_event(turn, {"operation_id": "op_told", "state": "applied", "written": 9}, {})
        await loop._tell_ended_operations(turn)
        await loop._tell_ended_operations(turn)  # a second look tells nothing twice
        assert host.texts("m-1") == [
            "done: 9 blocks placed",
            "done: 42 blocks placed, 3 already in place",
            "stopped on a conflict: 2 block(s) changed under the plan and were not overwritten",
        ]
        assert journal.asked == ["op_a", "op_b", "op_c", "op_gone", "op_b", "op_gone"]
        assert turn.operations == ["op_a", "op_b", "op_c", "op_gone", "op_told"]

    run_loop(cfg, scenario, services=journal)


def test_an_agent_that_ignores_cancel_is_killed_after_5_s(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url, grace=5.0)

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        mid = host.say("alice", "ignore-cancel please")
        await wait_for(lambda: "p1" in loop.active and loop.active["p1"].prompt_sent, 30, "turn")
        agent = loop.agents["p1"]
        t0 = time.monotonic()
        stop = host.say("alice", "", type_="cancel")
        await wait_for(lambda: host.done(mid) and host.done(stop), 25, "the kill")
        elapsed = time.monotonic() - t0
        assert 5.0 <= elapsed < 15, elapsed  # 5 s grace, then the kill (generous: 2 shared cores)
        assert agent.killed
        # SIGKILL is sent before the turn ends; asyncio reaps the process a moment later (under
        # load it was not yet collected when the stop was answered)
        await wait_for(lambda: agent.proc.returncode is not None, 10, "the killed agent reaped")
        assert "ended" in host.final(mid) and "ended" in host.final(stop)
        again = host.say("alice", "are you back")
        await wait_for(lambda: host.done(again), 30, "a fresh agent")
        assert host.final(again) == "echo: are you back"
        assert loop.agents["p1"] is not agent

    run_loop(cfg, scenario)


def test_session_is_loaded_after_restart_without_replaying_history(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url)
    first: dict[str, str] = {}

    async def one(loop: ChatLoop, host: FakeHost) -> None:
        mid = host.say("alice", "remember the first thing")
        await wait_for(lambda: host.done(mid), 30, "first")
        first["sid"] = SessionStore(cfg.state_dir).load("p1", "alice").session_id

    async def two(loop: ChatLoop, host: FakeHost) -> None:
        mid = host.say("alice", "second")
        await wait_for(lambda: host.done(mid), 30, "second")
        texts = host.texts(mid)
        assert texts == ["echo: second"], texts  # no replay, no "could not restore"

    run_loop(cfg, one)
    run_loop(cfg, two)
    assert SessionStore(cfg.state_dir).load("p1", "alice").session_id == first["sid"]


def test_failed_load_starts_a_new_session_from_the_summary_and_says_so(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url)

    async def one(loop: ChatLoop, host: FakeHost) -> None:
        mid = host.say("alice", "first request")
        await wait_for(lambda: host.done(mid), 30, "first")

    run_loop(cfg, one)
    old = SessionStore(cfg.state_dir).load("p1", "alice").session_id
    cfg2 = make_cfg(tmp_path, redis_url, "--no-load")

    async def two(loop: ChatLoop, host: FakeHost) -> None:
        mid = host.say("alice", "second")
        await wait_for(lambda: host.done(mid), 30, "second")
        texts = host.texts(mid)
        assert any("could not restore" in t for t in texts), texts
        assert host.final(mid) == "echo: second summary-seen"

    run_loop(cfg2, two)
    assert SessionStore(cfg.state_dir).load("p1", "alice").session_id != old


def test_an_interrupted_turn_is_flagged_on_the_next_one(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url)
    store = SessionStore(cfg.state_dir)
    rec = store.load("p1", "alice")
    rec.unfinished = {"message_id": "old", "task": "build a wall", "started_ms": 1}
    rec.operations = ["op_old"]
    store.save("p1", "alice", rec)

    asked: list[list[str]] = []

    async def checker(project: str, player: str, ops: list[str]) -> dict[str, str]:
        asked.append(ops)
        return {"op_old": "applied, 12 written"}

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        loop.op_checker = checker
        mid = host.say("alice", "next")
        await wait_for(lambda: host.done(mid), 30, "answer")
        assert any(
            "previous request was interrupted" in t and "op_old (applied, 12 written)" in t for t in host.texts(mid)
        ), host.texts(mid)

    run_loop(cfg, scenario)
    assert asked == [["op_old"]]
    assert store.load("p1", "alice").unfinished is None


def test_permission_requests_are_refused_with_a_message(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url)

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        mid = host.say("alice", "permission please")
        await wait_for(lambda: host.done(mid), 30, "answer")
        texts = host.texts(mid)
        assert any("refuses" in t for t in texts), texts
        assert (
            "'option_id': 'reject'" in host.final(mid)
            or '"option_id": "reject"' in host.final(mid)
            or "reject" in host.final(mid)
        )
        assert "allow" not in host.final(mid).split("option_id")[-1]
        assert "rm -rf" not in " ".join(texts), "tool arguments never reach chat"

    run_loop(cfg, scenario)


def test_rate_limiter_allows_4_per_second_per_player() -> None:
    async def main() -> tuple[float, float]:
        rl = RateLimiter(4, 1.0)
        t0 = time.monotonic()
        for _ in range(9):
            await rl.acquire("alice")
        a = time.monotonic() - t0
        t1 = time.monotonic()
        for _ in range(4):
            await rl.acquire("bob")
        return a, time.monotonic() - t1

    alice, bob = asyncio.run(main())
    assert 1.95 <= alice < 3.0
    assert bob < 0.1


def test_missing_agent_is_reported_in_chat(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url)
    cfg = ChatConfig(**{**cfg.__dict__, "acp_command": None, "acp_args": ()})
    os.environ.get("PATH")

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        from mcb_bridge.chat import config as cfgmod

        original = cfgmod.pinned_codex_acp
        cfgmod.pinned_codex_acp = lambda: {**original(), "binary": None}
        try:
            mid = host.say("alice", "hi")
            await wait_for(lambda: host.done(mid), 30, "answer")
            assert "not configured" in host.final(mid)
        finally:
            cfgmod.pinned_codex_acp = original

    run_loop(cfg, scenario)


def test_writes_stay_paused_until_the_owners_next_request_or_resume(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url)

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        stop = host.say("alice", "", type_="cancel")
        await wait_for(lambda: host.done(stop), 10, "stop")
        assert host.paused
        other = host.say("bob", "resume")
        await wait_for(lambda: host.done(other), 10, "bob's resume")
        assert host.paused and "only the project owner" in host.final(other)
        bobs = host.say("bob", "build something")
        await wait_for(lambda: host.done(bobs), 30, "bob's turn")
        assert host.paused and any("writes are paused" in t for t in host.texts(bobs))
        owner = host.say("alice", "resume")
        await wait_for(lambda: host.done(owner), 10, "alice's resume")
        assert not host.paused and host.final(owner) == "writes resumed"
        host.paused = True
        nxt = host.say("alice", "go on")
        await wait_for(lambda: host.done(nxt), 30, "alice's turn")
        assert not host.paused, "the owner's next request resumes writes"

    run_loop(cfg, scenario)


def test_long_answers_fit_the_hosts_line_limits() -> None:
    from mcb_bridge.chat.loop import fit_lines

    lines = fit_lines("a\n\nb\nc\nd\ne " + "x" * 600)
    assert len(lines) == 4 and all(len(x) <= 256 for x in lines) and lines[:3] == ["a", "b", "c"]


def test_mcb_model_is_applied_through_the_agents_model_selector(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url, model="scripted-large")

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        mid = host.say("alice", "hi")
        await wait_for(lambda: host.done(mid), 30, "answer")

    run_loop(cfg, scenario)
    chosen = json.loads((cfg.state_dir / "agent-home" / "config-options.json").read_text())
    assert chosen["config_id"] == "model" and chosen["value"] == "scripted-large"


def test_a_request_sent_before_the_stop_does_not_resume_writes(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url)

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        # no poll loop here: both lines are handled back to back, as when one poll returns both
        first = host.say("alice", "slow job")
        stop = host.say("alice", "", type_="cancel")
        for m in [host.inbox.pop(0), host.inbox.pop(0)]:
            await loop.handle(m)
        await wait_for(lambda: host.done(first) and host.done(stop), 10, "both answered")
        assert host.paused and host.resumes == []

    host = FakeHost()

    async def main() -> None:
        r = aioredis.from_url(cfg.redis_url, decode_responses=True)
        await r.flushdb()
        loop = ChatLoop(cfg, host, r)
        await loop.start()
        try:
            await asyncio.wait_for(scenario(loop, host), 60)
        finally:
            await loop.shutdown()
            await r.aclose()

    asyncio.run(main())


def test_a_bridge_stopping_mid_turn_leaves_the_turn_flagged(tmp_path: Path, redis_url: str) -> None:
    cfg = make_cfg(tmp_path, redis_url)

    async def scenario(loop: ChatLoop, host: FakeHost) -> None:
        mid = host.say("alice", "slow build")
        await wait_for(lambda: "p1" in loop.active and loop.active["p1"].prompt_sent, 30, "turn")
        loop.stopping.set()
        await wait_for(lambda: host.done(mid), 15, "the shutdown notice")
        assert "chat bridge stopped" in host.final(mid)

    run_loop(cfg, scenario)
    rec = SessionStore(cfg.state_dir).load("p1", "alice")
    assert rec.unfinished and rec.unfinished["task"] == "slow build"


def test_no_agent_survives_a_bridge_killed_with_sigkill(tmp_path: Path) -> None:
    import signal
    import subprocess

    script = tmp_path / "bridge.py"
    script.write_text(f"""
import asyncio, sys
from pathlib import Path
sys.path[:0] = {[str(Path(__file__).parent), str(ROOT / "tests")]!r}
import test_chat as T
from mcb_bridge.chat.agent import AgentProcess
async def main():
    a = AgentProcess(T.make_cfg(Path({str(tmp_path)!r}), "redis://127.0.0.1:9/0", "--linger"), "p1")
    await a.start()
    print(a.proc.pid, flush=True)
    await asyncio.sleep(60)
asyncio.run(main())
""")
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        agent_pid = int(p.stdout.readline())
        os.kill(p.pid, signal.SIGKILL)
        p.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(agent_pid, 0)
            except ProcessLookupError:
                return
            with open(f"/proc/{agent_pid}/stat") as f:
                if f.read().split()[2] == "Z":
                    return
            time.sleep(0.1)
        raise AssertionError("the agent process outlived the bridge")
    finally:
        if p.poll() is None:
            p.kill()


def test_an_agent_that_dies_at_start_is_reported_with_how_it_ended(tmp_path: Path) -> None:
    """An agent that exits before answering `initialize` fails the start at once (not after the
    60 s timeout), saying how it ended; a missing command is a configuration error."""
    from dataclasses import replace

    from mcb_bridge.chat.agent import AgentDied, AgentProcess
    from mcb_bridge.chat.config import ChatConfigError

    async def main() -> None:
        cfg = make_cfg(tmp_path, "redis://127.0.0.1:9/0")
        dying = AgentProcess(replace(cfg, acp_args=("-c", "import sys; sys.exit(3)")), "p1")
        start = time.monotonic()
        with pytest.raises(AgentDied, match="exited with code 3 during initialize"):
            await dying.start()
        assert time.monotonic() - start < 30
        await dying.close()
        missing = AgentProcess(replace(cfg, acp_command="no-such-acp-agent-xyz"), "p1")
        with pytest.raises(ChatConfigError, match="'no-such-acp-agent-xyz' is not on the agent's PATH"):
            await missing.start()

    asyncio.run(main())
