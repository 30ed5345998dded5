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

V2_FIELDS = frozenset({"Version", "DataVersion", "Metadata", "Width", "Height", "Length", "Offset",
                       "PaletteMax", "Palette", "BlockData", "BlockEntities", "TileEntities", "Entities",
                       "BiomePalette", "BiomePaletteMax", "BiomeData"})
V3_FIELDS = frozenset({"Version", "DataVersion", "Metadata", "Width", "Height", "Length", "Offset",
                       "Blocks", "Biomes", "Entities"})
V3_BLOCKS_FIELDS = frozenset({"Palette", "Data", "BlockEntities"})
STRUCTURE_FIELDS = frozenset({"DataVersion", "size", "palette", "palettes", "blocks", "entities", "author"})


def _bad(message: str, **details: Any) -> McbError:
    return McbError(ErrorCode.INVALID_REQUEST, message, details=details)


# ---- bounded decompression ------------------------------------------------------------------
def decompress_capped(data: bytes, max_compressed: int = MAX_COMPRESSED,
                      max_out: int = MAX_DECOMPRESSED) -> bytes:
    """gzip → raw NBT, streaming with a hard output cap. Schematic and structure files are
    gzip-compressed; anything else (uncompressed NBT included) is refused."""
    if len(data) > max_compressed:
        raise McbError(ErrorCode.BUDGET_EXCEEDED,
                       f"file is {len(data):,} bytes; schematics are limited to {max_compressed:,} bytes compressed",
                       details={"bytes": len(data), "limit": max_compressed})
    if not data:
        raise _bad("file is empty")
    if data[:2] != b"\x1f\x8b":
        if data[0] == nbt.COMPOUND:
            raise _bad("uncompressed NBT: .schem and .nbt files are gzip-compressed (they start with 1F 8B); "
                       "save it again with a schematic tool")
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
                chunk = bytes(view[pos:pos + step])
                pos += step
            else:
                break
            out += d.decompress(chunk, room)
            if len(out) > max_out:
                raise McbError(
                    ErrorCode.BUDGET_EXCEEDED,
                    f"decompressed NBT is over {max_out:,} bytes; refused (the limit bounds memory)",
                    details={"limit": max_out})
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
            raise McbError(ErrorCode.BUDGET_EXCEEDED,
                           f"NBT is nested more than {MAX_NBT_DEPTH} levels deep; refused",
                           details={"limit": "nbt_depth", "max": MAX_NBT_DEPTH})
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
        air = {i for i, s in enumerate(self.palette) if s.split("[")[0] in ("minecraft:air", "minecraft:cave_air",
                                                                             "minecraft:void_air")}
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
        raise _bad(f"DataVersion {int(v)} is not valid (Minecraft's data versions are 0 to {MAX_DATA_VERSION})",
                   data_version=int(v))
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


def _block_entity_list(items: Any, s_palette: list[str] | None = None, blocks: Any = None,
                       dims: tuple[int, int, int] | None = None) -> list[dict[str, Any]]:
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
        out.append({"pos": pos, "id": eid or "?"})
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
        width=w, height=h, length=ln, palette=palette, blocks=blocks, offset=offset, data_version=int(dv),
        format=FORMAT_V2 if version == 2 else FORMAT_V3, name=name, metadata=nbt.to_plain(meta),
        block_entities=_block_entity_list(be_raw, palette, blocks, (w, h, ln)),
        entities=_entity_list(root.get("Entities")), biomes=biomes,
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
            bes.append({"pos": (x, y, z), "id": str((b["nbt"] or {}).get("id") or palette[st].split("[")[0])})
    dv = _data_version(root.get("DataVersion"), required=False)
    return Schematic(
        width=w, height=h, length=ln, palette=palette, blocks=blocks, offset=(0, 0, 0),
        data_version=dv, format=FORMAT_STRUCTURE,
        block_entities=bes, entities=_entity_list(root.get("entities")),
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
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError, RecursionError,
            MemoryError):
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
    if s.block_entities or s.entities:
        raise _bad("writing block entities or entities is not supported")
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
        root["BlockEntities"] = nbt.List(nbt.COMPOUND)
        return "Schematic", root
    sch = nbt.Compound()
    sch["Version"] = nbt.Int(3)
    sch["DataVersion"] = nbt.Int(s.data_version)
    sch["Metadata"] = meta
    sch["Width"], sch["Height"], sch["Length"] = short(s.width), short(s.height), short(s.length)
    sch["Offset"] = nbt.IntArray([ox, oy, oz])
    sch["Blocks"] = nbt.Compound(Palette=pal, Data=nbt.ByteArray(data), BlockEntities=nbt.List(nbt.COMPOUND))
    return "", nbt.Compound(Schematic=sch)


def write_bytes(s: Schematic, version: int = 3) -> bytes:
    """gzip-compressed Sponge schematic, v3 by default."""
    name, root = to_nbt(s, version)
    out = nbt.gzip_bytes(nbt.write(root, name))
    if len(out) > MAX_COMPRESSED:
        raise McbError(ErrorCode.BUDGET_EXCEEDED,
                       f"the schematic would be {len(out):,} bytes; the limit is {MAX_COMPRESSED:,}")
    return out


def from_region(size: tuple[int, int, int], palette: list[str], indices: Any, *, offset: tuple[int, int, int],
                data_version: int, name: str = "") -> Schematic:
    """A dense schematic from a region read (YZX indices into ``palette``)."""
    w, h, ln = size
    if len(indices) != w * h * ln:
        raise _bad(f"region holds {len(indices)} positions, expected {w * h * ln}")
    return Schematic(width=w, height=h, length=ln, palette=list(palette), blocks=array("i", indices),
                     offset=offset, data_version=data_version, name=name)


# ---- import checks and placement -------------------------------------------------------------
@dataclass
class ImportCheck:
    canonical: list[str | None]  # per palette entry
    skipped: list[dict[str, Any]]  # block entities left out (positions in the schematic's frame)
    warnings: list[str]
    positions: int


def check_import(s: Schematic, registry: Any, *, world_data_version: int, max_positions: int,
                 allow_drop_block_entities: bool = False) -> ImportCheck:
    """Every refusal with its reason, before anything is placed (raises McbError)."""
    if s.entities:
        ids = sorted({e["id"] for e in s.entities})
        raise McbError(ErrorCode.UNSUPPORTED_BLOCK,
                       f"the schematic holds {len(s.entities)} entities ({', '.join(ids[:8])}); "
                       "entities are not imported — remove them from the file",
                       details={"entities": s.entities[:50], "count": len(s.entities)})
    if s.biomes:
        raise McbError(ErrorCode.INVALID_REQUEST,
                       "the schematic holds biome data; biomes are not imported — save it without biomes",
                       details={"field": "biomes"})
    if s.unknown_fields:
        raise McbError(ErrorCode.INVALID_REQUEST,
                       f"the schematic has fields this reader does not know: {', '.join(s.unknown_fields)}",
                       details={"fields": s.unknown_fields})
    if s.required_mods:
        raise McbError(ErrorCode.UNSUPPORTED_BLOCK,
                       f"the schematic requires mods: {', '.join(s.required_mods)}",
                       details={"required_mods": s.required_mods})
    if world_data_version and s.data_version > world_data_version:
        raise McbError(ErrorCode.VERSION_MISMATCH,
                       f"the schematic's DataVersion {s.data_version} is newer than the world's "
                       f"{world_data_version}; blocks cannot be converted back",
                       details={"data_version": s.data_version, "world_data_version": world_data_version})
    skipped: list[dict[str, Any]] = []
    if s.block_entities:
        if not allow_drop_block_entities:
            ids = sorted({b["id"] for b in s.block_entities})
            raise McbError(
                ErrorCode.UNSUPPORTED_BLOCK,
                f"the schematic holds {len(s.block_entities)} block entities ({', '.join(ids[:8])}); their "
                "contents (items, sign text) cannot be imported. Opt in to import without them "
                "(allow_drop_block_entities) — those positions are then left out and listed.",
                details={"block_entities": [{"pos": list(b["pos"]), "id": b["id"]} for b in s.block_entities[:50]],
                         "count": len(s.block_entities)})
        skipped = [{"pos": tuple(b["pos"]), "id": b["id"]} for b in s.block_entities]
    used = set(s.blocks)
    used.discard(VOID)
    canonical: list[str | None] = [None] * len(s.palette)
    unknown: list[dict[str, Any]] = []
    for i in sorted(used):
        try:
            canonical[i] = registry.canonical(s.palette[i])
        except McbError as err:
            unknown.append({"state": s.palette[i], "reason": err.message,
                            "suggestions": err.details.get("suggestions", [])})
    if unknown:
        raise McbError(ErrorCode.UNSUPPORTED_BLOCK,
                       f"{len(unknown)} block state(s) are unknown in Minecraft {registry.version}: "
                       + "; ".join(u["reason"] for u in unknown[:5]),
                       details={"unknown": unknown[:50], "count": len(unknown)})
    positions = s.block_count() - len(skipped)
    if positions > max_positions:
        raise McbError(ErrorCode.BUDGET_EXCEEDED,
                       f"the schematic places {positions:,} positions; the plan limit is {max_positions:,}",
                       details={"positions": positions, "limit": max_positions})
    warnings = []
    if s.data_version and world_data_version and s.data_version < world_data_version:
        warnings.append(f"the schematic was saved with DataVersion {s.data_version} (world: {world_data_version}); "
                        "states were checked against the world's registry, not converted")
    return ImportCheck(canonical, skipped, warnings, positions)


def rotate_xz(x: int, z: int, quarter_turns: int) -> tuple[int, int]:
    for _ in range(quarter_turns % 4):
        x, z = -z, x
    return x, z


def placements(s: Schematic, chk: ImportCheck, target: tuple[int, int, int], rotation: int,
               registry: Any) -> tuple[list[str], list[int], list[int], list[str]]:
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
        states.append(remap[b])
    return out_pal, xyz, states, warnings


def info(s: Schematic) -> dict[str, Any]:
    """The metadata an asset listing shows."""
    return {
        "width": s.width, "height": s.height, "length": s.length,
        "block_count": s.non_air_count(), "data_version": s.data_version,
        "offset": {"x": s.offset[0], "y": s.offset[1], "z": s.offset[2]},
        "format": s.format, "block_entities": len(s.block_entities), "entities": len(s.entities),
    }
