"""batch_apply's params read straight from JSON (batchparams) and the host's checks of a batch on
its tuples: the same batch as the message parser gives, every other value left to that parser
(the same structured error over HTTP), the first refused entry refused as before, and the
content hashes of older logs still replaying."""

from __future__ import annotations

import copy
import json

import pytest
from fastapi.testclient import TestClient
from google.protobuf import json_format
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import WORLD_XZ_LIMIT
from mcb_rpc import pbjson
from mcb_rpc.tokens import TokenTable
from mcb_world_host.batchparams import Batch, parse_batch, parse_many
from mcb_world_host.host import Host
from mcb_world_host.server import create_app
from mcb_world_host.world import World

AIR, STONE, GLASS = "minecraft:air", "minecraft:stone", "minecraft:glass"
I32 = 2**31


def entry(x=0, y=64, z=0, expected=AIR, desired=STONE) -> dict:
    return {"x": x, "y": y, "z": z, "expected": expected, "desired": desired}


GOOD = [
    {"batchId": "b", "worldEpoch": 1, "entries": [entry(), entry(x=1, desired=GLASS)]},
    {"batch_id": "b", "world_epoch": 4_294_967_295, "operation_id": "op", "entries": [entry(-I32, I32 - 1, 5)]},
    {"batchId": "b", "operationId": "ö-op", "entries": [{"x": 3}, {}], "dependencies": [{"y": 2, "expected": "ü"}]},
    {"entries": []},
    {},
    {"batchId": "", "worldEpoch": 0, "entries": [entry(expected='minecraft:chest{"Items":[]}', desired="\u00e9")]},
]

# each one value the message parser alone decides on (it may take it, as "1" for an integer, or refuse it)
ODD_ENTRY_VALUES = [
    ("x", "1"),
    ("x", 1.0),
    ("x", True),
    ("y", None),
    ("z", I32),
    ("x", -I32 - 1),
    ("expected", 5),
    ("desired", None),
    ("desired", ["minecraft:stone"]),
    ("expected", "\ud800"),
    ("unknown", 1),
]
ODD_PARAMS = [
    {"batchId": "b", "batch_id": "b", "entries": [entry()]},
    {"batchId": "b", "worldEpoch": -1, "entries": [entry()]},
    {"batchId": "b", "worldEpoch": 2**32, "entries": [entry()]},
    {"batchId": "b", "worldEpoch": "3", "entries": [entry()]},
    {"batchId": "b", "worldEpoch": False, "entries": [entry()]},
    {"batchId": 7, "entries": [entry()]},
    {"batchId": "\udfff", "entries": [entry()]},
    {"batchId": "b", "operationId": None, "entries": [entry()]},
    {"batchId": "b", "entries": None},
    {"batchId": "b", "entries": {"x": 1}},
    {"batchId": "b", "entries": [entry(), "x"]},
    {"batchId": "b", "entries": [entry(), None]},
    {"batchId": "b", "entries": [entry()], "dependencies": [{"x": "0"}]},
    {"batchId": "b", "entries": [entry()], "extra": 1},
    ["not", "an", "object"],
]


def odd_entries() -> list[dict]:
    out = []
    for key, value in ODD_ENTRY_VALUES:
        e = entry(x=2)
        e[key] = value
        out.append({"batchId": "b", "worldEpoch": 1, "entries": [entry(), e]})
    return out


def message_batch(params) -> Batch:
    return Batch.of(pbjson.parse(params, world_pb2.BatchApplyParams))


@pytest.mark.parametrize("params", GOOD)
def test_the_fast_reader_reads_the_batch_the_message_holds(params):
    got = parse_batch(copy.deepcopy(params))
    assert got is not None
    assert got == message_batch(params)
    assert got == Batch.of(json_format.ParseDict(params, world_pb2.BatchApplyParams()))
    assert got.message() == pbjson.parse(params, world_pb2.BatchApplyParams)
    assert parse_many({"batches": [params, params]}) == [got, got]


@pytest.mark.parametrize("params", ODD_PARAMS + odd_entries())
def test_every_other_value_is_left_to_the_message_parser(params):
    assert parse_batch(params) is None
    assert parse_many({"batches": [GOOD[0], params]}) is None


@pytest.mark.parametrize(
    "params", [{"batches": [GOOD[0]], "x": 1}, {"batches": None}, {"batches": GOOD[0]}, [GOOD[0]], {"batch": []}]
)
def test_a_many_request_of_another_shape_is_left_to_the_message_parser(params):
    assert parse_many(params) is None


def test_the_content_hash_is_the_content_without_the_id():
    a = message_batch(GOOD[0])
    assert a.content_hash() == message_batch({**GOOD[0], "batchId": "other"}).content_hash()
    for change in ({"worldEpoch": 2}, {"operationId": "x"}, {"entries": [entry()]}, {"dependencies": [{"x": 1}]}):
        assert message_batch({**GOOD[0], **change}).content_hash() != a.content_hash(), change
    swapped = {**GOOD[0], "entries": list(reversed(GOOD[0]["entries"]))}
    assert message_batch(swapped).content_hash() != a.content_hash()


# -- over HTTP -------------------------------------------------------------------------------------


@pytest.fixture
def world(tmp_path, registry):
    w = World.create_flat(tmp_path / "w", registry, pregen=(-16, -16, 15, 15))
    yield w
    w.close()


@pytest.fixture
def client(world):
    app = create_app(Host(world), TokenTable({"service": "tok"}))
    with TestClient(app, headers={"Authorization": "Bearer tok"}) as c:
        yield c


def rpc(client, method: str, params) -> dict:
    body = json.dumps({"method": method, "params": params, "requestId": "r"})  # a lone surrogate as its \\u escape
    return client.post("/v1/rpc", content=body, headers={"Content-Type": "application/json"}).json()


def test_over_http_a_batch_is_applied_and_replayed(client, world):
    params = {"batchId": "h1", "worldEpoch": world.meta.epoch, "entries": [entry(x=0), entry(x=1, desired=GLASS)]}
    first = rpc(client, "batch_apply", params)
    assert first["ok"] and first["result"]["status"] == "applied" and first["result"]["written"] == 2
    again = rpc(client, "batch_apply", params)
    assert again["result"]["replayed"] is True
    many = rpc(client, "batch_apply_many", {"batches": [params, {**params, "batchId": "h2", "entries": [entry(x=2)]}]})
    assert [a["outcome"] for a in many["result"]["answers"]] == ["answered", "answered"]
    assert [a["result"].get("replayed", False) for a in many["result"]["answers"]] == [True, False]
    assert world.get_blocks([(0, 64, 0), (1, 64, 0), (2, 64, 0)]) == [STONE, GLASS, STONE]


@pytest.mark.parametrize("params", ODD_PARAMS[:-1] + odd_entries())
def test_over_http_an_odd_value_gets_the_message_parsers_answer(client, world, params):
    """The answer the host gave before the fast reader: the message parser's error, or, for a value
    it takes (an integer as a string), the batch it reads."""
    params = json.loads(json.dumps(params))  # what a request can carry
    try:
        msg = pbjson.parse(params, world_pb2.BatchApplyParams)
    except json_format.ParseError:
        msg = None
    for method, body in (("batch_apply", params), ("batch_apply_many", {"batches": [params]})):
        got = rpc(client, method, body)
        if msg is None:
            assert got["ok"] is False and got["error"]["code"] == "invalid_request", got
            assert got["error"]["message"].startswith(f"{method}: "), got
        else:
            assert got["ok"] is True or got["error"]["code"] != "internal", got


# -- the host's checks of a batch --------------------------------------------------------------------


def first_refusal(world: World, entries) -> tuple[str, str] | None:
    """What batch_apply refuses ``entries`` with, checked entry by entry in order (the rules of
    docs/world-protocol.md): a position twice, beyond the border, a missing state, a state the
    host does not write."""
    seen = set()
    for x, y, z, ex, de in entries:
        if (x, y, z) in seen:
            return ErrorCode.INVALID_REQUEST, "appears twice"
        seen.add((x, y, z))
        if abs(x) > WORLD_XZ_LIMIT or abs(z) > WORLD_XZ_LIMIT:
            return ErrorCode.OUT_OF_BOUNDS, "beyond the world border"
        if not ex or not de:
            return ErrorCode.INVALID_REQUEST, "needs both"
        try:
            world.canonical_expected(ex)
            world.canonical_desired(de)
        except McbError as err:
            return err.code, err.message
    return None


FAR = WORLD_XZ_LIMIT + 1
REFUSED = [
    [(0, 70, 0, AIR, STONE), (0, 70, 0, AIR, GLASS)],
    [(0, 70, 0, AIR, "not_a_block"), (0, 70, 0, AIR, STONE)],
    [(0, 70, 0, AIR, STONE), (1, 70, 0, AIR, "not_a_block"), (0, 70, 0, AIR, GLASS)],
    [(0, 70, 0, AIR, STONE), (1, 70, 0, AIR, 'minecraft:chest{"unsupported":1}'), (FAR, 70, 0, AIR, STONE)],
    [(0, 70, 0, "", STONE), (FAR, 70, 0, AIR, STONE)],
    [(0, 70, 0, AIR, STONE), (0, 70, -FAR, AIR, STONE), (1, 70, 0, AIR, "")],
    [(0, 70, 0, AIR, STONE), (1, 70, 0, AIR, ""), (0, 70, 0, AIR, "not_a_block")],
    [(0, 70, 0, AIR, STONE), (FAR, 70, 0, AIR, STONE), (FAR, 70, 0, AIR, STONE)],
    [(1, 70, 0, AIR, STONE), (2, 70, 0, AIR, "not_a_block"), (3, 70, 0, AIR, "minecraft:nope")],
    [(1, 70, 0, AIR, STONE), (2, 70, 0, AIR, "minecraft:stone[bogus=1]")],
    [(0, 70, 0, AIR, STONE), (FAR, 70, 0, AIR, STONE)],
    [(0, 70, 0, AIR, STONE), (-FAR, 70, 0, AIR, STONE)],
    [(0, 70, 0, AIR, STONE), (0, 70, FAR, AIR, STONE)],
    [(0, 70, -FAR, AIR, STONE)],
    [(0, 70, 0, AIR, STONE), (1, 70, 0, "", STONE)],
    [(0, 70, 0, AIR, STONE), (1, 70, 0, AIR, "")],
]


@pytest.mark.parametrize("entries", REFUSED)
def test_the_first_refused_entry_is_refused_as_before(world, entries):
    want = first_refusal(world, entries)
    assert want is not None
    b = Batch("r", world.meta.epoch, list(entries))
    with pytest.raises(McbError) as ei:
        Host(world).batch_apply(b)
    assert ei.value.code == want[0]
    assert want[1] in ei.value.message
    assert world.get_blocks([(x, 70, 0) for x in range(4)]) == [AIR] * 4  # nothing written


def test_states_are_canonical_in_the_checked_batch(world):
    host = Host(world)
    res = host.batch_apply(Batch("c1", world.meta.epoch, [(0, 70, 0, "air", "stone"), (1, 70, 0, "cave_air", "glass")]))
    assert (res.status, res.written) == ("applied", 2)
    assert world.get_blocks([(0, 70, 0), (1, 70, 0)]) == [STONE, GLASS]
    assert host.batch_apply(Batch("c2", world.meta.epoch, [(0, 70, 0, "stone", "minecraft:stone")])).already == 1


# -- replays of batches logged by older hosts ------------------------------------------------------


@pytest.mark.parametrize("form", ["pb", "legacy"])
def test_a_batch_logged_with_an_older_hash_still_replays(world, form):
    host = Host(world)
    params = {"batchId": "old", "worldEpoch": world.meta.epoch, "operationId": "op", "entries": [entry(y=70)]}
    params["dependencies"] = [{"x": 5, "y": 70, "expected": AIR}]
    old_message = pbjson.parse(params, world_pb2.BatchApplyParams)  # what an older host hashed
    digest = Host._content_hash(old_message) if form == "pb" else Host._legacy_content_hash(old_message)
    assert not digest.startswith("j1:")
    b = parse_batch(params)
    assert b is not None
    answer = world_pb2.BatchApplyResult(batch_id="old", status="applied", written=1)
    with world.lock:
        world.apply([(0, 70, 0, AIR, STONE)])
        t = world.log_batch("old", digest, "op", [(0, 70, 0, AIR, STONE)], pbjson.to_json(answer))
    world.wait_durable(t)
    again = host.batch_apply(b)
    assert again.replayed and again.written == 1
    assert host.batch_apply(old_message).replayed
    with pytest.raises(McbError) as ei:
        host.batch_apply(Batch("old", world.meta.epoch, [(0, 70, 0, AIR, STONE)], operation_id="op"))  # no dependency
    assert ei.value.code == ErrorCode.INVALID_REQUEST and "already used" in ei.value.message


def test_section_revisions_count_every_block_written(world):
    host = Host(world)
    epoch = world.meta.epoch
    a = host.batch_apply(
        Batch(
            "r1",
            epoch,
            [(0, 70, 0, AIR, STONE), (1, 70, 0, AIR, STONE), (0, 70, -16, AIR, STONE), (-1, 70, 0, AIR, AIR)],
        )
    )
    assert (a.written, a.already) == (3, 1)
    assert [(r.cx, r.sy, r.cz, r.revision) for r in a.revisions] == [(0, 4, -1, 1), (0, 4, 0, 2)]
    b = host.batch_apply(Batch("r2", epoch, [(2, 70, 0, AIR, STONE), (-1, 70, 0, AIR, GLASS)]))
    assert [(r.cx, r.sy, r.cz, r.revision) for r in b.revisions] == [(-1, 4, 0, 1), (0, 4, 0, 3)]


def test_get_blocks_reads_what_get_block_reads(world):
    """Across chunks and sections, absent sections (air) and a block entity's data."""
    furnace = 'minecraft:furnace[facing=south,lit=false]{"items":[{"count":8,"id":"minecraft:coal","slot":1}]}'
    host = Host(world)
    res = host.batch_apply(Batch("g1", world.meta.epoch, [(3, 70, 3, AIR, furnace), (-1, 300, -1, AIR, GLASS)]))
    assert res.status == "applied"
    pos = [(x, y, z) for y in (-64, -60, -1, 63, 70, 300, 319) for z in (-1, 3, 15) for x in (-16, -1, 0, 3, 15)]
    got = world.get_blocks(pos)
    assert got == [world.get_block(*p) for p in pos]
    assert got[pos.index((3, 70, 3))].startswith("minecraft:furnace[facing=south,lit=false]{")
    assert got[pos.index((-1, 300, -1))] == GLASS and got[pos.index((0, 319, 15))] == AIR
