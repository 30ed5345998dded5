import json
import zlib

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


@pytest.mark.parametrize("xyz", [[0, 64, 0, -1, -64, 300], [True, 64, 0, 1, 64, 0], [0.5, 64, 0, 1, 64, 0]])
def test_plan_bytes_are_the_compact_sorted_json_of_the_plan(xyz):
    """The fast path for the long int lists writes exactly what json.dumps writes (the plan's
    hash is the sha256 of these bytes); anything but plain ints goes through json.dumps."""
    p = Plan(
        palette=["minecraft:air", 'a"b\\\u00fc'],
        xyz=xyz,
        desired=[1, 0],
        base=[0, 1],
        dependencies=[(1, -2, 3, "minecraft:stone")],
        world_uuid="w",
        world_epoch=7,
        recipe_hash="r",
    )
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
    assert p.encode() == json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()


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
