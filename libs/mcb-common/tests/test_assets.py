"""The asset library folder: names, traversal, symlinks, bad files in listings, paging, writes."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from mcb_common import schematic as S
from mcb_common.assets import AssetLibrary, parse_asset_id
from mcb_common.errors import ErrorCode, McbError

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO.parent / "shared" / "fixtures"


def _small(name: str = "") -> bytes:
    s = S.from_region(
        (2, 1, 1), ["minecraft:stone", "minecraft:air"], [0, 1], offset=(0, 0, 0), data_version=4671, name=name
    )
    return S.write_bytes(s)


@pytest.fixture
def lib(tmp_path: Path) -> AssetLibrary:
    root = tmp_path / "assets"
    root.mkdir()
    return AssetLibrary(root)


@pytest.mark.parametrize(
    "bad",
    [
        "../x",
        "a/b",
        "/etc/passwd",
        "..",
        ".hidden",
        "-x",
        "x" * 65,
        "https://example.com/a.schem",
        "a b",
        "a.schem.schem",
        "C:\\x",
        "",
        "a\x00b",
        "x.zip",
    ],
)
def test_asset_ids_refuse_paths_and_urls(bad: str) -> None:
    with pytest.raises(McbError) as ei:
        parse_asset_id(bad)
    assert ei.value.code == ErrorCode.INVALID_REQUEST


def test_asset_id_forms() -> None:
    assert parse_asset_id("House_1") == ("House_1.schem", "schem")
    assert parse_asset_id("House_1.schem") == ("House_1.schem", "schem")
    assert parse_asset_id("farm.nbt") == ("farm.nbt", "nbt")


def test_write_then_list_and_read(lib: AssetLibrary) -> None:
    e = lib.write("tower", _small("tower"))
    assert e["valid"] and e["asset_id"] == "tower" and e["width"] == 2 and e["block_count"] == 1
    assert set(e) >= {
        "asset_id",
        "name",
        "width",
        "height",
        "length",
        "block_count",
        "data_version",
        "offset",
        "sha256",
        "bytes",
    }
    data, kind, meta = lib.read("tower")
    assert kind == "schem" and len(data) == meta["bytes"]
    with pytest.raises(McbError, match="already exists"):
        lib.write("tower", _small())
    with pytest.raises(McbError):
        lib.write("../escape", _small())
    assert not (lib.root.parent / "escape.schem").exists()
    assert [p.name for p in lib.root.iterdir()] == ["tower.schem"]  # no temp files left


def test_bad_files_are_listed_not_fatal(lib: AssetLibrary) -> None:
    lib.write("good", _small())
    (lib.root / "corrupt.schem").write_bytes(b"\x1f\x8b garbage")
    (lib.root / "truncated.schem").write_bytes(_small()[:20])
    (lib.root / "bomb.schem").write_bytes(gzip.compress(b"\0" * (32 * 1024 * 1024), 9))
    (lib.root / "big.schem").write_bytes(os.urandom(S.MAX_COMPRESSED + 1))
    (lib.root / "bad name.schem").write_bytes(_small())
    (lib.root / "notes.txt").write_text("ignored")
    listing = lib.list()
    by_id = {a["asset_id"]: a for a in listing["assets"]}
    assert set(by_id) == {"good", "corrupt", "truncated", "bomb", "big", "bad name"}
    assert by_id["good"]["valid"]
    for name, text in [
        ("corrupt", "gzip"),
        ("truncated", "truncated"),
        ("bomb", "decompressed"),
        ("big", "limit"),
        ("bad name", "not a valid asset name"),
    ]:
        assert not by_id[name]["valid"] and text in by_id[name]["reason"], (name, by_id[name])
    with pytest.raises(McbError) as ei:
        lib.read("bomb")
    assert "decompressed" in ei.value.message


def test_symlinks_are_refused(lib: AssetLibrary, tmp_path: Path) -> None:
    outside = tmp_path / "outside.schem"
    outside.write_bytes(_small())
    (lib.root / "link.schem").symlink_to(outside)
    entry = {a["asset_id"]: a for a in lib.list()["assets"]}["link"]
    assert not entry["valid"] and "symbolic link" in entry["reason"]
    with pytest.raises(McbError) as ei:
        lib.read("link")
    assert ei.value.code == ErrorCode.PERMISSION_DENIED
    # a symlink under the target name blocks an export rather than writing through it
    with pytest.raises(McbError, match="already exists"):
        lib.write("link", _small())
    assert outside.read_bytes() == _small() or outside.stat().st_size > 0


def test_query_and_paging(lib: AssetLibrary) -> None:
    for i in range(45):
        lib.write(f"{'Tower' if i % 3 == 0 else 'house'}_{i:02d}", _small())
    first = lib.list()
    assert first["total"] == 45 and len(first["assets"]) == 20 and first["next_cursor"]
    seen = [a["asset_id"] for a in first["assets"]]
    cursor = first["next_cursor"]
    while cursor:
        page = lib.list(cursor=cursor)
        seen += [a["asset_id"] for a in page["assets"]]
        cursor = page.get("next_cursor")
    assert len(seen) == 45 == len(set(seen))
    towers = lib.list(query="TOWER")
    assert towers["total"] == 15 and all("tower" in a["asset_id"].lower() for a in towers["assets"])
    with pytest.raises(McbError):
        lib.list(cursor="../../etc")


def test_missing_asset_and_folder(tmp_path: Path) -> None:
    lib = AssetLibrary(tmp_path / "nope")
    assert lib.list() == {"assets": [], "total": 0}
    with pytest.raises(McbError) as ei:
        lib.read("ghost")
    assert ei.value.code == ErrorCode.NOT_FOUND


def test_structure_files_are_read_only_assets(lib: AssetLibrary) -> None:
    if not FIXTURES.is_dir():
        pytest.skip(f"third-party fixtures not present at {FIXTURES}")
    (lib.root / "farm.nbt").write_bytes((FIXTURES / "structure" / "fabric_cactus_farm.nbt").read_bytes())
    entry = lib.list(query="farm")["assets"][0]
    assert entry["asset_id"] == "farm.nbt" and entry["read_only"] and entry["valid"] and entry["format"] == "structure"
    data, kind, _ = lib.read("farm.nbt")
    assert kind == "nbt"
    with pytest.raises(McbError):
        lib.write("farm.nbt", data)  # names with a suffix are not writable names
