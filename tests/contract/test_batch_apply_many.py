"""World-protocol conformance for batch_apply_many and batch_cancel (docs/world-protocol.md, the
sections of those names): written only against HTTP, so it runs against every host in hosts.py."""

from __future__ import annotations

import json

from contract.test_world_protocol import AIR, GLASS, STONE, Client, block

UNKNOWN = "minecraft:no_such_block"


def batch(bid: str, entries, epoch: int, op: str = "op-many", deps=()) -> dict:
    return {
        "batchId": bid,
        "worldEpoch": epoch,
        "operationId": op,
        "entries": [{"x": x, "y": y, "z": z, "expected": e, "desired": d} for x, y, z, e, d in entries],
        "dependencies": [{"x": x, "y": y, "z": z, "expected": e} for x, y, z, e in deps],
    }


def many(c: Client, *batches: dict) -> list[dict]:
    answers = c.ok("batch_apply_many", {"batches": list(batches)})["answers"]
    assert [a["batchId"] for a in answers] == [b["batchId"] for b in batches]  # one each, in order
    return answers


def kinds(answers: list[dict]) -> list[str]:
    out = []
    for a in answers:
        if a["outcome"] == "answered":
            out.append(a["result"]["status"])
        elif a["outcome"] == "not_started":
            out.append("not_started/" + a["reason"])
        else:
            assert a["outcome"] == "error", a
            out.append("error/" + a["error"]["code"])
    return out


def same_error(answer: dict, envelope: dict) -> None:
    """A per-batch error is what batch_apply answered for that batch: code, message, retryable,
    details (``detailsJson`` here, ``details`` in the envelope)."""
    e = answer["error"]
    assert (e["code"], e["message"], e["retryable"]) == (envelope["code"], envelope["message"], envelope["retryable"])
    assert json.loads(e.get("detailsJson") or "{}") == envelope.get("details", {})


def test_capability_listed(world_host):
    assert "batch_apply_many" in Client(world_host).ok("world_info")["capabilities"]


def test_written_already_conflict_per_batch_and_after_conflict(world_host):
    c = Client(world_host)
    epoch = c.ok("world_info")["epoch"]
    answers = many(
        c,
        batch("m1", [(0, 65, 0, AIR, STONE), (1, 65, 0, AIR, AIR)], epoch),
        batch("m2", [(2, 65, 0, AIR, GLASS), (0, 65, 0, STONE, GLASS)], epoch),  # sees m1's write
        batch("m3", [(3, 65, 0, AIR, STONE)], epoch, deps=[(0, 65, 0, GLASS)]),
    )
    assert kinds(answers) == ["applied"] * 3
    r1, r2, r3 = (a["result"] for a in answers)
    assert r1["written"] == 1 and r1["already"] == 1 and r1["replayed"] is False
    assert r1["alreadyPositions"] == [{"x": 1, "y": 65, "z": 0}]
    assert r2["written"] == 2 and r3["written"] == 1
    assert [block(c, x, 65, 0) for x in range(4)] == [GLASS, AIR, GLASS, STONE]
    # a conflict ends the request: nothing of the conflicting batch, nothing after it
    answers = many(
        c,
        batch("m4", [(4, 65, 0, AIR, STONE)], epoch),
        batch("m5", [(5, 65, 0, AIR, STONE), (0, 65, 0, AIR, STONE)], epoch),
        batch("m6", [(6, 65, 0, AIR, STONE)], epoch),
        batch("m7", [(7, 65, 0, AIR, STONE)], epoch),
    )
    assert kinds(answers) == ["applied", "conflict", "not_started/after_conflict", "not_started/after_conflict"]
    assert answers[1]["result"]["problems"] == [{"x": 0, "y": 65, "z": 0, "result": "conflict", "current": GLASS}]
    assert [block(c, x, 65, 0) for x in (4, 5, 6, 7)] == [STONE, AIR, AIR, AIR]
    # the batches not started were not taken: they apply in a later request
    assert kinds(many(c, batch("m6", [(6, 65, 0, AIR, STONE)], epoch))) == ["applied"]


def test_an_error_is_batch_apply_s_refusal_and_ends_the_request(world_host):
    c = Client(world_host)
    epoch = c.ok("world_info")["epoch"]
    bad_block = batch("e2", [(1, 66, 0, AIR, STONE), (2, 66, 0, AIR, UNKNOWN)], epoch)
    stale = batch("e5", [(5, 66, 0, AIR, STONE)], epoch + 5)
    answers = many(
        c, batch("e1", [(0, 66, 0, AIR, STONE)], epoch), bad_block, batch("e3", [(3, 66, 0, AIR, STONE)], epoch)
    )
    assert kinds(answers) == ["applied", "error/unsupported_block", "not_started/after_error"]
    assert "result" not in answers[1]
    same_error(answers[1], c.err("batch_apply", bad_block, 400, "unsupported_block"))
    answers = many(c, stale, batch("e6", [(6, 66, 0, AIR, STONE)], epoch))
    assert kinds(answers) == ["error/stale_snapshot", "not_started/after_error"]
    same_error(answers[0], c.err("batch_apply", stale, 409, "stale_snapshot"))
    assert [block(c, x, 66, 0) for x in range(7)] == [STONE] + [AIR] * 6  # nothing of a refused batch


def test_paused_between_requests(world_host):
    c = Client(world_host)
    epoch = c.ok("world_info")["epoch"]
    assert kinds(many(c, batch("p1", [(0, 67, 0, AIR, STONE)], epoch))) == ["applied"]
    c.ok("pause", {"reason": "owner said stop"})
    try:
        second = [batch("p2", [(1, 67, 0, AIR, STONE)], epoch), batch("p3", [(2, 67, 0, AIR, STONE)], epoch)]
        answers = many(c, *second)
        assert kinds(answers) == ["error/paused", "not_started/after_error"]
        assert answers[0]["error"]["retryable"] is True
        assert block(c, 1, 67, 0) == AIR and block(c, 2, 67, 0) == AIR
    finally:
        c.ok("resume", {"reason": "checked"})
    assert kinds(many(c, *second)) == ["applied", "applied"]  # the same ids: nothing was taken before
    assert block(c, 1, 67, 0) == STONE and block(c, 2, 67, 0) == STONE


def test_batch_cancel_then_a_request_of_that_operation_starts_nothing(world_host):
    c = Client(world_host)
    epoch = c.ok("world_info")["epoch"]
    assert c.ok("batch_cancel", {"operationId": "op-cancelled"}) == {"operationId": "op-cancelled", "cancelled": True}
    answers = many(
        c,
        batch("k1", [(0, 68, 0, AIR, STONE)], epoch, op="op-cancelled"),
        batch("k2", [(1, 68, 0, AIR, STONE)], epoch, op="op-cancelled"),
    )
    assert kinds(answers) == ["not_started/cancelled", "not_started/cancelled"]
    assert block(c, 0, 68, 0) == AIR and block(c, 1, 68, 0) == AIR
    # another operation is not affected
    assert kinds(many(c, batch("k3", [(2, 68, 0, AIR, STONE)], epoch, op="op-other"))) == ["applied"]
    c.err("batch_cancel", {"operationId": ""}, 400, "invalid_request")
    c.err("batch_cancel", {}, 400, "invalid_request")


def test_a_replayed_request_answers_replayed_for_each(world_host):
    c = Client(world_host)
    epoch = c.ok("world_info")["epoch"]
    req = [batch(f"r{i}", [(i, 69, 0, AIR, STONE), (i, 69, 1, AIR, GLASS)], epoch) for i in range(3)]
    first = many(c, *req)
    assert kinds(first) == ["applied"] * 3 and all(a["result"]["replayed"] is False for a in first)
    again = many(c, *req)
    assert kinds(again) == ["applied"] * 3
    assert [a["result"]["replayed"] for a in again] == [True, True, True]
    assert [a["result"]["written"] for a in again] == [a["result"]["written"] for a in first] == [2, 2, 2]
    # a known id with other content is refused as batch_apply refuses it
    reused = batch("r1", [(1, 69, 0, AIR, GLASS)], epoch)
    answers = many(c, reused, batch("r9", [(9, 69, 0, AIR, STONE)], epoch))
    assert kinds(answers) == ["error/invalid_request", "not_started/after_error"]
    same_error(answers[0], c.err("batch_apply", reused, 400, "invalid_request"))
    assert block(c, 1, 69, 0) == STONE and block(c, 9, 69, 0) == AIR


def test_request_level_refusals_take_nothing(world_host):
    c = Client(world_host)
    epoch = c.ok("world_info")["epoch"]
    one = batch("q1", [(0, 70, 0, AIR, STONE)], epoch)
    c.err("batch_apply_many", {"batches": []}, 400, "invalid_request")
    c.err("batch_apply_many", {}, 400, "invalid_request")
    seventeen = [batch(f"q{i}", [(i, 70, 1, AIR, STONE)], epoch) for i in range(17)]
    c.err("batch_apply_many", {"batches": seventeen}, 413, "budget_exceeded")
    c.err(
        "batch_apply_many",
        {"batches": [one, batch("q2", [(1, 70, 0, AIR, STONE)], epoch), one]},
        400,
        "invalid_request",
    )
    assert block(c, 0, 70, 0) == AIR and block(c, 0, 70, 1) == AIR and block(c, 1, 70, 0) == AIR
    # the same batches are then taken as new (nothing of them was recorded)
    assert [a["result"]["replayed"] for a in many(c, one)] == [False]
    c.err("batch_apply_many", {"batches": [one]}, 403, "permission_denied", token=world_host.tokens["admin"])
    c.err("batch_cancel", {"operationId": "x"}, 403, "permission_denied", token=world_host.tokens["admin"])
    sixteen = [batch(f"s{i}", [(i, 71, 0, AIR, STONE)], epoch) for i in range(16)]
    assert kinds(many(c, *sixteen)) == ["applied"] * 16
