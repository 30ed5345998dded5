"""batch_apply_many and batch_cancel on the embedded host (docs/world-protocol.md): batches taken
in order, each as batch_apply takes one; stops at a conflict, an error, a pause or a cancel that
lands between two batches; one log commit (fsync) for the whole request; and a kill -9 during a
request leaves every answered batch whole and none half-written."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mcb.world.v1 import world_pb2
from mcb_common.errors import McbError
from mcb_world_host.host import MAX_CANCELLED_OPERATIONS, Host
from mcb_world_host.world import World

REPO = Path(__file__).resolve().parents[3]
AIR, STONE, GLASS = "minecraft:air", "minecraft:stone", "minecraft:glass"


@pytest.fixture
def world(tmp_path, registry):
    w = World.create_flat(tmp_path / "w", registry, pregen=(-16, -16, 15, 15))
    yield w
    w.close()


def batch(bid: str, y: int, desired: str = STONE, expected: str = AIR, op: str = "op", epoch: int = 1, n: int = 8):
    """A batch writing row ``y`` (x -4..n-5, z 0)."""
    return world_pb2.BatchApplyParams(
        batch_id=bid,
        world_epoch=epoch,
        operation_id=op,
        entries=[world_pb2.BatchEntry(x=x, y=y, z=0, expected=expected, desired=desired) for x in range(-4, n - 4)],
    )


def row(w: World, y: int, n: int = 8) -> set[str]:
    return set(w.get_blocks([(x, y, 0) for x in range(-4, n - 4)]))


def many(host: Host, *batches) -> list[world_pb2.BatchAnswer]:
    return list(host.batch_apply_many(world_pb2.BatchApplyManyParams(batches=batches)).answers)


def kinds(answers) -> list[str]:
    return [
        a.result.status
        if a.outcome == "answered"
        else a.reason
        if a.outcome == "not_started"
        else "error:" + a.error.code
        for a in answers
    ]


def test_batches_are_taken_in_order_each_whole(world):
    host = Host(world)
    answers = many(host, *(batch(f"o{i}", 70 + i) for i in range(5)))
    assert [a.batch_id for a in answers] == [f"o{i}" for i in range(5)]
    assert kinds(answers) == ["applied"] * 5
    assert all(a.result.written == 8 and not a.result.replayed for a in answers)
    stamps = [a.result.applied_at_millis for a in answers]
    assert stamps == sorted(stamps)
    for i in range(5):
        assert row(world, 70 + i) == {STONE}
        assert world.host_state.get(f"o{i}").state == "complete"  # each its own idempotency record
    # a later batch sees the earlier one's writes: it expects STONE where batch 1 wrote it
    answers = many(host, batch("s1", 80), batch("s2", 80, desired=GLASS, expected=STONE))
    assert kinds(answers) == ["applied", "applied"] and row(world, 80) == {GLASS}


def test_a_conflict_ends_the_request(world):
    host = Host(world)
    many(host, batch("pre", 71))  # row 71 is STONE now: the next request's batch 2 conflicts
    answers = many(host, batch("c1", 70), batch("c2", 71, desired=GLASS), batch("c3", 72), batch("c4", 73))
    assert kinds(answers) == ["applied", "conflict", "after_conflict", "after_conflict"]
    assert answers[1].result.conflicts == 8 and answers[1].result.written == 0
    assert row(world, 70) == {STONE} and row(world, 71) == {STONE}
    assert row(world, 72) == {AIR} and row(world, 73) == {AIR}  # not read, not written
    assert world.host_state.get("c2").result["status"] == "conflict"  # the conflict is answered (replayable)
    assert world.host_state.get("c3") is None and world.host_state.get("c4") is None


def test_an_error_is_batch_apply_s_refusal_and_ends_the_request(world):
    host = Host(world)
    bad = batch("e2", 71, desired="minecraft:no_such_block")
    with pytest.raises(McbError) as alone:
        host.batch_apply(bad)  # what batch_apply refuses this batch with
    answers = many(host, batch("e1", 70), bad, batch("e3", 72))
    assert kinds(answers) == ["applied", "error:unsupported_block", "after_error"]
    err = answers[1].error
    want = alone.value.to_dict()
    assert (err.code, err.message, err.retryable) == (want["code"], want["message"], want["retryable"])
    assert json.loads(err.details_json or "{}") == want.get("details", {})
    assert not answers[1].HasField("result")
    assert row(world, 71) == {AIR} and row(world, 72) == {AIR} and row(world, 70) == {STONE}
    # a stale epoch, and a batch without entries (refused before reading): the same
    answers = many(host, batch("e4", 73, epoch=7), batch("e5", 74))
    assert kinds(answers) == ["error:stale_snapshot", "after_error"] and answers[0].error.retryable is False
    assert json.loads(answers[0].error.details_json) == {"worldEpoch": 1}
    empty = world_pb2.BatchApplyParams(batch_id="e6", world_epoch=1)
    assert kinds(many(host, batch("e7", 75), empty, batch("e8", 76))) == [
        "applied",
        "error:invalid_request",
        "after_error",
    ]


def test_replays_inside_a_request(world):
    host = Host(world)
    first = many(host, batch("r1", 70), batch("r2", 71))
    again = many(host, batch("r1", 70), batch("r2", 71), batch("r3", 72))
    assert kinds(again) == ["applied"] * 3
    assert [a.result.replayed for a in again] == [True, True, False]
    assert again[0].result.written == first[0].result.written == 8
    # a known id with other content: batch_apply's invalid_request, and the request ends there
    reused = many(host, batch("r4", 73), batch("r1", 70, desired=GLASS), batch("r5", 74))
    assert kinds(reused) == ["applied", "error:invalid_request", "after_error"]
    assert row(world, 70) == {STONE} and row(world, 74) == {AIR}


def test_request_level_refusals_read_and_write_nothing(world):
    host = Host(world)
    commits = world.host_state.commits
    for params, code in (
        ([], "invalid_request"),
        ([batch(f"x{i}", 70 + i) for i in range(17)], "budget_exceeded"),
        ([batch("d1", 70), batch("d2", 71), batch("d1", 72)], "invalid_request"),
    ):
        with pytest.raises(McbError) as e:
            many(host, *params)
        assert str(e.value.code) == code
    assert row(world, 70) == {AIR} and world.host_state.get("d1") is None
    assert world.host_state.commits == commits
    assert len(many(host, *(batch(f"ok{i}", 70 + i) for i in range(16)))) == 16  # 16 is allowed


def test_paused_before_the_request(world):
    """The first batch is refused as batch_apply refuses it (``paused``, retryable); the rest are
    not started. A replayed first batch is still answered (batch_apply replays while paused)."""
    host = Host(world)
    many(host, batch("p0", 69))
    host.pause(world_pb2.PauseParams(reason="owner"))
    answers = many(host, batch("p1", 70), batch("p2", 71))
    assert kinds(answers) == ["error:paused", "after_error"] and answers[0].error.retryable
    answers = many(host, batch("p0", 69), batch("p3", 72))
    assert kinds(answers) == ["applied", "paused"] and answers[0].result.replayed
    assert row(world, 70) == row(world, 72) == {AIR}


def _slow_apply(world: World, delay: float):
    """Wrap ``world.apply`` (called under the world lock, once per written batch) to take
    ``delay`` and record (start, end) times, so a pause can arrive while a batch is taken."""
    spans: list[tuple[float, float]] = []
    started = threading.Event()
    inner = world.apply

    def apply(changes):
        t0 = time.monotonic()
        started.set()
        time.sleep(delay)
        out = inner(changes)
        spans.append((t0, time.monotonic()))
        return out

    world.apply = apply  # type: ignore[method-assign]
    return spans, started


@pytest.mark.parametrize("how", ["pause", "cancel"])
def test_a_pause_or_cancel_from_another_thread_lands_between_batches(world, how):
    host = Host(world)
    spans, started = _slow_apply(world, 0.05)
    out: list = []
    t = threading.Thread(target=lambda: out.append(many(host, *(batch(f"t{i}", 70 + i) for i in range(16)))))
    t.start()
    assert started.wait(10)
    time.sleep(0.08)  # one or two batches in
    if how == "pause":
        host.pause(world_pb2.PauseParams(reason="stop"))
    else:
        host.batch_cancel(world_pb2.BatchCancelParams(operation_id="op"))
    answered = time.monotonic()
    t.join(30)
    answers = out[0]
    done = [a for a in answers if a.outcome == "answered"]
    reason = "paused" if how == "pause" else "cancelled"
    assert 1 <= len(done) < 16, kinds(answers)
    assert kinds(answers) == ["applied"] * len(done) + [reason] * (16 - len(done))
    assert len(spans) == len(done)
    assert all(start < answered for start, _ in spans)  # no batch started after the answer
    assert spans[-1][1] <= answered  # it answered once the batch in progress had finished
    for i in range(16):
        assert row(world, 70 + i) == ({STONE} if i < len(done) else {AIR})


def test_cancel_names_operations_not_batches(world):
    host = Host(world)
    with pytest.raises(McbError) as e:
        host.batch_cancel(world_pb2.BatchCancelParams())
    assert str(e.value.code) == "invalid_request"
    res = host.batch_cancel(world_pb2.BatchCancelParams(operation_id="gone"))
    assert res.operation_id == "gone" and res.cancelled
    answers = many(host, batch("k1", 70, op="kept"), batch("k2", 71, op="gone"), batch("k3", 72, op="kept"))
    assert kinds(answers) == ["applied", "cancelled", "cancelled"]  # a batch not started ends the request
    assert kinds(many(host, batch("k4", 73, op="gone"))) == ["cancelled"]  # the first batch too
    assert host.batch_apply(batch("k5", 74, op="gone")).status == "applied"  # batch_apply: not affected
    # the last 4,096 operations are remembered: one more forgets the oldest
    for i in range(MAX_CANCELLED_OPERATIONS):
        host.batch_cancel(world_pb2.BatchCancelParams(operation_id=f"later-{i}"))
    assert kinds(many(host, batch("k6", 75, op="gone"))) == ["applied"]
    assert kinds(many(host, batch("k7", 76, op="later-0"))) == ["cancelled"]


def test_a_16_batch_request_costs_one_log_commit(world):
    """Versus 16 batch_apply calls (16 commits): the request's records go into one commit. The
    log's fsync is made to take 20 ms (a slow disk) so the difference shows in time too."""
    host = Host(world)
    world.host_state.crash_hook = lambda point: time.sleep(0.02) if point == "log_append" else None
    before = world.host_state.commits
    t0 = time.monotonic()
    for i in range(16):
        assert host.batch_apply(batch(f"one{i}", 70 + i, n=16)).status == "applied"
    singles = time.monotonic() - t0
    assert world.host_state.commits - before == 16
    before = world.host_state.commits
    t0 = time.monotonic()
    answers = many(host, *(batch(f"many{i}", 90 + i, n=16) for i in range(16)))
    together = time.monotonic() - t0
    assert kinds(answers) == ["applied"] * 16
    assert world.host_state.commits - before == 1
    print(f"16 batches: {singles * 1000:.0f} ms as batch_apply calls, {together * 1000:.0f} ms as one request")
    # every answered batch of the request is in the log (committed): a restart keeps them
    assert all(world.host_state.get(f"many{i}").state == "complete" for i in range(16))


def test_a_log_failure_answers_every_batch_of_its_commit_as_an_error(world):
    """Disk full during the request's commit: each batch answered in memory is undone and
    answered with batch_apply's disk_full refusal; the world is as before the request."""
    host = Host(world)
    many(host, batch("f0", 69))

    def full(point: str) -> None:
        if point == "log_append":
            raise OSError(errno.ENOSPC, "No space left on device")

    world.host_state.crash_hook = full
    answers = many(host, batch("f1", 70), batch("f2", 71), batch("f0", 69))
    assert [a.outcome for a in answers] == ["error", "error", "answered"]
    assert answers[0].error.code == answers[1].error.code
    assert json.loads(answers[0].error.details_json)["reason"] == "disk_full"
    assert answers[2].result.replayed
    assert row(world, 70) == {AIR} and row(world, 71) == {AIR} and row(world, 69) == {STONE}
    world.host_state.crash_hook = None
    assert kinds(many(host, batch("f1", 70), batch("f2", 71))) == ["applied", "applied"]  # retry: not replayed


@pytest.mark.parametrize("replay_with", ["batch_apply", "batch_apply_many"])
def test_a_replay_of_an_answer_on_its_way_to_the_log_waits_for_its_commit(world, replay_with):
    """A batch is applied in memory and its row queued; while its commit (made to take 0.3 s) runs,
    the same batch is sent again: the replayed answer comes only once that commit is fsynced
    (a replay is never answered before the first answer could be)."""
    host = Host(world)
    committing = threading.Event()

    def slow(point: str) -> None:
        if point == "log_append":
            committing.set()
            time.sleep(0.3)

    world.host_state.crash_hook = slow
    first = threading.Thread(target=lambda: host.batch_apply(batch("w1", 70)))
    first.start()
    assert committing.wait(10)
    before = world.host_state.commits
    if replay_with == "batch_apply":
        res = host.batch_apply(batch("w1", 70))
    else:
        (answer,) = many(host, batch("w1", 70))
        res = answer.result
    assert res.replayed and res.status == "applied"
    assert world.host_state.commits == before + 1  # answered after the first one's commit
    first.join(10)


# A child process: request A (4 batches) answered and printed; then request B (4 batches) killed
# (SIGKILL) either inside its one log commit or while its third batch is being taken in memory.
CHILD = r"""
import os, signal, sys
from pathlib import Path
from mcb.world.v1 import world_pb2
from mcb_common.registry import Registry
from mcb_world_host.host import Host
from mcb_world_host.world import World

path, point = Path(sys.argv[1]), sys.argv[2]
w = World(path, Registry.load())
host = Host(w)

def req(name, y0, desired):
    return world_pb2.BatchApplyManyParams(batches=[
        world_pb2.BatchApplyParams(batch_id=f"{name}{n}", world_epoch=w.meta.epoch, operation_id=name,
            entries=[world_pb2.BatchEntry(x=x, y=y0 + n, z=z, expected="minecraft:air", desired=desired)
                     for x in range(-12, 12) for z in range(-3, 3)])
        for n in range(4)])

for a in host.batch_apply_many(req("A", 70, "minecraft:stone")).answers:
    assert a.result.status == "applied"
    print(f"ack {a.batch_id}", flush=True)
kill = lambda p: os.kill(os.getpid(), signal.SIGKILL)
if point == "commit":
    w.host_state.crash_hook = lambda p: kill(p) if p == "log_append" else None
else:
    inner, calls = w.apply, []
    def apply(changes):
        calls.append(1)
        if len(calls) == 3:
            inner(changes[: len(changes) // 2])  # half of the third batch in memory
            kill("apply")
        return inner(changes)
    w.apply = apply
for a in host.batch_apply_many(req("B", 80, "minecraft:glass")).answers:
    print(f"ack {a.batch_id}", flush=True)
"""


@pytest.mark.parametrize("point", ["commit", "taking"])
def test_kill9_during_a_request_keeps_answered_batches_whole_and_none_half(tmp_path, registry, point):
    w = World.create_flat(tmp_path / "w", registry, pregen=(-16, -16, 15, 15))
    w.close()
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "w"), point],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert out.returncode == -9, f"not killed at {point}: rc {out.returncode}\n{out.stderr[-3000:]}"
    words = out.stdout.split()
    acked = [words[i + 1] for i, x in enumerate(words) if x == "ack"]
    assert acked == ["A0", "A1", "A2", "A3"]  # request B was never answered
    w = World(tmp_path / "w", registry)
    try:
        for n in range(4):
            pos = [(x, 70 + n, z) for x in range(-12, 12) for z in range(-3, 3)]
            assert set(w.get_blocks(pos)) == {STONE}, n  # every answered batch whole
        for n in range(4):
            pos = [(x, 80 + n, z) for x in range(-12, 12) for z in range(-3, 3)]
            got = set(w.get_blocks(pos))
            assert got in ({AIR}, {GLASS}), (n, got)  # whole or absent, never half
            assert got == {AIR}  # and here absent: its commit (the request's one) never completed
            assert w.host_state.get(f"B{n}") is None
    finally:
        w.close()
