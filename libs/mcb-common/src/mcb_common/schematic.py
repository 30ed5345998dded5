"""Schematic files: Sponge v2/v3 (``.schem``) read and write, vanilla structure ``.nbt`` read.

Transport-free; the planner (import/export) and the journal (asset listing) call it.
docs/schematics.md is the user-facing description; the rules in short:

* **Reading is bounded.** At most ``MAX_COMPRESSED`` bytes of file, decompressed as a stream
  into at most ``MAX_DECOMPRESSED`` bytes (a gzip bomb stops at the cap and never allocates
  more), at most ``MAX_TAGS`` NBT tags. A truncated gzip stream is an error, never a partial
  read.
* **Model.** A ``Schematic`` is a dense ``width × height × length`` box. ``blocks[i]`` is a
  palette index for position ``i = x + z·W + y·W·L`` (Sponge's and the world protocol's YZX
  order), or ``VOID`` (-1) for "no block here" (structure files leave positions out and may
  use ``minecraft:structure_void``; Sponge files are always dense).
* **Offset.** ``offset`` is where the schematic's minimum corner sits relative to its anchor
  (the paste point). Sponge v3 stores exactly that in ``Offset``. WorldEdit's v2 writer stores
  the absolute copy position in ``Offset`` and the relative one in ``Metadata.WEOffsetX/Y/Z``;
  when those are present they win. Structure files have no offset (0,0,0).
* **Import rules** (``check_import``): refusals with reasons, before anything is placed —
  entities, block entities (unless the caller opts in to leave them out, then each left-out
  position is listed), biomes, unknown top-level fields, required mods, unknown blocks or
  properties (with suggestions), a DataVersion newer than the world's, more positions than
  the plan limit.
* **Placement** (``placements``): the block at local ``p`` lands at
  ``target + R(p + offset)`` where ``R`` turns 0/90/180/270° clockwise seen from above
  ((x, z) → (−z, x) per quarter turn); block states turn with ``mcb_common.transforms``.
"""

from __future__ import annotations

import json
import time
import zlib
from array import array
from dataclasses import dataclass, field
from typing import Any

from . import nbt
from .errors import ErrorCode, McbError

MAX_COMPRESSED = 1024 * 1024
MAX_DECOMPRESSED = 4 * 1024 * 1024
MAX_TAGS = 1_000_000
# Nesting of compounds/lists in a schematic (real files use < 10; NBT's own cap is 512).
MAX_NBT_DEPTH = 64
MAX_DATA_VERSION = 2**31 - 1
VOID = -1
AIR = "minecraft:air"
STRUCTURE_VOID = "minecraft:structure_void"

FORMAT_V2 = "sponge-v2"
FORMAT_V3 = "sponge-v3"
FORMAT_STRUCTURE = "structure"

V2_FIELDS = frozenset(
    {
        "Version",
        "DataVersion",
        "Metadata",
        "Width",
        "Height",
        "Length",
        "Offset",
        "PaletteMax",
        "Palette",
        "BlockData",
        "BlockEntities",
        "TileEntities",
        "Entities",
        "BiomePalette",
        "BiomePaletteMax",
        "BiomeData",
    }
)
V3_FIELDS = frozenset(
    {"Version", "DataVersion", "Metadata", "Width", "Height", "Length", "Offset", "Blocks", "Biomes", "Entities"}
)
V3_BLOCKS_FIELDS = frozenset({"Palette", "Data", "BlockEntities"})
STRUCTURE_FIELDS = frozenset({"DataVersion", "size", "palette", "palettes", "blocks", "entities", "author"})


def _bad(message: str, **details: Any) -> McbError:
    return McbError(ErrorCode.INVALID_REQUEST, message, details=details)


# ---- bounded decompression ------------------------------------------------------------------
def decompress_capped(data: bytes, max_compressed: int = MAX_COMPRESSED, max_out: int = MAX_DECOMPRESSED) -> bytes:
    """gzip → raw NBT, streaming with a hard output cap. Schematic and structure files are
    gzip-compressed; anything else (uncompressed NBT included) is refused."""
    if len(data) > max_compressed:
        raise McbError(
            ErrorCode.BUDGET_EXCEEDED,
            f"file is {len(data):,} bytes; schematics are limited to {max_compressed:,} bytes compressed",
            details={"bytes": len(data), "limit": max_compressed},
        )
    if not data:
        raise _bad("file is empty")
    if data[:2] != b"\x1f\x8b":
        if data[0] == nbt.COMPOUND:
            raise _bad(
                "uncompressed NBT: .schem and .nbt files are gzip-compressed (they start with 1F 8B); "
                "save it again with a schematic tool"
            )
        raise _bad("not a gzip-compressed NBT file (a .schem/.nbt file starts with 1F 8B)")
    d = zlib.decompressobj(wbits=31)
    out = bytearray()
    view = memoryview(data)
    pos = 0
    step = 64 * 1024
    try:
        while True:
            room = max_out + 1 - len(out)
            if d.unconsumed_tail:
                chunk = d.unconsumed_tail
            elif pos < len(view):
                chunk = bytes(view[pos : pos + step])
                pos += step
            else:
                break
            out += d.decompress(chunk, room)
            if len(out) > max_out:
                raise McbError(
                    ErrorCode.BUDGET_EXCEEDED,
                    f"decompressed NBT is over {max_out:,} bytes; refused (the limit bounds memory)",
                    details={"limit": max_out},
                )
            if d.eof:
                break
    except zlib.error as exc:
        raise _bad(f"corrupt gzip stream: {exc}") from None
    if not d.eof:
        raise _bad("truncated gzip stream: the file ends before the compressed data does")
    if d.unused_data.strip(b"\x00"):
        raise _bad("trailing data after the gzip stream (multi-member gzip is not supported)")
    return bytes(out)


class _BudgetReader(nbt._Reader):
    """The NBT reader with a cap on the number of tags (bounds Python objects, not just bytes)."""

    __slots__ = ("budget",)

    def __init__(self, buf: bytes, budget: int):
        super().__init__(buf)
        self.budget = budget

    def payload(self, t: int, depth: int) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise McbError(ErrorCode.BUDGET_EXCEEDED, f"NBT holds more than {MAX_TAGS:,} tags; refused")
        if depth > MAX_NBT_DEPTH:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED,
                f"NBT is nested more than {MAX_NBT_DEPTH} levels deep; refused",
                details={"limit": "nbt_depth", "max": MAX_NBT_DEPTH},
            )
        return nbt._Reader.payload(self, t, depth)


def read_nbt(raw: bytes, max_tags: int = MAX_TAGS) -> tuple[str, nbt.Compound]:
    r = _BudgetReader(raw, max_tags)
    try:
        t = r.unpack(nbt._S_B)
        if t != nbt.COMPOUND:
            raise _bad(f"NBT root is tag type {t}, expected a Compound")
        name = r.string()
        value = r.payload(t, 0)
    except nbt.NbtError as exc:
        raise _bad(f"corrupt NBT: {exc}") from None
    except RecursionError:
        raise _bad("corrupt NBT: nested too deeply") from None
    if r.pos != len(raw):
        raise _bad(f"corrupt NBT: {len(raw) - r.pos} trailing bytes after the root")
    return name, value


# ---- varints --------------------------------------------------------------------------------
def decode_varints(data: bytes, count: int) -> array:
    """``count`` unsigned LEB128 varints (Sponge block data) → array of ints."""
    if len(data) == count and (not data or max(data) < 0x80):
        return array("i", list(data))  # (array("i", bytes) would reinterpret the raw bytes)
    out = array("i")
    append = out.append
    val = shift = 0
    for b in data:
        val |= (b & 0x7F) << shift
        if b & 0x80:
            shift += 7
            if shift > 28:
                raise _bad("corrupt block data: a varint is longer than 5 bytes")
            continue
        if val > 0x7FFFFFFF:
            raise _bad(f"corrupt block data: palette index {val} is over 2^31-1")
        append(val)
        val = shift = 0
    if shift:
        raise _bad("corrupt block data: it ends inside a varint")
    if len(out) != count:
        raise _bad(f"block data holds {len(out):,} entries; width×height×length is {count:,}")
    return out


def encode_varints(values: Any) -> bytes:
    vals = list(values)
    if not vals or max(vals) < 0x80:
        return bytes(vals)
    out = bytearray()
    for v in vals:
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
    return bytes(out)


# ---- the model ------------------------------------------------------------------------------
@dataclass
class Schematic:
    width: int
    height: int
    length: int
    palette: list[str]
    blocks: array  # palette index per YZX position, VOID = no block
    offset: tuple[int, int, int] = (0, 0, 0)
    data_version: int = 0
    format: str = FORMAT_V3
    name: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    block_entities: list[dict[str, Any]] = field(default_factory=list)  # {pos: (x,y,z), id}
    entities: list[dict[str, Any]] = field(default_factory=list)  # {id, pos}
    biomes: bool = False
    unknown_fields: list[str] = field(default_factory=list)
    required_mods: list[str] = field(default_factory=list)

    @property
    def volume(self) -> int:
        return self.width * self.height * self.length

    def block_count(self) -> int:
        """Positions that hold a block (air included; void excluded)."""
        return sum(1 for b in self.blocks if b != VOID)

    def non_air_count(self) -> int:
        air = {
            i
            for i, s in enumerate(self.palette)
            if s.split("[")[0] in ("minecraft:air", "minecraft:cave_air", "minecraft:void_air")
        }
        return sum(1 for b in self.blocks if b != VOID and b not in air)

    def state_at(self, x: int, y: int, z: int) -> str | None:
        b = self.blocks[x + z * self.width + y * self.width * self.length]
        return None if b == VOID else self.palette[b]

    def states(self) -> list[str | None]:
        """The state of every position in YZX order (None = void) — for comparisons."""
        p = self.palette
        return [None if b == VOID else p[b] for b in self.blocks]


def _int3(v: Any, what: str) -> tuple[int, int, int]:
    try:
        vals = [int(x) for x in v]
    except (TypeError, ValueError):
        raise _bad(f"{what} must be three integers") from None
    if len(vals) != 3:
        raise _bad(f"{what} must be three integers, got {len(vals)}")
    return vals[0], vals[1], vals[2]


def _data_version(v: Any, required: bool) -> int:
    if v is None and not required:
        return 0
    if not isinstance(v, int):
        raise _bad("required field DataVersion is missing or not a number")
    if not 0 <= v <= MAX_DATA_VERSION:
        raise _bad(
            f"DataVersion {int(v)} is not valid (Minecraft's data versions are 0 to {MAX_DATA_VERSION})",
            data_version=int(v),
        )
    return int(v)


def _u16(root: dict, key: str) -> int:
    v = root.get(key)
    if not isinstance(v, int):
        raise _bad(f"required field {key} is missing or not a number")
    return int(v) & 0xFFFF


def _entity_list(items: Any) -> list[dict[str, Any]]:
    out = []
    for e in items or ():
        if not isinstance(e, dict):
            continue
        eid = str(e.get("Id") or e.get("id") or (e.get("nbt") or {}).get("id") or "?")
        pos = e.get("Pos") or e.get("pos") or e.get("blockPos") or ()
        try:
            p = [round(float(v), 2) for v in pos][:3]
        except (TypeError, ValueError):
            p = []
        out.append({"id": eid, "pos": p})
    return out


def _block_entity_list(
    items: Any,
    s_palette: list[str] | None = None,
    blocks: Any = None,
    dims: tuple[int, int, int] | None = None,
    v3: bool = False,
) -> list[dict[str, Any]]:
    """``{pos, id, nbt}`` per block entity; ``nbt`` is its data as plain values (v3: the ``Data``
    compound; v2 and WorldEdit's files: the entry's own keys besides ``Pos``/``Id``)."""
    out = []
    for e in items or ():
        if not isinstance(e, dict):
            continue
        pos = _int3(e.get("Pos") or (), "block entity Pos")
        eid = str(e.get("Id") or e.get("id") or "")
        if not eid and s_palette is not None and dims is not None:
            w, _, ln = dims
            x, y, z = pos
            i = x + z * w + y * w * ln
            if 0 <= i < len(blocks) and blocks[i] != VOID:
                eid = s_palette[blocks[i]].split("[")[0]
        raw = e.get("Data") if v3 else e
        if raw is not None and not isinstance(raw, dict):
            raise _bad(f"block entity at {list(pos)}: Data must be a compound")
        data = {k: v for k, v in nbt.to_plain(raw or {}).items() if k not in ("Pos", "Id", "id", "x", "y", "z")}
        out.append({"pos": pos, "id": eid or "?", "nbt": data})
    return out


def _read_palette(pal: Any, what: str) -> list[str]:
    if not isinstance(pal, dict) or not pal:
        raise _bad(f"{what} is missing or empty")
    n = len(pal)
    out: list[str | None] = [None] * n
    for state, idx in pal.items():
        i = int(idx)
        if not 0 <= i < n or out[i] is not None:
            raise _bad(f"{what} maps {state!r} to index {i}, which is out of range or used twice")
        out[i] = str(state)
    return out  # type: ignore[return-value]


def _check_indices(blocks: array, n: int) -> None:
    if len(blocks) and (max(blocks) >= n or min(blocks) < 0):
        raise _bad(f"block data refers to palette index {max(blocks)} but the palette has {n} entries")


def _from_sponge(root: dict[str, Any], version: int) -> Schematic:
    w, h, ln = _u16(root, "Width"), _u16(root, "Height"), _u16(root, "Length")
    meta = root.get("Metadata") or nbt.Compound()
    if not isinstance(meta, dict):
        raise _bad("Metadata must be a compound")
    offset = _int3(root.get("Offset") or (0, 0, 0), "Offset")
    if version == 2:
        known = V2_FIELDS
        palette = _read_palette(root.get("Palette"), "Palette")
        data = root.get("BlockData")
        be_raw = root.get("BlockEntities", root.get("TileEntities"))
        biomes = "BiomeData" in root or "BiomePalette" in root
        if all(k in meta for k in ("WEOffsetX", "WEOffsetY", "WEOffsetZ")):
            offset = (int(meta["WEOffsetX"]), int(meta["WEOffsetY"]), int(meta["WEOffsetZ"]))
        unknown_inner: list[str] = []
    else:
        known = V3_FIELDS
        blocks_c = root.get("Blocks")
        if not isinstance(blocks_c, dict):
            raise _bad("a Sponge v3 schematic needs a Blocks compound (Palette, Data)")
        palette = _read_palette(blocks_c.get("Palette"), "Blocks.Palette")
        data = blocks_c.get("Data")
        be_raw = blocks_c.get("BlockEntities")
        biomes = "Biomes" in root
        unknown_inner = [f"Blocks.{k}" for k in blocks_c if k not in V3_BLOCKS_FIELDS]
    if not isinstance(data, (bytes, bytearray)):
        raise _bad("block data (BlockData / Blocks.Data) is missing or not a byte array")
    blocks = decode_varints(bytes(data), w * h * ln)
    _check_indices(blocks, len(palette))
    dv = _data_version(root.get("DataVersion"), required=True)
    name = ""
    if isinstance(meta.get("Name"), str):
        name = str(meta["Name"])
    mods = meta.get("RequiredMods") or []
    return Schematic(
        width=w,
        height=h,
        length=ln,
        palette=palette,
        blocks=blocks,
        offset=offset,
        data_version=int(dv),
        format=FORMAT_V2 if version == 2 else FORMAT_V3,
        name=name,
        metadata=nbt.to_plain(meta),
        block_entities=_block_entity_list(be_raw, palette, blocks, (w, h, ln), v3=version == 3),
        entities=_entity_list(root.get("Entities")),
        biomes=biomes,
        unknown_fields=[k for k in root if k not in known] + unknown_inner,
        required_mods=[str(m) for m in mods] if isinstance(mods, list) else [str(mods)] if mods else [],
    )


def _from_structure(root: nbt.Compound) -> Schematic:
    w, h, ln = _int3(root.get("size") or (), "size")
    if min(w, h, ln) < 1 or max(w, h, ln) > 4096:
        raise _bad(f"structure size {w}×{h}×{ln} is not valid")
    if w * h * ln > 16_000_000:
        raise McbError(ErrorCode.BUDGET_EXCEEDED, f"structure of {w * h * ln:,} positions is too large")
    pal = root.get("palette")
    if pal is None and root.get("palettes"):
        pal = root["palettes"][0]  # several palettes (shipwrecks): the first one, like the game's default
    if not isinstance(pal, list) or not pal:
        raise _bad("structure has no palette")
    palette = []
    for e in pal:
        name = str(e.get("Name", ""))
        props = e.get("Properties") or {}
        if props:
            name += "[" + ",".join(f"{k}={v}" for k, v in props.items()) + "]"
        palette.append(name)
    blocks = array("i", [VOID]) * (w * h * ln)
    bes = []
    void = {i for i, s in enumerate(palette) if s.split("[")[0] == STRUCTURE_VOID}
    for b in root.get("blocks") or ():
        x, y, z = _int3(b.get("pos") or (), "structure block pos")
        if not (0 <= x < w and 0 <= y < h and 0 <= z < ln):
            raise _bad(f"structure block at {x},{y},{z} is outside its size {w}×{h}×{ln}")
        st = int(b.get("state", -1))
        if not 0 <= st < len(palette):
            raise _bad(f"structure block at {x},{y},{z} refers to palette index {st} of {len(palette)}")
        if st in void:
            continue
        blocks[x + z * w + y * w * ln] = st
        if "nbt" in b:
            raw = nbt.to_plain(b["nbt"] or {})
            bes.append(
                {
                    "pos": (x, y, z),
                    "id": str(raw.get("id") or palette[st].split("[")[0]),
                    "nbt": {k: v for k, v in raw.items() if k not in ("id", "x", "y", "z")},
                }
            )
    dv = _data_version(root.get("DataVersion"), required=False)
    return Schematic(
        width=w,
        height=h,
        length=ln,
        palette=palette,
        blocks=blocks,
        offset=(0, 0, 0),
        data_version=dv,
        format=FORMAT_STRUCTURE,
        block_entities=bes,
        entities=_entity_list(root.get("entities")),
        unknown_fields=[k for k in root if k not in STRUCTURE_FIELDS],
    )


def read_bytes(data: bytes, kind: str = "schem") -> Schematic:
    """Parse a file's bytes. ``kind`` is ``schem`` (Sponge v2/v3) or ``nbt`` (structure).

    Raises ``invalid_request`` (corrupt / unsupported) or ``budget_exceeded`` (over a cap) —
    for any input: a field of an unexpected NBT type (a compound where a number belongs, a
    number out of range) is ``invalid_request`` too, never an unexpected exception.
    """
    try:
        return _read_bytes(data, kind)
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError, RecursionError, MemoryError):
        raise _bad("malformed schematic: a field has an unexpected type or value") from None


def _read_bytes(data: bytes, kind: str) -> Schematic:
    raw = decompress_capped(data)
    name, root = read_nbt(raw)
    if kind == "nbt":
        if "size" not in root or ("blocks" not in root):
            raise _bad("not a vanilla structure file (no size/blocks)")
        return _from_structure(root)
    inner: dict[str, Any] = root
    if set(root) == {"Schematic"} and isinstance(root["Schematic"], dict):
        inner = root["Schematic"]
    version = inner.get("Version")
    if not isinstance(version, int):
        raise _bad("not a Sponge schematic: the Version field is missing")
    if version == 3:
        if inner is root:
            raise _bad("a Sponge v3 schematic must be nested in a Schematic compound")
        return _from_sponge(inner, 3)
    if version == 2:
        return _from_sponge(inner, 2)
    raise _bad(f"Sponge schematic version {int(version)} is not supported (v2 and v3 are)", version=int(version))


# ---- writing --------------------------------------------------------------------------------
def to_nbt(s: Schematic, version: int = 3) -> tuple[str, nbt.Compound]:
    if version not in (2, 3):
        raise _bad(f"can write Sponge v2 or v3, not v{version}")
    if max(s.width, s.height, s.length) > 0xFFFF:
        raise _bad("a Sponge schematic is at most 65535 on each axis")
    if s.entities:
        raise _bad("writing entities is not supported")
    if any(b == VOID for b in s.blocks):
        raise _bad("a Sponge schematic is dense: every position needs a block (void found)")
    # Compact the palette to the states used, in first-use order (deterministic output);
    # equal state strings share one entry.
    by_state: dict[str, int] = {}
    remap: dict[int, int] = {}
    for b in s.blocks:
        if b not in remap:
            remap[b] = by_state.setdefault(s.palette[b], len(by_state))
    if not remap:
        raise _bad("the schematic is empty")
    data = encode_varints(remap[b] for b in s.blocks)
    pal = nbt.Compound((state, nbt.Int(i)) for state, i in by_state.items())
    ox, oy, oz = s.offset
    meta = nbt.Compound()
    if s.name:
        meta["Name"] = nbt.String(s.name)
    meta["Date"] = nbt.Long(int(time.time() * 1000))

    # Short holds -32768..32767; Sponge dimensions are unsigned, so store the low 16 bits.
    def short(v: int) -> nbt.Short:
        return nbt.Short(v - 0x10000 if v > 0x7FFF else v)

    if version == 2:
        meta["WEOffsetX"], meta["WEOffsetY"], meta["WEOffsetZ"] = nbt.Int(ox), nbt.Int(oy), nbt.Int(oz)
        root = nbt.Compound()
        root["Version"] = nbt.Int(2)
        root["DataVersion"] = nbt.Int(s.data_version)
        root["Metadata"] = meta
        root["Width"], root["Height"], root["Length"] = short(s.width), short(s.height), short(s.length)
        root["Offset"] = nbt.IntArray([ox, oy, oz])
        root["PaletteMax"] = nbt.Int(len(pal))
        root["Palette"] = pal
        root["BlockData"] = nbt.ByteArray(data)
        root["BlockEntities"] = _block_entities_nbt(s, 2)
        return "Schematic", root
    sch = nbt.Compound()
    sch["Version"] = nbt.Int(3)
    sch["DataVersion"] = nbt.Int(s.data_version)
    sch["Metadata"] = meta
    sch["Width"], sch["Height"], sch["Length"] = short(s.width), short(s.height), short(s.length)
    sch["Offset"] = nbt.IntArray([ox, oy, oz])
    sch["Blocks"] = nbt.Compound(Palette=pal, Data=nbt.ByteArray(data), BlockEntities=_block_entities_nbt(s, 3))
    return "", nbt.Compound(Schematic=sch)


def _block_entities_nbt(s: Schematic, version: int) -> nbt.List:
    """Sponge ``BlockEntities``: ``{Pos, Id, Data}`` (v3) or ``{Pos, Id, <data keys>}`` (v2, as
    WorldEdit writes it); the data is what the game saves for the block entity
    (``blockentity_nbt``), without its position."""
    from .blockentity_nbt import schematic_data

    out = nbt.List(nbt.COMPOUND)
    for b in s.block_entities:
        if "data" not in b:
            raise _bad("block entities read from a file are written back only after an import")
        be_id = str(b["id"]).removeprefix("minecraft:")
        x, y, z = b["pos"]
        data = schematic_data(be_id, b["data"])
        e = nbt.Compound(Pos=nbt.IntArray([x, y, z]), Id=nbt.String(f"minecraft:{be_id}"))
        if version == 3:
            if data:
                e["Data"] = data
        else:
            for k, v in data.items():
                e[k] = v
        out.append(e)
    return out


def write_bytes(s: Schematic, version: int = 3) -> bytes:
    """gzip-compressed Sponge schematic, v3 by default."""
    name, root = to_nbt(s, version)
    raw = nbt.write(root, name)
    if len(raw) > MAX_DECOMPRESSED:  # never write a file this reader refuses (full chests are ~1.4 KB each)
        raise McbError(
            ErrorCode.BUDGET_EXCEEDED,
            f"the schematic would hold {len(raw):,} bytes of NBT; files are limited to "
            f"{MAX_DECOMPRESSED:,} (export a smaller box)",
            details={"bytes": len(raw), "limit": MAX_DECOMPRESSED},
        )
    out = nbt.gzip_bytes(raw)
    if len(out) > MAX_COMPRESSED:
        raise McbError(
            ErrorCode.BUDGET_EXCEEDED, f"the schematic would be {len(out):,} bytes; the limit is {MAX_COMPRESSED:,}"
        )
    return out


def from_region(
    size: tuple[int, int, int],
    palette: list[str],
    indices: Any,
    *,
    offset: tuple[int, int, int],
    data_version: int,
    name: str = "",
    version: str | None = None,
) -> Schematic:
    """A dense schematic from a world read (YZX indices into ``palette``). Palette entries may be
    *full states* (``state{data}``, mcb_common.blockentity): every block that carries a block
    entity gets a ``block_entities`` entry ``{pos, id, data}`` (``data`` None when empty), and
    the block palette keeps the block states alone."""
    from . import blockentity
    from .blockinfo import BlockInfo
    from .registry import DEFAULT_VERSION

    w, h, ln = size
    if len(indices) != w * h * ln:
        raise _bad(f"region holds {len(indices)} positions, expected {w * h * ln}")
    info = BlockInfo.load(version or DEFAULT_VERSION)
    states: list[str] = []
    by_state: dict[str, int] = {}
    remap: list[int] = []
    carried: list[tuple[str, dict[str, Any] | None] | None] = []  # per palette entry: (be id, data)
    for full in palette:
        st, text = blockentity.split(full)
        remap.append(by_state.setdefault(st, len(states)))
        if len(states) < len(by_state):
            states.append(st)
        be_id = info.block_entity(st)
        if text and be_id is None:
            raise _bad(f"{st} carries no block entity but has data {text[:60]}")
        if text:
            try:
                data = json.loads(text)
            except ValueError:
                raise _bad(f"the block-entity data of {st} is not JSON") from None
            if not isinstance(data, dict) or "unsupported" in data:
                raise McbError(
                    ErrorCode.UNSUPPORTED_BLOCK,
                    f"{st} holds block-entity data this tool does not carry ({text[:80]})",
                    details={"state": st},
                )
            carried.append((be_id, data))  # type: ignore[arg-type]
        else:
            carried.append((be_id, None) if be_id else None)
    blocks = array("i", (remap[i] for i in indices))
    bes: list[dict[str, Any]] = []
    if any(c is not None for c in carried):
        layer = w * ln
        for i, p in enumerate(indices):
            c = carried[p]
            if c is None:
                continue
            y, rem = divmod(i, layer)
            z, x = divmod(rem, w)
            bes.append({"pos": (x, y, z), "id": f"minecraft:{c[0]}", "data": c[1]})
    return Schematic(
        width=w,
        height=h,
        length=ln,
        palette=states,
        blocks=blocks,
        offset=offset,
        data_version=data_version,
        name=name,
        block_entities=bes,
    )


# ---- import checks and placement -------------------------------------------------------------
@dataclass
class ImportCheck:
    canonical: list[str | None]  # per palette entry
    skipped: list[dict[str, Any]]  # block entities left out (positions in the schematic's frame)
    warnings: list[str]
    positions: int
    # canonical block-entity data (mcb_common.blockentity) by position in the schematic's frame
    data: dict[tuple[int, int, int], dict[str, Any]] = field(default_factory=dict)


# Block renames since older files were saved (the game's DataFixer does these; only the renames
# of blocks a real file here needed — others stay refused with suggestions). Release data
# versions: 1.17 = 2724 (cauldron split into water/lava/powder-snow cauldrons, grass_path →
# dirt_path), 1.20.3 = 3698 (grass → short_grass), 1.21.9 = 4554 (chain → iron_chain).
def legacy_state(state: str, data_version: int) -> str:
    """A block state of a file saved with ``data_version`` in today's names (unchanged when no
    rename applies or the version is unknown, 0)."""
    if not data_version:
        return state
    name, _, rest = state.partition("[")
    name = name if ":" in name else f"minecraft:{name}"
    props = rest[:-1] if rest.endswith("]") else rest
    if data_version < 2724 and name == "minecraft:cauldron" and props:
        level = dict(p.split("=", 1) for p in props.split(",") if "=" in p).get("level", "0")
        return "minecraft:cauldron" if level == "0" else f"minecraft:water_cauldron[level={level}]"
    if data_version < 2724 and name == "minecraft:grass_path":
        return "minecraft:dirt_path"
    if data_version < 3698 and name == "minecraft:grass":
        return "minecraft:short_grass"
    if data_version < 4554 and name == "minecraft:chain":
        return "minecraft:iron_chain" + (f"[{props}]" if props else "")
    return state


def block_entity_data(
    s: Schematic, registry: Any
) -> tuple[dict[tuple[int, int, int], dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Each block entity of the file in the shared data model: (data by position, problems
    ``{pos, id, reason}`` for what the model cannot carry or the world refuses, warnings).
    Older files are upgraded first (``blockentity_nbt.upgrade``); the data is then checked like a
    recipe's ``block_entity`` (item ids and stack sizes of the world's version, slots, …)."""
    from . import blockentity, blockentity_nbt
    from .blockinfo import BlockInfo

    info = BlockInfo.load(registry.version)
    dv = s.data_version or registry.data_version
    data: dict[tuple[int, int, int], dict[str, Any]] = {}
    problems: list[dict[str, Any]] = []
    warnings: list[str] = []
    ignored = 0
    for b in s.block_entities:
        x, y, z = pos = tuple(b["pos"])
        if not (0 <= x < s.width and 0 <= y < s.height and 0 <= z < s.length):
            problems.append({"pos": list(pos), "id": b["id"], "reason": "outside the schematic's size"})
            continue
        state = s.state_at(x, y, z)
        be_id = info.block_entity(state) if state else None
        if be_id is None:
            ignored += 1  # a block entity on a block that has none (stale data): the game drops it too
            continue
        why = blockentity.refusal(be_id)
        if why is not None:
            problems.append({"pos": list(pos), "id": b["id"], "reason": why})
            continue
        tag, bad = blockentity_nbt.upgrade(be_id, b.get("nbt") or {}, dv)
        got = blockentity_nbt.data_of({"id": f"minecraft:{be_id}", **tag})
        if got and "unsupported" in got:
            bad.append(str(got["unsupported"]))
        if bad:
            problems.append(
                {
                    "pos": list(pos),
                    "id": b["id"],
                    "reason": "holds data this tool does not carry: " + ", ".join(sorted(set(bad))),
                }
            )
            continue
        try:
            norm = blockentity.normalise(be_id, str(state).split("[", 1)[0], got, "data", registry.version)
        except McbError as err:
            problems.append({"pos": list(pos), "id": b["id"], "reason": err.message})
            continue
        if norm:
            data[pos] = norm
    if ignored:
        warnings.append(
            f"{ignored} block entit{'y' if ignored == 1 else 'ies'} of the file stand on blocks "
            "without one and were ignored (as the game does)"
        )
    return data, problems, warnings


def check_import(
    s: Schematic, registry: Any, *, world_data_version: int, max_positions: int, allow_drop_block_entities: bool = False
) -> ImportCheck:
    """Every refusal with its reason, before anything is placed (raises McbError)."""
    if s.entities:
        ids = sorted({e["id"] for e in s.entities})
        raise McbError(
            ErrorCode.UNSUPPORTED_BLOCK,
            f"the schematic holds {len(s.entities)} entities ({', '.join(ids[:8])}); "
            "entities are not imported — remove them from the file",
            details={"entities": s.entities[:50], "count": len(s.entities)},
        )
    if s.biomes:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            "the schematic holds biome data; biomes are not imported — save it without biomes",
            details={"field": "biomes"},
        )
    if s.unknown_fields:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"the schematic has fields this reader does not know: {', '.join(s.unknown_fields)}",
            details={"fields": s.unknown_fields},
        )
    if s.required_mods:
        raise McbError(
            ErrorCode.UNSUPPORTED_BLOCK,
            f"the schematic requires mods: {', '.join(s.required_mods)}",
            details={"required_mods": s.required_mods},
        )
    if world_data_version and s.data_version > world_data_version:
        raise McbError(
            ErrorCode.VERSION_MISMATCH,
            f"the schematic's DataVersion {s.data_version} is newer than the world's "
            f"{world_data_version}; blocks cannot be converted back",
            details={"data_version": s.data_version, "world_data_version": world_data_version},
        )
    skipped: list[dict[str, Any]] = []
    be_data: dict[tuple[int, int, int], dict[str, Any]] = {}
    be_warnings: list[str] = []
    if s.block_entities:
        be_data, problems, be_warnings = block_entity_data(s, registry)
        if problems and not allow_drop_block_entities:
            raise McbError(
                ErrorCode.UNSUPPORTED_BLOCK,
                f"{len(problems)} of the schematic's {len(s.block_entities)} block entities cannot be imported "
                f"with their contents: {problems[0]['id']} at {problems[0]['pos']}: {problems[0]['reason']}"
                + (f" (and {len(problems) - 1} more, see details)" if len(problems) > 1 else "")
                + ". Opt in to import without them (allow_drop_block_entities) — those positions are then "
                "left out and listed.",
                details={"block_entities": problems[:50], "count": len(problems)},
            )
        skipped = [{"pos": tuple(p["pos"]), "id": p["id"]} for p in problems]
    used = set(s.blocks)
    used.discard(VOID)
    canonical: list[str | None] = [None] * len(s.palette)
    unknown: list[dict[str, Any]] = []
    renamed: dict[str, str] = {}
    for i in sorted(used):
        try:
            st = legacy_state(s.palette[i], s.data_version)
            if st != s.palette[i]:
                renamed[s.palette[i]] = st
            canonical[i] = registry.canonical(st)
        except McbError as err:
            unknown.append(
                {"state": s.palette[i], "reason": err.message, "suggestions": err.details.get("suggestions", [])}
            )
    if unknown:
        raise McbError(
            ErrorCode.UNSUPPORTED_BLOCK,
            f"{len(unknown)} block state(s) are unknown in Minecraft {registry.version}: "
            + "; ".join(u["reason"] for u in unknown[:5]),
            details={"unknown": unknown[:50], "count": len(unknown)},
        )
    positions = s.block_count() - len(skipped)
    if positions > max_positions:
        raise McbError(
            ErrorCode.BUDGET_EXCEEDED,
            f"the schematic places {positions:,} positions; the plan limit is {max_positions:,}",
            details={"positions": positions, "limit": max_positions},
        )
    warnings = list(be_warnings)
    if renamed:
        warnings.append(
            f"{len(renamed)} block state(s) renamed since the file was saved were converted: "
            + "; ".join(f"{a} → {b}" for a, b in list(renamed.items())[:5])
        )
    if s.data_version and world_data_version and s.data_version < world_data_version:
        warnings.append(
            f"the schematic was saved with DataVersion {s.data_version} (world: {world_data_version}); "
            "states were checked against the world's registry; only the renames above are converted"
        )
    return ImportCheck(canonical, skipped, warnings, positions, be_data)


def rotate_xz(x: int, z: int, quarter_turns: int) -> tuple[int, int]:
    for _ in range(quarter_turns % 4):
        x, z = -z, x
    return x, z


def placements(
    s: Schematic, chk: ImportCheck, target: tuple[int, int, int], rotation: int, registry: Any
) -> tuple[list[str], list[int], list[int], list[str]]:
    """(palette, xyz flat, state index per entry, warnings) in world coordinates."""
    if rotation not in (0, 90, 180, 270):
        raise _bad(f"rotation must be 0, 90, 180 or 270, got {rotation}")
    k = rotation // 90
    warnings: list[str] = []
    from .transforms import rotate as rotate_state

    out_pal: list[str] = []
    remap: dict[int, int] = {}
    for i, c in enumerate(chk.canonical):
        if c is None:
            continue
        st = c
        if k:
            st = rotate_state(c, k, registry)
        remap[i] = len(out_pal)
        out_pal.append(st)
    skip = {tuple(p["pos"]) for p in chk.skipped}
    # Block-entity data travels with its block as one full state (mcb_common.blockentity):
    # none of the kinds the model carries stores a direction (facing is in the block state,
    # which turns above), so the data is placed as it is.
    from .blockentity import dumps

    full: dict[tuple[int, str], int] = {}
    data = chk.data
    tx, ty, tz = target
    ox, oy, oz = s.offset
    w, ln = s.width, s.length
    layer = w * ln
    xyz: list[int] = []
    states: list[int] = []
    blocks = s.blocks
    for i, b in enumerate(blocks):
        if b == VOID:
            continue
        y, rem = divmod(i, layer)
        z, x = divmod(rem, w)
        if skip and (x, y, z) in skip:
            continue
        rx, rz = rotate_xz(x + ox, z + oz, k)
        xyz += (tx + rx, ty + y + oy, tz + rz)
        d = data.get((x, y, z)) if data else None
        if d is None:
            states.append(remap[b])
            continue
        text = dumps(d)
        j = full.get((b, text))
        if j is None:
            j = full[(b, text)] = len(out_pal)
            out_pal.append(out_pal[remap[b]] + text)
        states.append(j)
    return out_pal, xyz, states, warnings


def info(s: Schematic) -> dict[str, Any]:
    """The metadata an asset listing shows."""
    return {
        "width": s.width,
        "height": s.height,
        "length": s.length,
        "block_count": s.non_air_count(),
        "data_version": s.data_version,
        "offset": {"x": s.offset[0], "y": s.offset[1], "z": s.offset[2]},
        "format": s.format,
        "block_entities": len(s.block_entities),
        "entities": len(s.entities),
    }
