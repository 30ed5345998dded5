"""The embedded host's chat queue with a fake clock (the Java core's ChatQueueTest checks the same rules)."""

from __future__ import annotations

import pytest
from mcb_common.errors import ErrorCode, McbError
from mcb_world_host.chat import ChatQueue


@pytest.fixture
def env():
    state = {"now": 1_000, "cancels": 0, "takeovers": []}

    def cancel(_m):
        state["cancels"] += 1

    q = ChatQueue("castle", on_cancel=cancel, on_takeover=state["takeovers"].append, clock=lambda: state["now"])
    return q, state


def code(fn) -> ErrorCode:
    with pytest.raises(McbError) as e:
        fn()
    return e.value.code


def test_fifo_leases_without_expiry_and_initiator_only(env):
    q, st = env
    a = q.submit("alice", "build a tower", {"x": 1.5})
    b = q.submit("bob", "add windows")
    assert a.project_id == "castle" and a.type == "prompt" and a.position == {"x": 1.5}
    assert q.poll("bridge-1", 1) == ([a], False)
    assert code(lambda: q.reply("bridge-x", a.id, "alice", "hi", True, "")) == ErrorCode.PERMISSION_DENIED
    assert code(lambda: q.reply("bridge-1", a.id, "bob", "hi", True, "")) == ErrorCode.PERMISSION_DENIED
    assert code(lambda: q.reply("bridge-1", b.id, "bob", "hi", True, "")) == ErrorCode.NOT_FOUND
    st["now"] += 3_600_000  # no expiry
    assert q.poll("bridge-1", 10) == ([b], False)
    assert q.reply("bridge-1", a.id, "alice", "working", False, "") is True
    assert q.reply("bridge-1", a.id, "alice", "", True, "conflict\n at  1,2,3") is True
    assert q.lines_for("alice") == ["working", "[ai] error: conflict at 1,2,3"]
    assert q.reply("bridge-1", b.id, "bob", "", True, "") is False
    assert not q.leased and st["takeovers"] == []


def test_cancel_words_and_takeover(env):
    q, st = env
    assert q.submit("alice", " /AI Stop ").type == "cancel" and q.submit("a", "cancel").type == "cancel"
    assert q.submit("a", "stop the tower").type == "prompt" and st["cancels"] == 2
    msgs, _ = q.poll("bridge-1", 1)
    assert msgs[0].text == "/AI Stop"
    msgs, took = q.poll("bridge-2", 10)
    assert took is True and st["takeovers"] == ["bridge-2"] and len(msgs) == 2
    (notice,) = q.lines_for("alice")
    assert notice.startswith("[ai] ") and "bridge restarted" in notice


def test_caps_and_rate_limit(env):
    q, st = env
    m = q.submit("carol", "go")
    q.poll("b", 1)
    q.reply("b", m.id, "carol", "x" * 300 + "\r\n\u00a7cred\x07 text\n\n", False, "")
    first, second = q.lines_for("carol")
    assert len(first) == 256 and first.endswith("…") and second == "cred text"
    assert code(lambda: q.reply("b", m.id, "carol", "1\n2\n3\n4\n5", False, "")) == ErrorCode.BUDGET_EXCEEDED
    q.reply("b", m.id, "carol", "3\n4", False, "")
    st["now"] += 400
    with pytest.raises(McbError) as e:
        q.reply("b", m.id, "carol", "5", True, "")
    assert e.value.code == ErrorCode.BUSY and e.value.details == {"retryAfterMillis": 600}
    assert len(q.lines_for("carol")) == 4 and m.id in q.leased
    st["now"] += 600
    assert q.reply("b", m.id, "carol", "5", True, "") is True and not q.leased
