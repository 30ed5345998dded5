import zlib

import pytest
from mcb_common.errors import McbError
from mcb_journal.blobs import BlobStore
from mcb_journal.plans import Plan


def make_plan() -> Plan:
    return Plan(palette=["minecraft:air", "minecraft:stone"], xyz=[0, 64, 0, 1, 64, 0],
                desired=[1, 1], base=[0, 1], dependencies=[], world_uuid="w", world_epoch=1,
                recipe_hash="r")


def test_plan_roundtrip_and_determinism():
    a, b = make_plan().encode(), make_plan().encode()
    assert a == b
    p = Plan.decode(a)
    assert p.entries(0, 10) == [(0, 64, 0, "minecraft:air", "minecraft:stone"),
                                (1, 64, 0, "minecraft:stone", "minecraft:stone")]
    assert p.changed_count() == 1


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
