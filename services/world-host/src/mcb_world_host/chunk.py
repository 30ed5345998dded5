"""Chunks in the 1.18+ layout (no ``Level`` wrapper): blocks by canonical state strings.

A section (16×16×16) stores ``block_states {palette: [{Name, Properties?}], data: long[]}``;
each block is a palette index packed into longs, ``bits = max(4, ceil(log2(len(palette))))``,
``64 // bits`` entries per long, entries never span two longs, index order YZX
(``y << 8 | z << 4 | x``). A palette of one entry has no ``data``.

Decoding is lazy and per section. Encoding rewrites only the sections we changed; every
other tag of the chunk (other sections, biomes, block entities, structures, ticks, unknown
tags) is kept as read. For a changed chunk the derived data is marked stale so the game
recomputes it on load (docs/world-format.md cites the game code): ``Heightmaps`` emptied,
``isLightOn`` = 0, and ``BlockLight``/``SkyLight`` removed from every section of the chunk.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from mcb_common import blockentity, nbt
from mcb_common import blockentity_nbt as blockentities
from mcb_common.blockinfo import BlockInfo
from mcb_common.blockstate import BlockState, parse_state_text
from mcb_common.errors import ErrorCode, McbError
from mcb_common.registry import AIR, AIR_NAMES, Registry

FULL_STATUSES = frozenset({"minecraft:full", "full"})
SECTION_VOLUME = 4096


def bits_for(palette_len: int) -> int:
    """Bits per block index on disk for a block-state palette of ``palette_len`` entries."""
    if palette_len <= 1:
        return 0
    return max(4, math.ceil(math.log2(palette_len)))


def unpack_indices(data: Iterable[int] | np.ndarray, bits: int, count: int = SECTION_VOLUME) -> np.ndarray:
    """Packed longs (non-spanning) -> ``count`` indices (uint16)."""
    per_long = 64 // bits
    longs = np.asarray(data, dtype=np.int64).view(np.uint64)
    need = (count + per_long - 1) // per_long
    if len(longs) < need:
        raise McbError(ErrorCode.INTERNAL, f"packed data has {len(longs)} longs, needs {need} for {bits} bits")
    shifts = np.arange(per_long, dtype=np.uint64) * np.uint64(bits)
    mask = np.uint64((1 << bits) - 1)
    vals = (longs[:need, None] >> shifts[None, :]) & mask
    return vals.reshape(-1)[:count].astype(np.uint16)


def pack_indices(indices: np.ndarray, bits: int) -> nbt.LongArray:
    per_long = 64 // bits
    n = len(indices)
    need = (n + per_long - 1) // per_long
    padded = np.zeros(need * per_long, dtype=np.uint64)
    padded[:n] = indices.astype(np.uint64)
    shifts = np.arange(per_long, dtype=np.uint64) * np.uint64(bits)
    words = np.bitwise_or.reduce(padded.reshape(need, per_long) << shifts[None, :], axis=1)
    out = nbt.LongArray()
    out.frombytes(words.astype(np.uint64).view(np.int64).tobytes())
    return out


# ---- palette entries <-> canonical strings ---------------------------------------------------
def entry_state(entry: nbt.Compound, registry: Registry) -> str:
    """Canonical state string of a palette entry. Air variants read as ``minecraft:air``;
    a block the registry does not know reads as its own canonical-looking string."""
    name = str(entry.get("Name", "minecraft:air"))
    if ":" not in name:
        name = "minecraft:" + name
    if name in AIR_NAMES:
        return AIR
    props_tag = entry.get("Properties")
    props = {str(k): str(v) for k, v in props_tag.items()} if isinstance(props_tag, dict) else {}
    text = str(BlockState(name, tuple(sorted(props.items()))))
    try:
        return registry.canonical(text)
    except McbError:
        return text


def state_entry(state: str) -> nbt.Compound:
    name, props = parse_state_text(state)
    out = nbt.Compound(Name=nbt.String(name))
    if props:
        out["Properties"] = nbt.Compound((k, nbt.String(v)) for k, v in sorted(props.items()))
    return out


class Section:
    """One 16³ section's blocks, decoded from (and re-encoded into) its NBT compound."""

    __slots__ = ("y", "tag", "states", "entries", "index_of", "indices", "dirty")

    def __init__(self, y: int, tag: dict[str, Any], registry: Registry):
        self.y = y
        self.tag = tag
        self.dirty = False
        bs = tag.get("block_states")
        if not isinstance(bs, dict) or not bs.get("palette"):
            # a section without block states is all air (the game does the same)
            self.entries: list[nbt.Compound] = [state_entry(AIR)]
            self.states: list[str] = [AIR]
            self.indices = np.zeros(SECTION_VOLUME, dtype=np.uint16)
        else:
            self.entries = list(bs["palette"])
            self.states = [entry_state(e, registry) for e in self.entries]
            bits = bits_for(len(self.entries))
            data = bs.get("data")
            if bits == 0 or data is None or len(data) == 0:
                self.indices = np.zeros(SECTION_VOLUME, dtype=np.uint16)
            else:
                self.indices = unpack_indices(data, bits)
                if int(self.indices.max(initial=0)) >= len(self.entries):
                    raise McbError(ErrorCode.INTERNAL, f"section Y={y}: block index beyond its palette")
        self.index_of: dict[str, int] = {}
        for i, s in enumerate(self.states):
            self.index_of.setdefault(s, i)

    def get(self, lx: int, ly: int, lz: int) -> str:
        return self.states[self.indices.item((ly << 8) | (lz << 4) | lx)]

    def set(self, lx: int, ly: int, lz: int, state: str) -> str:
        i = (ly << 8) | (lz << 4) | lx
        before = self.states[self.indices.item(i)]
        if before == state:
            return before
        idx = self.index_of.get(state)
        if idx is None:
            idx = len(self.states)
            self.states.append(state)
            self.entries.append(state_entry(state))
            self.index_of[state] = idx
        self.indices[i] = idx
        self.dirty = True
        return before

    def encode(self) -> None:
        """Write palette + packed data back into ``self.tag`` (only used entries are kept,
        in their existing order; untouched entries keep their original NBT)."""
        used = np.unique(self.indices)
        remap = np.zeros(len(self.states), dtype=np.uint16)
        remap[used] = np.arange(len(used), dtype=np.uint16)
        palette = nbt.List(nbt.COMPOUND, [self.entries[int(i)] for i in used])
        bs = nbt.Compound(palette=palette)
        bits = bits_for(len(palette))
        new_indices = remap[self.indices]
        if bits:
            bs["data"] = pack_indices(new_indices, bits)
        self.tag["block_states"] = bs
        self.entries = list(palette)
        self.states = [self.states[int(i)] for i in used]
        self.index_of = {}
        for i, s in enumerate(self.states):
            self.index_of.setdefault(s, i)
        self.indices = new_indices
        self.dirty = False


class Chunk:
    """A chunk's root compound plus lazily decoded sections."""

    # (the block_entities list, its length, position -> compound): rebuilt when the list changed
    _be_index: tuple[object, int, dict[tuple[int, int, int], dict[str, Any]]] | None

    def __init__(self, cx: int, cz: int, root: nbt.Compound, registry: Registry, min_section: int, max_section: int):
        if "Level" in root and "sections" not in root:
            raise McbError(
                ErrorCode.VERSION_MISMATCH,
                f"chunk ({cx},{cz}) uses the pre-1.18 layout (a Level wrapper); this host reads 1.18+ chunks. "
                "Open the world once in Minecraft 1.18 or later to upgrade it.",
                details={"chunk": [cx, cz], "dataVersion": int(root.get("DataVersion", 0))},
            )
        self.cx, self.cz = cx, cz
        self.root = root
        self.registry = registry
        self.min_section, self.max_section = min_section, max_section
        self._sections: dict[int, Section] = {}
        self._tags: dict[int, dict[str, Any]] = {}  # section compounds by Y
        sections = root.get("sections")
        if not isinstance(sections, nbt.List):
            sections = nbt.List(nbt.COMPOUND)
            root["sections"] = sections
        for tag in sections:
            if isinstance(tag, dict) and "Y" in tag:
                self._tags[int(tag["Y"])] = tag
        self.dirty = False

    # -- metadata ----------------------------------------------------------------------------
    @property
    def status(self) -> str:
        return str(self.root.get("Status", ""))

    @property
    def is_full(self) -> bool:
        return self.status in FULL_STATUSES

    @property
    def data_version(self) -> int:
        return int(self.root.get("DataVersion", 0))

    def block_entity_at(self, x: int, y: int, z: int) -> dict[str, Any] | None:
        lst = self.root.get("block_entities") or ()
        index = getattr(self, "_be_index", None)
        if index is None or index[0] is not lst or index[1] != len(lst):  # rebuilt when the list changed
            found: dict[tuple[int, int, int], dict[str, Any]] = {}
            for be in lst:
                if isinstance(be, dict) and {"x", "y", "z"} <= be.keys():
                    found.setdefault((int(be["x"]), int(be["y"]), int(be["z"])), be)
            index = self._be_index = (lst, len(lst), found)
        return index[2].get((x, y, z))

    def get_full(self, x: int, y: int, z: int, info: BlockInfo) -> str:
        """The full state (mcb_common.blockentity): the block state plus its block entity's data."""
        state = self.get_block(x, y, z)
        if info.block_entity(state) is None:
            return state
        tag = self.block_entity_at(x, y, z)
        return blockentity.join(state, blockentities.data_of(tag) if tag is not None else None)

    def set_block_entity(self, x: int, y: int, z: int, be_id: str | None, data: dict | None) -> None:
        """Replace the block entity at a position (none when ``be_id`` is None)."""
        lst = self.root.get("block_entities")
        if be_id is None and isinstance(lst, list) and self.block_entity_at(x, y, z) is None:
            return  # nothing there, nothing to put: the common case of a batch (indexed, not a scan)
        if not isinstance(lst, list):
            lst = self.root["block_entities"] = nbt.List(nbt.COMPOUND)
        keep = [
            be
            for be in lst
            if not (
                isinstance(be, dict)
                and int(be.get("x", 1 << 40)) == x
                and int(be.get("y", 1 << 40)) == y
                and int(be.get("z", 1 << 40)) == z
            )
        ]
        if be_id is not None:
            keep.append(blockentities.to_nbt(be_id, x, y, z, data))
        if len(keep) != len(lst) or be_id is not None:
            lst[:] = keep
            self._be_index = None
            assert isinstance(lst, nbt.List)  # read by mcb_common.nbt or made above
            if lst.elem_type == nbt.END and keep:
                lst.elem_type = nbt.COMPOUND
            self.dirty = True

    def block_entity_positions(self) -> set[tuple[int, int, int]]:
        out = set()
        for be in self.root.get("block_entities") or ():
            if isinstance(be, dict) and {"x", "y", "z"} <= be.keys():
                out.add((int(be["x"]), int(be["y"]), int(be["z"])))
        return out

    # -- sections ----------------------------------------------------------------------------
    def section(self, sy: int, create: bool = False) -> Section | None:
        s = self._sections.get(sy)
        if s is not None:
            return s
        tag = self._tags.get(sy)
        if tag is None:
            if not create:
                return None
            if not self.min_section <= sy <= self.max_section:
                raise McbError(ErrorCode.OUT_OF_BOUNDS, f"section Y={sy} is outside the world's height")
            tag = self._new_section_tag(sy)
        s = Section(sy, tag, self.registry)
        self._sections[sy] = s
        return s

    def _new_section_tag(self, sy: int) -> nbt.Compound:
        tag = nbt.Compound(Y=nbt.Byte(sy))
        tag["block_states"] = nbt.Compound(palette=nbt.List(nbt.COMPOUND, [state_entry(AIR)]))
        # biomes: copy the nearest existing section's (the game would otherwise use plains)
        near = sorted(self._tags, key=lambda y: (abs(y - sy), y))
        biomes = None
        for y in near:
            b = self._tags[y].get("biomes")
            if isinstance(b, dict):
                biomes = copy.deepcopy(b)
                break
        tag["biomes"] = (
            biomes
            if biomes is not None
            else nbt.Compound(palette=nbt.List(nbt.STRING, [nbt.String("minecraft:plains")]))
        )
        sections = self.root["sections"]
        pos = len(sections)
        for i, t in enumerate(sections):
            if isinstance(t, dict) and "Y" in t and int(t["Y"]) > sy:
                pos = i
                break
        sections.insert(pos, tag)
        self._tags[sy] = tag
        return tag

    def section_ys(self) -> list[int]:
        return sorted(self._tags)

    # -- blocks (x, y, z are world coordinates inside this chunk) ------------------------------
    def get_block(self, x: int, y: int, z: int) -> str:
        s = self.section(y >> 4)
        if s is None:
            return AIR
        return s.get(x & 15, y & 15, z & 15)

    def set_block(self, x: int, y: int, z: int, state: str) -> str:
        """Set a canonical state; returns the state before. Does not check chunk status."""
        if state in AIR_NAMES:
            state = AIR
        sy = y >> 4
        s = self.section(sy)
        if s is None:
            if state == AIR:
                return AIR
            s = self.section(sy, create=True)
        assert s is not None
        before = s.set(x & 15, y & 15, z & 15, state)
        if before != state:
            self.dirty = True
        return before

    def section_view(self, sy: int) -> tuple[list[str], np.ndarray] | None:
        """(palette states, 4096 indices in YZX order) of one section, or None if absent."""
        s = self.section(sy)
        if s is None:
            return None
        return s.states, s.indices

    # -- encoding ----------------------------------------------------------------------------
    def mark_derived_stale(self) -> set[int]:
        """Heightmaps and light must be recomputed by the game (docs/world-format.md). Returns
        the ids of the section compounds it changed."""
        if "Heightmaps" in self.root:
            self.root["Heightmaps"] = nbt.Compound()
        self.root["isLightOn"] = nbt.Byte(0)
        changed = set()
        for tag in self.root["sections"]:
            if isinstance(tag, dict) and ("BlockLight" in tag or "SkyLight" in tag):
                tag.pop("BlockLight", None)
                tag.pop("SkyLight", None)
                changed.add(id(tag))
        return changed

    def encode(self) -> bytes:
        """The chunk's NBT. The encoded bytes of each section compound are kept between encodes
        (the chunk stays decoded between the batches of an operation): only the sections this
        encode changed are written again — the bytes equal ``nbt.write(self.root)`` (tested)."""
        cache: dict[int, tuple[nbt.Compound, bytes]] = self.__dict__.setdefault("_section_bytes", {})
        if self.dirty:
            changed = set()
            for s in self._sections.values():
                if s.dirty:
                    s.encode()
                    changed.add(id(s.tag))
            changed |= self.mark_derived_stale()
            for key in changed:
                cache.pop(key, None)
            self.dirty = False
        sections = self.root.get("sections")
        if not isinstance(sections, nbt.List) or sections.elem_type != nbt.COMPOUND:
            return nbt.write(self.root)
        out = [bytes((nbt.COMPOUND,)), b"\x00\x00"]  # the root: a Compound named ""
        for name, value in self.root.items():
            if value is not sections:
                out.append(nbt.named_bytes(name, value))
                continue
            out.append(nbt.list_header(name, nbt.COMPOUND, len(sections)))
            for tag in sections:
                hit = cache.get(id(tag))
                if hit is None or hit[0] is not tag:
                    hit = cache[id(tag)] = (tag, nbt.payload_bytes(tag))
                out.append(hit[1])
        out.append(b"\x00")
        return b"".join(out)


# ---- new chunks --------------------------------------------------------------------------
def flat_chunk(
    cx: int,
    cz: int,
    data_version: int,
    layers: list[tuple[str, int]],
    min_y: int,
    max_y: int,
    biome: str = "minecraft:plains",
) -> nbt.Compound:
    """A ``minecraft:full`` chunk filled with horizontal layers from ``min_y`` up.

    Heightmaps are left empty and ``isLightOn`` is 0, so the game computes both when it
    first loads the chunk (the same mechanism as for any chunk we change)."""
    min_s, max_s = min_y >> 4, max_y >> 4
    column: list[str] = []
    for state, height in layers:
        column.extend([state] * height)
    sections = nbt.List(nbt.COMPOUND)
    for sy in range(min_s, max_s + 1):
        ys = [column[y - min_y] if 0 <= y - min_y < len(column) else AIR for y in range(sy * 16, sy * 16 + 16)]
        order: list[str] = []
        for s in ys:
            if s not in order:
                order.append(s)
        palette = nbt.List(nbt.COMPOUND, [state_entry(s) for s in order])
        bs = nbt.Compound(palette=palette)
        bits = bits_for(len(order))
        if bits:
            idx = np.repeat(np.array([order.index(s) for s in ys], dtype=np.uint16), 256)
            bs["data"] = pack_indices(idx, bits)
        sections.append(
            nbt.Compound(
                Y=nbt.Byte(sy),
                block_states=bs,
                biomes=nbt.Compound(palette=nbt.List(nbt.STRING, [nbt.String(biome)])),
            )
        )
    n_sections = max_s - min_s + 1
    return nbt.Compound(
        DataVersion=nbt.Int(data_version),
        xPos=nbt.Int(cx),
        zPos=nbt.Int(cz),
        yPos=nbt.Int(min_s),
        Status=nbt.String("minecraft:full"),
        LastUpdate=nbt.Long(0),
        InhabitedTime=nbt.Long(0),
        isLightOn=nbt.Byte(0),
        sections=sections,
        block_entities=nbt.List(nbt.COMPOUND),
        Heightmaps=nbt.Compound(),
        block_ticks=nbt.List(nbt.END),
        fluid_ticks=nbt.List(nbt.END),
        PostProcessing=nbt.List(nbt.LIST, [nbt.List(nbt.END) for _ in range(n_sections)]),
        structures=nbt.Compound(References=nbt.Compound(), starts=nbt.Compound()),
    )
