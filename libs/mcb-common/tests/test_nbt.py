"""NBT codec: every tag type, modified UTF-8, byte-identical round trips of real files."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from mcb_common import nbt

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures"
needs_fixtures = pytest.mark.skipif(
    not FIXTURES.is_dir(), reason=f"third-party fixtures not present at {FIXTURES} (CI provides ../shared/fixtures)"
)


def every_type() -> nbt.Compound:
    return nbt.Compound(
        b=nbt.Byte(-128),
        s=nbt.Short(-32768),
        i=nbt.Int(2**31 - 1),
        l=nbt.Long(-(2**63)),
        f=nbt.Float(0.10000000149011612),
        d=nbt.Double(1e300),
        ba=nbt.ByteArray(b"\x00\xff\x80"),
        str=nbt.String("héllo\x00wörld 🎉"),
        lst=nbt.List(nbt.INT, [nbt.Int(1), nbt.Int(-2)]),
        empty_end=nbt.List(nbt.END),
        empty_cmp=nbt.List(nbt.COMPOUND),
        nested=nbt.List(nbt.LIST, [nbt.List(nbt.STRING, [nbt.String("a")]), nbt.List(nbt.END)]),
        cmp=nbt.Compound(z=nbt.Byte(1), a=nbt.Byte(2)),
        ia=nbt.IntArray([1, -1, 2**31 - 1]),
        la=nbt.LongArray([0, -1, 2**63 - 1, -(2**63)]),
    )


def test_every_tag_type_round_trips_with_types_kept():
    root = every_type()
    raw = nbt.write(root, "root")
    name, back = nbt.read_named(raw)
    assert name == "root"
    assert nbt.write(back, name) == raw
    for key, value in root.items():
        assert type(back[key]) is type(value), key
        assert back[key] == value, key
    assert list(back["cmp"]) == ["z", "a"]  # key order kept
    assert back["empty_end"].elem_type == nbt.END
    assert back["empty_cmp"].elem_type == nbt.COMPOUND
    assert back["nested"][1].elem_type == nbt.END


def test_byte_layout_is_big_endian_java():
    raw = nbt.write(nbt.Compound(v=nbt.Short(0x0102)), "")
    assert raw == b"\x0a\x00\x00" + b"\x02\x00\x01v\x01\x02" + b"\x00"
    raw = nbt.write(nbt.Compound(a=nbt.LongArray([1])))
    assert raw[3:] == b"\x0c\x00\x01a" + struct.pack(">i", 1) + struct.pack(">q", 1) + b"\x00"


def test_modified_utf8():
    assert nbt.encode_mutf8("\x00") == b"\xc0\x80"
    assert nbt.encode_mutf8("😀") == b"\xed\xa0\xbd\xed\xb8\x80"  # surrogate pair, 3 bytes each
    assert nbt.decode_mutf8(b"\xed\xa0\xbd\xed\xb8\x80") == "😀"
    assert nbt.decode_mutf8(b"a\xc0\x80b") == "a\x00b"
    for s in ["", "plain", "ünïcödé", "\x00\x00", "𝄞 music", "日本語"]:
        assert nbt.decode_mutf8(nbt.encode_mutf8(s)) == s


def test_ints_are_range_checked_and_plain_values_refused():
    with pytest.raises(OverflowError):
        nbt.Byte(128)
    with pytest.raises(OverflowError):
        nbt.Int(2**31)
    with pytest.raises(TypeError, match="wrap it"):
        nbt.write(nbt.Compound(x=5))
    with pytest.raises(TypeError, match="holds a"):
        nbt.write(nbt.Compound(x=nbt.List(nbt.INT, [nbt.Byte(1)])))
    # bool and str are unambiguous
    assert nbt.read(nbt.write(nbt.Compound(t=True, s="x"))) == {"t": 1, "s": "x"}


@pytest.mark.parametrize(
    "bad, fragment",
    [
        (b"", "truncated"),
        (b"\x0a\x00\x00\x01\x00\x01a", "truncated"),
        (b"\x0d\x00\x00", "not NBT"),
        (b"\x0a\x00\x00\x0e\x00\x01a\x00", "unknown NBT tag type 14"),
        (b"\x0a\x00\x00\x00\xff", "trailing"),
        (b"\x0a\x00\x00\x09\x00\x01l\x01\xff\xff\xff\xff\x00", "negative"),
    ],
)
def test_malformed_input_is_a_clear_error(bad, fragment):
    with pytest.raises(nbt.NbtError, match=fragment):
        nbt.read(bad)


def test_depth_limit():
    raw = b"\x0a\x00\x00" + b"\x0a\x00\x01x" * (nbt.MAX_DEPTH + 5) + b"\x00" * (nbt.MAX_DEPTH + 6)
    with pytest.raises(nbt.NbtError, match="deep"):
        nbt.read(raw)


def test_compression_helpers():
    raw = nbt.write(every_type())
    assert nbt.decompress(nbt.gzip_bytes(raw)) == raw
    assert nbt.decompress(nbt.zlib_bytes(raw)) == raw
    assert nbt.decompress(raw) == raw
    assert nbt.read_compressed(nbt.gzip_bytes(raw)) == nbt.read(raw)


# ---- real files ----------------------------------------------------------------------------
def _gz_files() -> list[Path]:
    if not FIXTURES.is_dir():
        return []
    return sorted(
        [
            *FIXTURES.glob("schem/*.schem"),
            *FIXTURES.glob("structure/*.nbt"),
            *FIXTURES.glob("world/**/level.dat"),
            *FIXTURES.glob("world/leveldat_only/*.dat"),
        ]
    )


def _region_files() -> list[Path]:
    return sorted(FIXTURES.glob("world/**/*.mca")) if FIXTURES.is_dir() else []


@pytest.mark.fixtures
@needs_fixtures
@pytest.mark.parametrize("path", _gz_files(), ids=lambda p: p.name)
def test_fixture_file_round_trips_byte_identical(path: Path):
    raw = nbt.decompress(path.read_bytes())
    name, value = nbt.read_named(raw)
    assert nbt.write(value, name) == raw


@pytest.mark.fixtures
@needs_fixtures
@pytest.mark.parametrize("path", _region_files(), ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_chunk_of_fixture_regions_round_trips(path: Path):
    data = path.read_bytes()
    count = 0
    for i in range(1024):
        (entry,) = struct.unpack_from(">I", data, i * 4)
        off, n = entry >> 8, entry & 0xFF
        if off < 2 or n == 0:
            continue
        length, ctype = struct.unpack_from(">IB", data, off * 4096)
        assert ctype == 2, f"fixture chunk {i} uses compression {ctype}"
        raw = zlib.decompress(data[off * 4096 + 5 : off * 4096 + 4 + length])
        name, value = nbt.read_named(raw)
        assert nbt.write(value, name) == raw
        count += 1
    assert count >= 1
