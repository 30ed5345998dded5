"""Issue 12 item 3: concurrent build_apply calls with one idempotency key.

Documented (docs/architecture.md, build step 2): the same key with the same plan returns the
same operation (``replayed: true``); with another plan it is refused (``invalid_request``).
Both must hold when the calls arrive at the same time — before the fix the second caller got
``internal`` from the SQLite uniqueness index.

Real concurrency: N asyncio tasks on the core over a real SQLite file, and N threads calling a
real journal gRPC server (JournalServicer over a TCP port), several rounds each.
"""

from __future__ import annotations

import asyncio
import json
import threading

import grpc
import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.journal.v1 import journal_pb2_grpc
from mcb_common.errors import ErrorCode, McbError
from mcb_journal import operations
from mcb_journal.blobs import BlobStore
from mcb_journal.core import JournalCore
from mcb_journal.db import Database
from mcb_journal.projects import Caller
from mcb_journal.servicer import JournalServicer
from mcb_rpc.auth import call_metadata
from mcb_rpc.tokens import TokenTable

from services.journal.tests.test_plan_summary_size import AirWorld, InProcessPlanner

N = 8
ROUNDS = 5
CALLER = Caller("agent", "p", "alice")


class SlowWorld(AirWorld):
    """The air world answering after a network-like pause (so concurrent callers interleave)."""

    async def world_info(self):
        await asyncio.sleep(0.002)
        return await super().world_info()

    async def call(self, method, params, result_type):
        await asyncio.sleep(0.001)
        return await super().call(method, params, result_type)


class SlowQueue:
    """The progress stream's interface, answering after a pause."""

    def __init__(self):
        self.events: list[dict] = []

    async def progress(self, event):
        await asyncio.sleep(0.002)
        self.events.append(event)


def make_core(tmp_path) -> JournalCore:
    c = JournalCore(
        db=Database(tmp_path / "j.sqlite"),
        blobs=BlobStore(tmp_path / "blobs"),
        world=SlowWorld(),
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


def recipe(block: str) -> str:
    return json.dumps(
        {
            "version": 1,
            "operations": [
                {"type": "box", "min": {"x": 0, "y": 64, "z": 0}, "max": {"x": 3, "y": 64, "z": 3}, "block": block}
            ],
        }
    )


async def prepare(core: JournalCore, block: str) -> jpb.PlanSummary:
    return await core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=recipe(block)))


async def apply_all(core: JournalCore, reqs: list[jpb.BuildApplyRequest]) -> list[object]:
    async def one(r):
        try:
            return await core.build_apply(CALLER, r)
        except McbError as err:
            return err

    return await asyncio.gather(*(one(r) for r in reqs), return_exceptions=True)


def test_same_key_same_plan_all_callers_get_the_one_operation(tmp_path):
    core = make_core(tmp_path)

    async def main():
        for rnd in range(ROUNDS):
            plan = await prepare(core, "minecraft:stone")
            req = jpb.BuildApplyRequest(plan_id=plan.plan_id, plan_hash=plan.plan_hash, idempotency_key=f"k{rnd}")
            out = await apply_all(core, [req] * N)
            bad = [o for o in out if not isinstance(o, jpb.OperationReport)]
            assert not bad, f"round {rnd}: {[repr(b) for b in bad]}"
            assert len({o.operation_id for o in out}) == 1, f"round {rnd}: several operations for one key"
            assert sum(not o.replayed for o in out) == 1, "exactly one caller created it, the others replay"
            # finish it so the writer-queue bound does not interfere with later rounds
            operations.set_state(core.db, out[0].operation_id, "cancelled", message="test")

    asyncio.run(main())
    n = core.db.one("SELECT COUNT(*) AS n FROM operations")["n"]
    assert n == ROUNDS  # one operation (queued once) per key, never two


def test_same_key_two_plans_is_invalid_request_never_internal(tmp_path):
    core = make_core(tmp_path)

    async def main():
        for rnd in range(ROUNDS):
            a = await prepare(core, "minecraft:stone")
            b = await prepare(core, "minecraft:dirt")
            reqs = [
                jpb.BuildApplyRequest(plan_id=p.plan_id, plan_hash=p.plan_hash, idempotency_key=f"k{rnd}")
                for p in (a, b) * (N // 2)
            ]
            out = await apply_all(core, reqs)
            reports = [o for o in out if isinstance(o, jpb.OperationReport)]
            errors = [o for o in out if not isinstance(o, jpb.OperationReport)]
            assert all(isinstance(e, McbError) and e.code == ErrorCode.INVALID_REQUEST for e in errors), (
                f"round {rnd}: {[repr(e) for e in errors]}"
            )
            winner = {r.plan_id for r in reports}
            assert len(winner) == 1 and len({r.operation_id for r in reports}) == 1
            assert len(reports) == N // 2 and len(errors) == N // 2  # every caller of the winning plan replays
            assert all(e.details.get("operation_id") == reports[0].operation_id for e in errors)
            operations.set_state(core.db, reports[0].operation_id, "cancelled", message="test")

    asyncio.run(main())


async def cancel(core: JournalCore, op_id: str) -> None:
    operations.set_state(core.db, op_id, "cancelled", message="test")


@pytest.fixture
def grpc_journal(tmp_path):
    """A real journal gRPC server (JournalServicer) on a TCP port, in its own event-loop thread."""
    core = make_core(tmp_path)
    tokens = TokenTable({"agent": "agent-tok"})
    loop = asyncio.new_event_loop()
    started = threading.Event()
    box: dict = {}

    async def serve():
        server = grpc.aio.server()
        journal_pb2_grpc.add_JournalServicer_to_server(JournalServicer(core, tokens), server)
        box["port"] = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        box["stop"] = asyncio.Event()
        started.set()
        await box["stop"].wait()
        await server.stop(0)

    t = threading.Thread(target=lambda: loop.run_until_complete(serve()), daemon=True)
    t.start()
    assert started.wait(10)
    yield core, loop, f"127.0.0.1:{box['port']}"
    loop.call_soon_threadsafe(box["stop"].set)
    t.join(10)
    assert not t.is_alive()


def test_concurrent_grpc_callers_same_key(grpc_journal):
    core, loop, addr = grpc_journal
    md = call_metadata("agent-tok", "p", "alice")
    with grpc.insecure_channel(addr) as ch:
        stub = journal_pb2_grpc.JournalStub(ch)
        for rnd in range(ROUNDS):
            a = asyncio.run_coroutine_threadsafe(prepare(core, "minecraft:stone"), loop).result(30)
            b = asyncio.run_coroutine_threadsafe(prepare(core, "minecraft:dirt"), loop).result(30)
            for plans, key in (([a], f"same{rnd}"), ([a, b], f"two{rnd}")):
                results: list = [None] * N
                barrier = threading.Barrier(N)

                def call(i, plans=plans, key=key, results=results, barrier=barrier):
                    p = plans[i % len(plans)]
                    barrier.wait()
                    try:
                        results[i] = stub.BuildApply(
                            jpb.BuildApplyRequest(plan_id=p.plan_id, plan_hash=p.plan_hash, idempotency_key=key),
                            metadata=md,
                            timeout=30,
                        )
                    except grpc.RpcError as err:
                        results[i] = err

                threads = [threading.Thread(target=call, args=(i,)) for i in range(N)]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join(60)
                reports = [r for r in results if isinstance(r, jpb.OperationReport)]
                errors = [r for r in results if isinstance(r, grpc.RpcError)]
                assert len(reports) + len(errors) == N
                assert len({r.operation_id for r in reports}) == 1, f"{key}: {results}"
                assert all(e.code() == grpc.StatusCode.INVALID_ARGUMENT for e in errors), (
                    f"{key}: {[(e.code(), e.details()) for e in errors]}"
                )
                if len(plans) == 1:
                    assert not errors and sum(not r.replayed for r in reports) == 1
                else:
                    assert len(errors) == N // 2
                asyncio.run_coroutine_threadsafe(cancel(core, reports[0].operation_id), loop).result(10)
