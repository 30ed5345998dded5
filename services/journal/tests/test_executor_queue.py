"""The executor's queue is SQLite (issue 14 item 2): build_apply commits ``queued`` and wakes the
executor; the executor takes queued operations oldest first; a restart runs what SQLite says is
queued and never runs an operation twice (what Redis redelivery used to cover); a bug in one
operation does not stop the dispatcher. Real JournalCore over a real SQLite file; the world host
is an in-memory fake that records every batch it is sent."""

from __future__ import annotations

import asyncio
import hashlib
import json
import zlib

from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_journal import operations
from mcb_journal.blobs import BlobStore
from mcb_journal.core import JournalCore
from mcb_journal.db import Database
from mcb_journal.executor import Executor
from mcb_journal.history import History
from mcb_journal.projects import Caller

from services.journal.tests.test_idempotency_race import SlowQueue
from services.journal.tests.test_plan_summary_size import AirWorld, InProcessPlanner

CALLER = Caller("agent", "p", "alice")


class RecordingWorld(AirWorld):
    """Air everywhere; every batch is applied and its id recorded. ``bug_next_info`` makes the
    next world_info raise a plain exception (a bug, not an McbError)."""

    def __init__(self) -> None:
        self.batches: list[str] = []
        self.bug_next_info = False

    async def world_info(self):
        if self.bug_next_info:
            self.bug_next_info = False
            raise RuntimeError("a bug in the executor's path")
        return await super().world_info()

    async def call(self, method, params, result_type):
        if method == "batch_apply":  # the world protocol's JSON form (what goes over HTTP)
            self.batches.append(params["batchId"])
            return world_pb2.BatchApplyResult(
                batch_id=params["batchId"], status="applied", written=len(params["entries"])
            )
        if method == "events_since":
            return world_pb2.EventsSinceResult(next_cursor="c", complete=True)
        return await super().call(method, params, result_type)


def make_core(tmp_path, world: RecordingWorld) -> JournalCore:
    c = JournalCore(
        db=Database(tmp_path / "j.sqlite"),
        blobs=BlobStore(tmp_path / "blobs"),
        world=world,
        planner=InProcessPlanner(),
        queue=SlowQueue(),
    )
    c.projects.load(
        [
            {
                "project_id": "p",
                "owner_player_id": "alice",
                "area": {"min": {"x": -50, "y": -64, "z": -50}, "max": {"x": 50, "y": 319, "z": 50}},
            }
        ]
    )
    return c


def recipe(y: int) -> str:
    return json.dumps(
        {
            "version": 1,
            "operations": [
                {
                    "type": "box",
                    "min": {"x": 0, "y": y, "z": 0},
                    "max": {"x": 3, "y": y, "z": 3},
                    "block": "minecraft:stone",
                }
            ],
        }
    )


async def queue_op(core: JournalCore, y: int, key: str) -> str:
    plan = await core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=recipe(y)))
    rep = await core.build_apply(
        CALLER, jpb.BuildApplyRequest(plan_id=plan.plan_id, plan_hash=plan.plan_hash, idempotency_key=key)
    )
    assert rep.state == "queued"
    return rep.operation_id


def batch_states(core: JournalCore, op_id: str) -> dict[int, str]:
    return {r["seq"]: r["state"] for r in core.db.all("SELECT seq, state FROM batches WHERE op_id=?", op_id)}


def four_batches(tmp_path, world: RecordingWorld) -> JournalCore:
    core = make_core(tmp_path, world)
    core.limits.batch_blocks = 4  # the 4x4 box: four batches
    return core


def state(core: JournalCore, op_id: str) -> str:
    return core.db.one("SELECT state FROM operations WHERE op_id=?", op_id)["state"]


async def run_until(ex: Executor, done, timeout: float = 20) -> None:
    task = asyncio.create_task(ex.run_forever())
    try:
        async with asyncio.timeout(timeout):
            while not done():
                await asyncio.sleep(0.01)
    finally:
        ex.stopping.set()
        ex.ctx.wake.set()
        await asyncio.wait_for(task, 5)


def test_build_apply_wakes_the_executor_which_runs_queued_operations_oldest_first(tmp_path):
    world = RecordingWorld()
    core = make_core(tmp_path, world)

    async def main():
        ex = core.executor()
        task = asyncio.create_task(ex.run_forever())
        await asyncio.sleep(0.05)  # the executor idles: nothing is queued
        assert world.batches == []
        ops = [await queue_op(core, 64 + i, f"k{i}") for i in range(3)]
        async with asyncio.timeout(20):
            while any(state(core, o) != "applied" for o in ops):
                await asyncio.sleep(0.01)
        ex.stopping.set()
        core.ctx.wake.set()
        await asyncio.wait_for(task, 5)
        return ops

    ops = asyncio.run(main())
    assert world.batches == [f"{o}.0" for o in ops], "each ran once, in the order they were queued"


def test_a_restart_runs_what_sqlite_says_is_queued_exactly_once(tmp_path):
    world = RecordingWorld()
    core = make_core(tmp_path, world)
    op = asyncio.run(queue_op(core, 64, "k"))  # queued; the process "dies" before the executor ran
    core.db.close()

    world2 = RecordingWorld()
    core2 = make_core(tmp_path, world2)  # the restarted journal: same files, no Redis involved
    assert core2.recover_at_start() == []
    assert core2.ctx.runnable() == [op]
    ex = core2.executor()
    asyncio.run(run_until(ex, lambda: state(core2, op) == "applied"))
    assert world2.batches == [f"{op}.0"]
    # offered again (what a redelivered entry was): a settled operation is never run twice
    asyncio.run(ex.run_operation(op))
    assert world2.batches == [f"{op}.0"] and state(core2, op) == "applied"


def test_an_operation_applying_at_the_crash_is_never_resumed(tmp_path):
    world = RecordingWorld()
    core = make_core(tmp_path, world)
    op = asyncio.run(queue_op(core, 64, "k"))
    operations.set_state(core.db, op, "applying", message="applying")  # the process died mid-operation
    core.db.close()

    world2 = RecordingWorld()
    core2 = make_core(tmp_path, world2)
    assert core2.recover_at_start() == [op]
    assert core2.ctx.runnable() == []
    later = asyncio.run(queue_op_refused(core2))
    ex = core2.executor()
    asyncio.run(ex.run_operation(op))
    assert world2.batches == [] and state(core2, op) == "recovery_required" and later


async def queue_op_refused(core: JournalCore) -> bool:
    try:
        await queue_op(core, 65, "k2")
    except McbError as err:
        return err.code == ErrorCode.RECOVERY_REQUIRED
    return False


def test_a_bug_in_one_operation_does_not_stop_the_dispatcher(tmp_path):
    world = RecordingWorld()
    core = make_core(tmp_path, world)

    async def main():
        bad = await queue_op(core, 64, "bad")
        good = await queue_op(core, 65, "good")
        world.bug_next_info = True  # strikes the oldest (bad) before any batch
        await run_until(core.executor(), lambda: state(core, good) not in ("queued", "applying"))
        return bad, good

    bad, good = asyncio.run(main())
    assert state(core, good) == "applied" and world.batches == [f"{good}.0"]
    assert state(core, bad) == "failed"  # nothing was written: failed, not recovery_required


def test_a_bug_after_an_answered_batch_records_that_batch_and_fails_the_operation(tmp_path):
    """With the group commit a batch's completion waits for a later intent: a bug in between
    must still record the answered batch, so the verdict is failed (what was written is known),
    not recovery_required; the next batch's intent, written ahead while batch 0 was in flight and
    never sent, is aborted (not left open)."""
    world = RecordingWorld()
    core = make_core(tmp_path, world)
    core.limits.batch_blocks = 8  # the 4x4 box: two batches

    async def main():
        op = await queue_op(core, 64, "two")
        ex = core.executor()
        calls = 0
        real = ex._rights_refusal

        def buggy(*a):
            nonlocal calls
            calls += 1
            if calls == 2:  # batch 0 answered, batch 1 not yet begun
                raise RuntimeError("a bug between two batches")
            return real(*a)

        ex._rights_refusal = buggy
        await run_until(ex, lambda: state(core, op) not in ("queued", "applying"))
        return op

    op = asyncio.run(main())
    assert world.batches == [f"{op}.0"]
    assert state(core, op) == "failed"
    rows = core.db.all("SELECT seq, state FROM batches WHERE op_id=? ORDER BY seq", op)
    assert [(r["seq"], r["state"]) for r in rows] == [(0, "done"), (1, "aborted")]
    assert len(History(core.db).writes_of(op, certain_only=True)) == 8  # one packed record per answered batch


def test_the_batch_request_is_the_protocol_json_of_the_message():
    """The executor builds batch_apply's JSON directly; it must be what MessageToDict gives for the
    BatchApplyParams message (the world protocol, docs/world-protocol.md), zeros included."""
    from google.protobuf import json_format

    class P:
        world_epoch = 7
        dependencies = [(1, 2, 3, "minecraft:stone"), (0, 0, 0, "minecraft:air")]

    entries = [(0, 64, -1, "minecraft:air", "minecraft:glass"), (-5, 0, 9, "minecraft:dirt", "minecraft:stone")]
    msg = world_pb2.BatchApplyParams(
        batch_id="op_1.3",
        world_epoch=7,
        operation_id="op_1",
        entries=[world_pb2.BatchEntry(x=x, y=y, z=z, expected=e, desired=d) for x, y, z, e, d in entries],
        dependencies=[world_pb2.BatchEntry(x=x, y=y, z=z, expected=s) for x, y, z, s in P.dependencies],
    )
    want = json_format.MessageToDict(msg, always_print_fields_with_no_presence=True)
    params = Executor._params(P, "op_1", 3, entries)
    assert json.loads(params.text) == want and params == want  # the bytes sent, and as a mapping (doubles)


def test_a_batch_is_encoded_directly_as_json_dumps_would():
    """The intent payload (hashed and stored, read by recovery) is ``json.dumps(entries)`` compact,
    byte for byte, and the request's entries are the protocol objects of the same entries: for
    names that need escaping too, a last short batch and an empty one."""
    from mcb_journal.plans import Plan

    names = ["minecraft:air", 'minecraft:oak_sign[text="a\\b"]', "minecraft:caf\u00e9", "minecraft:stone"]
    entries = [((x, 64 + x % 3, -x), names[x % 4], names[(x + 1) % 4]) for x in range(-600, 600, 1)]
    plan = Plan.from_entries(entries, "w", 3, "r")
    for seq in (0, 1, 2):  # 512, 512 and the last 176
        ents, blob, digest, params = Executor._prepare(plan, "op_9", seq, 512)
        payload = json.dumps(ents, separators=(",", ":")).encode()
        assert zlib.decompress(blob) == payload and digest == hashlib.sha256(payload).hexdigest()
        doc = json.loads(params.text)
        assert doc["batchId"] == f"op_9.{seq}" and doc["worldEpoch"] == 3 and doc["operationId"] == "op_9"
        assert doc["entries"] == [{"x": x, "y": y, "z": z, "expected": e, "desired": d} for x, y, z, e, d in ents]
        assert [list(e) for e in json.loads(payload)] == [list(e) for e in ents]
    assert Executor._prepare(plan, "op_9", 5, 512)[0] == []
    assert json.loads(Executor._prepare(plan, "op_9", 5, 512)[3].text)["entries"] == []


class WatchingWorld(RecordingWorld):
    """Holds each batch until the test lets it go, and notes what another connection to the
    journal saw when the batch arrived: the write-ahead rule and the pipeline, from outside."""

    def __init__(self, path) -> None:
        super().__init__()
        self.reader = Database(path)
        self.seen: dict[str, dict[int, str]] = {}  # batch id -> {seq: state} of the op's batches on disk
        self.gate = asyncio.Event()

    async def call(self, method, params, result_type):
        if method == "batch_apply":
            op = params["operationId"]
            self.seen[params["batchId"]] = {
                r["seq"]: r["state"] for r in self.reader.all("SELECT seq, state FROM batches WHERE op_id=?", op)
            }
            await self.gate.wait()
            self.gate.clear()
        return await super().call(method, params, result_type)


def test_the_next_intent_is_durable_while_a_batch_is_in_flight_and_never_sent_before_it(tmp_path):
    """Issue 14's pipeline: while the host writes batch k, the writer thread commits batch k+1's
    intent together with batch k-1's completion (group commit); every batch reaches the host only
    after its own intent is on disk; nothing is sent twice."""
    path = tmp_path / "j.sqlite"
    world = WatchingWorld(path)
    core = JournalCore(
        db=Database(path),
        blobs=BlobStore(tmp_path / "blobs"),
        world=world,
        planner=InProcessPlanner(),
        queue=SlowQueue(),
    )
    core.projects.load(
        [
            {
                "project_id": "p",
                "owner_player_id": "alice",
                "area": {"min": {"x": -50, "y": -64, "z": -50}, "max": {"x": 50, "y": 319, "z": 50}},
            }
        ]
    )
    core.limits.batch_blocks = 4  # the 4x4 box: four batches

    async def main():
        op = await queue_op(core, 64, "pipe")
        ex = core.executor()
        task = asyncio.create_task(ex.run_forever())
        on_disk_in_flight = []
        async with asyncio.timeout(20):
            for k in range(4):
                while f"{op}.{k}" not in world.seen:
                    await asyncio.sleep(0.005)
                # batch k is at the host: wait for the writer to commit what it writes ahead
                want = {k + 1: "intent"} if k < 3 else {}
                want |= {k - 1: "done"} if 0 < k < 3 else {}  # the last one's: recorded at the end
                while True:
                    rows = {
                        r["seq"]: r["state"]
                        for r in world.reader.all("SELECT seq, state FROM batches WHERE op_id=?", op)
                    }
                    if all(rows.get(s) == st for s, st in want.items()):
                        break
                    await asyncio.sleep(0.005)
                on_disk_in_flight.append(rows)
                world.gate.set()
            while state(core, op) != "applied":
                await asyncio.sleep(0.01)
        ex.stopping.set()
        core.ctx.wake.set()
        await asyncio.wait_for(task, 5)
        ex.close()
        return op, on_disk_in_flight

    op, in_flight = asyncio.run(main())
    assert world.batches == [f"{op}.{k}" for k in range(4)]
    assert in_flight == [
        {0: "intent", 1: "intent"},
        {0: "done", 1: "intent", 2: "intent"},
        {0: "done", 1: "done", 2: "intent", 3: "intent"},
        {0: "done", 1: "done", 2: "intent", 3: "intent"},
    ]
    for k in range(4):
        arrived = world.seen[f"{op}.{k}"]
        assert arrived[k] == "intent", (k, arrived)  # durable before the host saw the batch
        assert all(arrived[j] in ("done", "intent") for j in range(k)), (k, arrived)
    final = {r["seq"]: r["state"] for r in world.reader.all("SELECT seq, state FROM batches WHERE op_id=?", op)}
    assert final == {0: "done", 1: "done", 2: "done", 3: "done"}


def test_a_graceful_stop_with_a_batch_at_the_host_aborts_the_intent_written_ahead(tmp_path):
    """app.py's on_stop cancels the executor while batch 0 is at the host: batch 0 stays an open
    intent (its fate is the host's: reviewed at the next start), batch 1's intent, written ahead
    and never sent, is aborted, and nothing more is sent."""

    class HeldWorld(RecordingWorld):
        def __init__(self) -> None:
            super().__init__()
            self.arrived = asyncio.Event()

        async def call(self, method, params, result_type):
            if method == "batch_apply":
                self.arrived.set()
                await asyncio.Event().wait()  # never answers
            return await super().call(method, params, result_type)

    world = HeldWorld()
    core = four_batches(tmp_path, world)

    async def main():
        op = await queue_op(core, 64, "stop")
        ex = core.executor()
        task = asyncio.create_task(ex.run_forever())
        await world.arrived.wait()
        while core.db.one("SELECT 1 FROM batches WHERE op_id=? AND seq=1", op) is None:
            await asyncio.sleep(0.01)  # the writer has written batch 1's intent ahead
        ex.stopping.set()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        ex.close()
        return op

    op = asyncio.run(main())
    assert batch_states(core, op) == {0: "intent", 1: "aborted"}


def test_a_failing_writer_records_the_answered_batches_and_fails_the_operation(tmp_path, caplog):
    world = RecordingWorld()
    core = four_batches(tmp_path, world)

    async def main():
        op = await queue_op(core, 64, "w")
        ex = core.executor()
        real = ex._commit_ahead

        def bad(plan, op_id, seqs, size, answered):
            if seqs == [2]:  # a host without batch_apply_many: groups of one batch
                raise RuntimeError("a bug in the writer")
            return real(plan, op_id, seqs, size, answered)

        ex._commit_ahead = bad
        await run_until(ex, lambda: state(core, op) not in ("queued", "applying"))
        ex.close()
        return op

    op = asyncio.run(main())
    assert world.batches == [f"{op}.0", f"{op}.1"]  # batch 2 was never written ahead, never sent
    assert state(core, op) == "failed"
    assert batch_states(core, op) == {0: "done", 1: "done"}
    assert len(History(core.db).writes_of(op, certain_only=True)) == 8  # one packed record per answered batch
    assert "a bug in the writer" in caplog.text


class ManyWorld(RecordingWorld):
    """A host listing ``batch_apply_many`` that answers each request as docs/world-protocol.md says:
    batches in order, none started after one that was not applied. ``conflict_at``: the batch id
    answered ``conflict``; ``violate``: the first batch answered ``not_started``/``after_conflict``
    with no conflict before it (a host breaking the protocol)."""

    def __init__(self, conflict_at: str = "", violate: bool = False) -> None:
        super().__init__()
        self.requests: list[list[str]] = []
        self.conflict_at, self.violate = conflict_at, violate

    async def world_info(self):
        info = await super().world_info()
        info.capabilities.append("batch_apply_many")
        return info

    async def call(self, method, params, result_type):
        if method != "batch_apply_many":
            return await super().call(method, params, result_type)
        ids = [b["batchId"] for b in params["batches"]]
        self.requests.append(ids)
        answers, stopped = [], "after_conflict" if self.violate else ""
        for b in params["batches"]:
            if stopped:
                answers.append(world_pb2.BatchAnswer(batch_id=b["batchId"], outcome="not_started", reason=stopped))
                continue
            self.batches.append(b["batchId"])
            status = "conflict" if b["batchId"] == self.conflict_at else "applied"
            res = world_pb2.BatchApplyResult(batch_id=b["batchId"], status=status)
            if status == "conflict":
                e = b["entries"][0]
                res.conflicts = 1
                res.problems.add(x=e["x"], y=e["y"], z=e["z"], result="conflict", current="minecraft:glass")
                stopped = "after_conflict"
            else:
                res.written = len(b["entries"])
            answers.append(world_pb2.BatchAnswer(batch_id=b["batchId"], outcome="answered", result=res))
        return world_pb2.BatchApplyManyResult(answers=answers)


def test_batches_go_in_groups_and_a_conflict_stops_the_rest_of_its_request(tmp_path):
    world = ManyWorld()
    core = four_batches(tmp_path, world)

    async def main():
        op = await queue_op(core, 64, "g")
        world.conflict_at = f"{op}.2"
        ex = core.executor()
        await run_until(ex, lambda: state(core, op) not in ("queued", "applying"))
        ex.close()
        return op

    op = asyncio.run(main())
    assert world.requests == [[f"{op}.{i}" for i in range(4)]]  # one request: the journal's groups of 8
    assert state(core, op) == "conflict"
    assert batch_states(core, op) == {0: "done", 1: "done", 2: "conflict", 3: "aborted"}
    assert len(History(core.db).writes_of(op, certain_only=True)) == 8


def test_a_host_breaking_the_protocol_fails_the_operation_without_a_recovery(tmp_path):
    world = ManyWorld(violate=True)
    core = four_batches(tmp_path, world)

    async def main():
        op = await queue_op(core, 64, "v")
        ex = core.executor()
        await run_until(ex, lambda: state(core, op) not in ("queued", "applying"))
        ex.close()
        return op

    op = asyncio.run(main())
    assert world.batches == []
    assert state(core, op) == "failed"  # nothing was started: no open intent to review
    assert set(batch_states(core, op).values()) == {"aborted"}
