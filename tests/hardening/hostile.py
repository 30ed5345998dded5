"""Hostile inputs of issue 12, shared by the hardening tests and bench/hostile_latency.py.

* ``hostile_files()``: schematic/structure files that must be refused with a clear reason
  (truncated, gzip bomb, deep nesting, huge dimensions, bad varints, palette index 2^31,
  wrong versions, uncompressed NBT, wrong field types).
* ``hostile_recipes()``: build_prepare arguments over the structural limits.
"""

from __future__ import annotations

import gzip
from typing import Any

from mcb_common import nbt

DATA_VERSION = 3953  # Minecraft 1.21


def sponge_v3(
    width: int = 1,
    height: int = 1,
    length: int = 1,
    data: bytes = b"\x00",
    palette: dict[str, int] | None = None,
    data_version: int = DATA_VERSION,
    version: int = 3,
    **extra: Any,
) -> bytes:
    """Uncompressed NBT of a Sponge v3 schematic whose fields are exactly what is given."""
    pal = nbt.Compound((k, nbt.Int(v)) for k, v in (palette or {"minecraft:stone": 0}).items())
    sch = nbt.Compound(
        Version=nbt.Int(version),
        DataVersion=nbt.Int(data_version),
        Width=nbt.Short(width - 0x10000 if width > 0x7FFF else width),
        Height=nbt.Short(height - 0x10000 if height > 0x7FFF else height),
        Length=nbt.Short(length - 0x10000 if length > 0x7FFF else length),
        Blocks=nbt.Compound(Palette=pal, Data=nbt.ByteArray(data)),
    )
    sch.update(extra)
    return nbt.write(nbt.Compound(Schematic=sch))


def gz(raw: bytes) -> bytes:
    return gzip.compress(raw, mtime=0)


def deep_nbt(levels: int = 600) -> bytes:
    """A compound nested ``levels`` deep: 46 bytes gzipped for 600 levels."""
    return b"\x0a\x00\x00" + b"\x0a\x00\x01a" * levels + b"\x00" * (levels + 1)


def hostile_files() -> dict[str, tuple[str, bytes]]:
    """name → (kind 'schem'|'nbt', file bytes); every one must be refused, none is `internal`."""
    good = gz(sponge_v3())
    structure_bad_types = nbt.write(
        nbt.Compound(
            DataVersion=nbt.Int(DATA_VERSION),
            size=nbt.List(nbt.INT, [nbt.Int(1)] * 3),
            palette=nbt.List(nbt.STRING, [nbt.String("minecraft:stone")]),  # entries must be compounds
            blocks=nbt.List(
                nbt.COMPOUND, [nbt.Compound(pos=nbt.List(nbt.INT, [nbt.Int(0)] * 3), state=nbt.String("zero"))]
            ),
        )
    )
    return {
        "empty": ("schem", b""),
        "not-gzip": ("schem", b"hello, this is not a schematic"),
        "truncated": ("schem", good[: len(good) // 2]),
        "gzip-bomb": ("schem", gz(b"\x00" * (16 * 1024 * 1024))),
        "deep-600": ("schem", gz(deep_nbt(600))),
        "deep-600-structure": ("nbt", gz(deep_nbt(600))),
        "huge-dimensions": ("schem", gz(sponge_v3(65535, 65535, 65535, data=b"\x00" * 64))),
        "bad-varint-long": ("schem", gz(sponge_v3(data=b"\xff" * 10))),
        "bad-varint-unfinished": ("schem", gz(sponge_v3(data=b"\x80"))),
        "palette-index-2-31": ("schem", gz(sponge_v3(data=bytes([0x80, 0x80, 0x80, 0x80, 0x08])))),
        "palette-value-2-31": ("schem", gz(sponge_v3(palette={"minecraft:stone": 2**31 - 1}))),
        "data-version-negative": ("schem", gz(sponge_v3(data_version=-1))),
        "data-version-newer": ("schem", gz(sponge_v3(data_version=2**31 - 1))),
        "sponge-version-99": ("schem", gz(sponge_v3(version=99))),
        "uncompressed-nbt": ("schem", sponge_v3()),
        "offset-wrong-type": ("schem", gz(sponge_v3(Offset=nbt.Compound(x=nbt.Int(1))))),
        "list-length-2-31": ("schem", gz(b"\x0a\x00\x00\x09\x00\x01L\x01\x7f\xff\xff\xff")),
        "structure-wrong-types": ("nbt", gz(structure_bad_types)),
    }


def box_op(i: int = 0) -> dict[str, Any]:
    return {
        "type": "box",
        "min": {"x": 0, "y": 64, "z": i % 8},
        "max": {"x": 1, "y": 65, "z": i % 8},
        "block": "minecraft:stone",
    }


def recipe_of(n_ops: int) -> dict[str, Any]:
    return {"version": 1, "operations": [box_op(i) for i in range(n_ops)]}


def deep_recipe(levels: int) -> dict[str, Any]:
    """repeat inside repeat ``levels`` deep (each level adds 2 JSON levels)."""
    op: dict[str, Any] = box_op()
    for _ in range(levels):
        op = {"type": "repeat", "count": 1, "offset": {"x": 0, "y": 0, "z": 0}, "operations": [op]}
    return {"version": 1, "operations": [op]}


def hostile_recipes() -> dict[str, dict[str, Any]]:
    """name → build_prepare arguments that must be refused (budget_exceeded)."""
    return {
        "ops-9000": {"recipe": recipe_of(9000)},
        "ops-1024": {"recipe": recipe_of(1024)},  # at the structural cap: validated, then refused
        "nested-100": {"recipe": deep_recipe(100)},
    }
