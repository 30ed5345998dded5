"""batch_apply_many on the Java hosts (java-core, paper-mock): what only they show.

The embedded host commits a request's batches together; a Java host runs each batch in a tick of its own
under the tick budget (docs/world-protocol.md, *batch_apply_many*; paper-plugin/README.md). So on a Java
host a 16-batch request takes at least 16 ticks, and a ``batch_cancel`` or ``pause`` sent while it runs
lands between two of its batches: the batches seen written before the stop answered are applied, at most
one more (the one being written) finishes, and every later one is ``not_started``. Progress is watched
through ``events_since`` (answered without the server thread), the stop is sent from this thread while
the request waits on another one.
"""

from __future__ import annotations

import threading
import time

import pytest
from contract.hosts import java_core, paper_mock
from contract.test_world_protocol import AIR, STONE, Client

JAVA_HOSTS = {"java-core": java_core, "paper-mock": paper_mock}


@pytest.fixture(params=sorted(JAVA_HOSTS))
def java_host(request, tmp_path):
    h = JAVA_HOSTS[request.param](tmp_path, True)
    yield h
    h.stop()


def batches(prefix: str, op: str, epoch: int, y0: int, n: int = 16) -> list[dict]:
    """``n`` batches of 32 blocks, batch ``i`` on layer ``y0 + i``."""
    return [
        {
            "batchId": f"{prefix}{i}",
            "worldEpoch": epoch,
            "operationId": op,
            "entries": [{"x": k % 16, "y": y0 + i, "z": k // 16, "expected": AIR, "desired": STONE} for k in range(32)],
        }
        for i in range(n)
    ]


def written_layers(c: Client, cursor: str, op: str) -> set[int]:
    """Layers of ``op`` our writes reached so far (events_since: no server-thread work)."""
    layers: set[int] = set()
    while True:
        page = c.ok("events_since", {"cursor": cursor, "limit": 1000})
        layers |= {e["y"] for e in page["events"] if e["source"] == "ours" and e["operationId"] == op}
        cursor = page["nextCursor"]
        if page["complete"]:
            return layers


def run_and_stop(c: Client, stop, prefix: str, op: str, epoch: int, y0: int) -> tuple[list[dict], int]:
    """Send a 16-batch request on another thread; once two of its batches are written, call ``stop()`` here.
    Returns the answers and how many batches were seen written when ``stop()`` answered (None: the request
    finished first: the host raced ahead)."""
    cursor = c.ok("events_since", {"cursor": ""})["nextCursor"]
    out: dict = {}

    def send() -> None:
        out["result"] = c.ok("batch_apply_many", {"batches": batches(prefix, op, epoch, y0)})

    t = threading.Thread(target=send, daemon=True)
    t.start()
    deadline = time.monotonic() + 60
    while len(written_layers(c, cursor, op)) < 2 and t.is_alive():
        assert time.monotonic() < deadline, "two batches were not written within 60 s"
        time.sleep(0.005)
    stop()
    seen = len(written_layers(c, cursor, op))
    t.join(60)
    assert not t.is_alive(), "the request did not answer within 60 s of the stop"
    return out["result"]["answers"], seen


def check_stopped(answers: list[dict], seen: int, reason: str) -> int:
    outcomes = [a["outcome"] for a in answers]
    applied = outcomes.count("answered")
    assert outcomes == ["answered"] * applied + ["not_started"] * (16 - applied), answers
    assert all(a["result"]["status"] == "applied" for a in answers[:applied]), answers
    assert all(a["reason"] == reason for a in answers[applied:]), answers
    assert seen <= applied <= seen + 1, f"{applied} applied, {seen} written when the stop answered: at most one more"
    return applied


def resume_and_wait(c: Client) -> None:
    c.ok("resume", {})
    deadline = time.monotonic() + 10
    while c.ok("world_info")["paused"]:  # resume takes effect once stored
        assert time.monotonic() < deadline, "resume did not take effect within 10 s"
        time.sleep(0.02)


def stopped_request(c: Client, name: str, stop, epoch: int, y0: int) -> tuple[list[dict], int, dict]:
    """``run_and_stop`` with ``stop(op)``; a host catching up on late ticks (paper-mock runs them back to back)
    may finish all 16 batches before the stop lands: then again with new ids and layers (3 tries).
    Returns (answers, seen, the request's params)."""
    for attempt in range(3):
        if attempt and c.ok("world_info")["paused"]:
            resume_and_wait(c)
        prefix, op, y = f"{name}{attempt}-", f"op-{name}-{attempt}", y0 + 16 * attempt
        answers, seen = run_and_stop(c, lambda: stop(op), prefix, op, epoch, y)
        if any(a["outcome"] == "not_started" for a in answers):
            break
    return answers, seen, {"batches": batches(prefix, op, epoch, y)}


def test_a_request_is_paced_one_batch_a_tick_so_a_stop_lands_between_batches(java_host):
    c = Client(java_host)
    info = c.ok("world_info")
    assert "batch_apply_many" in info["capabilities"]
    epoch = info["epoch"]

    # batch_cancel while the request runs: the rest of that operation is not started, writes are not paused
    answers, seen, _ = stopped_request(c, "cancel", lambda op: c.ok("batch_cancel", {"operationId": op}), epoch, 70)
    check_stopped(answers, seen, "cancelled")
    assert c.ok("world_info")["paused"] is False

    # pause while a request runs: the rest is not started; after resume the same request finishes it
    answers, seen, params = stopped_request(c, "pause", lambda op: c.ok("pause", {"reason": "test"}), epoch, 130)
    applied = check_stopped(answers, seen, "paused")
    resume_and_wait(c)
    again = c.ok("batch_apply_many", params)["answers"]
    assert [a["result"]["replayed"] for a in again] == [True] * applied + [False] * (16 - applied), again
    assert all(a["result"]["status"] == "applied" for a in again), again
