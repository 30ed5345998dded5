import json
import zlib

import numpy as np
import pytest
from mcb_common.errors import McbError
from mcb_journal.blobs import BlobStore
from mcb_journal.plans import Plan


def make_plan() -> Plan:
    return Plan(
        palette=["minecraft:air", "minecraft:stone"],
        xyz=[0, 64, 0, 1, 64, 0],
        desired=[1, 1],
        base=[0, 1],
        dependencies=[],
        world_uuid="w",
        world_epoch=1,
        recipe_hash="r",
    )


def test_plan_roundtrip_and_determinism():
    a, b = make_plan().encode(), make_plan().encode()
    assert a == b
    p = Plan.decode(a)
    assert p.entries(0, 10) == [
        (0, 64, 0, "minecraft:air", "minecraft:stone"),
        (1, 64, 0, "minecraft:stone", "minecraft:stone"),
    ]
    assert p.changed_count() == 1


def _plan(xyz: list, desired: list[int], base: list[int]) -> Plan:
    return Plan(
        palette=["minecraft:air", 'a"b\\\u00fc\nc'],
        xyz=xyz,
        desired=desired,
        base=base,
        dependencies=[(1, -2, 3, "minecraft:stone")],
        world_uuid="w",
        world_epoch=7,
        recipe_hash="r",
    )


@pytest.mark.parametrize(
    "xyz",
    [
        [0, 64, 0, -1, -64, 300],
        [-30_000_000, -2048, 30_000_000, 30_000_000, 2047, -30_000_000],  # deltas past <i4: <i8
        [5, 64, 5, 6, 64, 5, 4, 63, 5, 300, 64, -300],
    ],
)
def test_plan_bytes_are_a_json_line_then_delta_columns_and_decode_back(xyz):
    """mcb.plan.v2: the header line is the compact key-sorted JSON of everything but the columns,
    then x, y, z, desired, base as deltas in the narrowest type (the plan's hash is their sha256)."""
    n = len(xyz) // 3
    p = _plan(xyz, [i % 2 for i in range(n)], [(i + 1) % 2 for i in range(n)])
    raw = p.encode()
    head, _, body = raw.partition(b"\n")
    doc = json.loads(head)
    assert head == json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
    assert doc["format"] == "mcb.plan.v2" and doc["n"] == n and doc["palette"] == p.palette
    assert doc["dependencies"] == [[1, -2, 3, "minecraft:stone"]]
    assert [c for c, _ in doc["cols"]] == ["x", "y", "z", "desired", "base"]
    xs = xyz[0::3]
    want_x = np.diff(np.asarray(xs, dtype=np.int64), prepend=0)
    x_dt = doc["cols"][0][1]
    assert np.frombuffer(body, dtype=x_dt, count=n).tolist() == want_x.tolist()
    fits = [
        dt
        for dt in ("<i1", "<i2", "<i4", "<i8")
        if np.iinfo(dt).min <= want_x.min() <= want_x.max() <= np.iinfo(dt).max
    ]
    assert x_dt == fits[0]
    assert len(body) == sum(n * np.dtype(dt).itemsize for _, dt in doc["cols"])
    back = Plan.decode(raw)
    assert back == p and type(back.xyz[0]) is int
    assert Plan.decode(raw) == back and p.encode() == raw


def test_plans_stored_before_v2_are_still_read():
    """A blob of the JSON format (mcb.plan.v1) decodes to the same plan."""
    p = _plan([0, 64, 0, -1, -64, 300], [1, 0], [0, 1])
    doc = {
        "format": "mcb.plan.v1",
        "palette": p.palette,
        "xyz": p.xyz,
        "desired": p.desired,
        "base": p.base,
        "dependencies": [[1, -2, 3, "minecraft:stone"]],
        "world_uuid": "w",
        "world_epoch": 7,
        "recipe_hash": "r",
    }
    assert Plan.decode(json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()) == p


@pytest.mark.parametrize(
    "mangle",
    [
        lambda raw: raw[:-1],  # a column short
        lambda raw: raw + b"\0",  # a byte left over
        lambda raw: raw.replace(b'"mcb.plan.v2"', b'"mcb.plan.v9"'),
        lambda raw: raw.replace(b'["base",', b'["bass",'),
        lambda raw: raw.partition(b"\n")[0],  # v2 without its columns
    ],
)
def test_malformed_plan_bytes_are_refused(mangle):
    raw = _plan([0, 64, 0, 1, 64, 0], [1, 0], [0, 1]).encode()
    with pytest.raises(ValueError):
        Plan.decode(mangle(raw))


def test_blob_roundtrip(tmp_path):
    store = BlobStore(tmp_path)
    sha = store.put(b"hello")
    assert store.get(sha) == b"hello"
    assert store.put(b"hello") == sha


def test_corrupt_blob_is_refused(tmp_path):
    store = BlobStore(tmp_path)
    sha = store.put(b"hello")
    path = tmp_path / sha[:2] / f"{sha}.zlib"
    path.write_bytes(zlib.compress(b"HELLO"))
    with pytest.raises(McbError) as exc:
        store.get(sha)
    assert "checksum" in exc.value.message
    path.write_bytes(b"not zlib")
    with pytest.raises(McbError) as exc:
        store.get(sha)
    assert exc.value.code == "internal"


def test_missing_blob_is_not_found(tmp_path):
    with pytest.raises(McbError) as exc:
        BlobStore(tmp_path).get("ab" * 32)
    assert exc.value.code == "not_found"
