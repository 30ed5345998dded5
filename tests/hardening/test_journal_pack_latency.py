"""Issue 33 item 1: packing a finished 1M-block operation does not stall the journal.

A real journal process (with a real Redis; no world host, which /health then reports
unreachable) starts on a journal holding one finished operation of 1,000,000 written blocks and
their 1,000,000 observed echoes, seeded straight into its SQLite file; the test makes it due for
packing once the journal answers. While the automatic pass packs it, the test asks ``/health``
(HTTP) and ``OperationStatus`` (gRPC) in turn over loopback, each with a 2 s deadline, and keeps
the slowest answer of each. Before the packer moved to its child process the same pass held
the event loop for seconds (every probe during it timed out). The test asserts no stall, < 1 s
(as test_no_stall.py; bench/README.md: a duration bound in a test is flaky on the shared 2-core
machine, where other builds push even an idle /health past 100 ms), and prints the worst: the
target, < 100 ms, is measured by bench/hostile_health.py and reported in bench/REPORT.md
(MCB_TEST_PACK_LIMIT_MS=100 tightens this test on a quiet machine). The operation's rows must end
up packed (none live) within the time limit.

Then ``/health`` is probed while the journal answers questions that decode packed records
(reads.py runs them on worker threads): ``OperationUndoPrepare`` of a second, packed operation
of 200,000 blocks (undo's limit) reads every write of it, then stops at the missing world host;
undo of the 1,000,000-block operation is refused from the packed count, without a decode. Before
reads.py the decode ran on the event loop (≈ 2.5 s for 1M rows in the v1 format).
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid

import grpc
import httpx
from hardening.bigjournal import live_rows, make_due, seed_finished_operation
from harness import PY, free_ports, start_process, start_redis
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.journal.v1 import journal_pb2_grpc
from mcb_rpc.auth import call_metadata
from mcb_rpc.tokens import PRINCIPALS, ensure_token

BLOCKS = int(os.environ.get("MCB_TEST_PACK_BLOCKS", "1000000"))
LIMIT_MS = float(os.environ.get("MCB_TEST_PACK_LIMIT_MS", "1000"))
UNDO_BLOCKS = 200_000  # undo.MAX_MASK: the largest operation an undo reads
# Reading it on the event loop (before reads.py) held /health ≥ 400 ms; off the loop ≈ 30 ms.
UNDO_LIMIT_MS = float(os.environ.get("MCB_TEST_UNDO_LIMIT_MS", str(min(LIMIT_MS, 250))))


def test_health_and_grpc_stay_fast_while_a_million_block_operation_packs(tmp_path):
    runtime = tmp_path / "rt"
    owner = str(uuid.uuid4())
    for principal in PRINCIPALS:
        ensure_token(runtime / "secrets", principal)
    (runtime / "config.json").write_text(
        json.dumps(
            {
                "projects": [
                    {
                        "project_id": "default",
                        "name": "Default",
                        "owner_player_id": owner,
                        "area": {"min": {"x": -64, "y": -64, "z": -64}, "max": {"x": 127, "y": 319, "z": 127}},
                    }
                ]
            }
        )
    )
    db_path = runtime / "journal" / "journal.sqlite"
    op_id = "op_" + uuid.uuid4().hex[:12]
    seed_finished_operation(db_path, op_id, BLOCKS)
    undo_op = "op_" + uuid.uuid4().hex[:12]
    seed_finished_operation(db_path, undo_op, UNDO_BLOCKS)
    grpc_port, health_port, world_port = free_ports(3)
    redis, redis_url = start_redis(tmp_path)
    env = {
        "MCB_RUNTIME_DIR": str(runtime),
        "MCB_REDIS_URL": redis_url,
        "PYTHONUNBUFFERED": "1",
        "MCB_JOURNAL_GRPC_PORT": str(grpc_port),
        "MCB_JOURNAL_HEALTH_PORT": str(health_port),
        "MCB_WORLD_HOST_PORT": str(world_port),
        "MCB_JOURNAL_PACK_AFTER_S": "0",
    }
    url = f"http://127.0.0.1:{health_port}/health"
    journal = start_process(
        "journal", [PY, "-m", "mcb_journal"], tmp_path / "logs", env=env, health_url=url, timeout=60
    )
    agent = (runtime / "secrets" / "agent.token").read_text().strip()
    channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
    stub = journal_pb2_grpc.JournalStub(channel)
    md = call_metadata(agent, project_id="default", player_id=owner)
    make_due(db_path, op_id)  # the journal is up: the operations are due for packing now
    make_due(db_path, undo_op)
    worst = {"health": 0.0, "grpc": 0.0}
    during = 0  # rounds while the operation was being packed

    try:
        with httpx.Client(timeout=2.0) as http:
            deadline = time.monotonic() + 240
            started = done_at = None
            while time.monotonic() < deadline:
                t0 = time.perf_counter()
                try:
                    http.get(url)
                    health_ms = (time.perf_counter() - t0) * 1000
                except httpx.TimeoutException:
                    health_ms = 2000.0
                t0 = time.perf_counter()
                try:
                    rep = stub.OperationStatus(jpb.OperationRef(operation_id=op_id), metadata=md, timeout=2.0)
                    assert rep.state == "applied"
                    grpc_ms = (time.perf_counter() - t0) * 1000
                except grpc.RpcError as exc:
                    assert exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED, exc
                    grpc_ms = 2000.0
                pack_running = started is not None and done_at is None
                live, packed = live_rows(db_path, op_id)
                if started is None and (packed or live < BLOCKS):
                    started = time.monotonic()
                for k, v in (("health", health_ms), ("grpc", grpc_ms)):  # every answer counts
                    worst[k] = max(worst[k], v)
                during += pack_running
                if pack_running and live == 0 and packed and live_rows(db_path, undo_op) == (0, True):
                    done_at = time.monotonic()
                if done_at is not None and time.monotonic() - done_at > 1.0:
                    break
                time.sleep(0.02)
            assert journal.alive(), journal.log()
            assert done_at is not None, f"the operation was not packed in time (live rows: {live})\n{journal.log()}"
            _, _, refused = _probe_during_undo(http, url, stub, md, op_id)
            undo_worst, undo_rounds, undo_error = _probe_during_undo(http, url, stub, md, undo_op)
    finally:
        channel.close()
        journal.stop()
        redis.stop()
    print(
        f"\n{BLOCKS:,} blocks packed in {done_at - started:.1f} s; worst /health {worst['health']:.1f} ms, "
        f"worst OperationStatus {worst['grpc']:.1f} ms; {during} rounds during the packing"
    )
    print(
        f"undo over the packed {UNDO_BLOCKS:,}-block operation: worst /health {undo_worst:.1f} ms over "
        f"{undo_rounds} probes; answer: {undo_error}"
    )
    assert worst["health"] < LIMIT_MS, worst
    assert worst["grpc"] < LIMIT_MS, worst
    assert during >= 5, "the packing was not watched: it must start after the journal answers"
    assert "undo handles" in refused, refused  # counted from the pack, never decoded
    assert "world" in undo_error.lower(), undo_error  # it read every packed write, then asked the world host
    assert undo_worst < UNDO_LIMIT_MS, undo_worst
    assert undo_rounds >= 3, "the undo was too quick to watch: it must decode a packed 200k-block record"


def _probe_during_undo(http: httpx.Client, url: str, stub, md, op_id: str) -> tuple[float, int, str]:
    """Ask ``/health`` every 20 ms while ``OperationUndoPrepare`` of the packed operation runs;
    the slowest answer, how many probes, and the undo's error text."""
    answer: dict[str, str] = {}

    def undo() -> None:
        try:
            stub.OperationUndoPrepare(jpb.OperationRef(operation_id=op_id), metadata=md, timeout=120)
            answer["error"] = "no error: undo accepted a 1M-block operation"
        except grpc.RpcError as exc:
            answer["error"] = exc.details() or str(exc.code())

    t = threading.Thread(target=undo)
    t.start()
    worst, rounds = 0.0, 0
    while t.is_alive():
        t0 = time.perf_counter()
        try:
            http.get(url)
            worst = max(worst, (time.perf_counter() - t0) * 1000)
        except httpx.TimeoutException:
            worst = 2000.0
        rounds += 1
        time.sleep(0.02)
    t.join()
    return worst, rounds, answer.get("error", "")
