"""What ``replace`` and ``paste`` read besides the recipe: ports and pure helpers (no transport).

* ``RegionReader`` — the port ``replace`` reads the world through: ``reader(box)`` returns the
  host's palette and one uint16 index per position of ``box`` in YZX order (x fastest, then z,
  then y), exactly what the world protocol's ``region_read`` answers. Missing chunks are an
  ``McbError`` with code ``not_found`` (the compiler adds the operation's path). The servicer
  provides the real one (servicer.py); tests pass a dict-backed fake.
* ``AssetReader`` — ``reader(asset_id) -> (file bytes, kind)``; the default reads the asset
  library folder with ``mcb_common.assets.AssetLibrary`` (ids, symlinks, sizes refused there).
* ``PartBlocks`` — a part's generated states, as the journal attaches them to the request.

Filters (``replace.from``), the grammar docs/recipes.md documents::

    entry := "!"? ( "*" | block_id | block_id "[" prop "=" value ("," prop "=" value)* "]" )

``*`` matches every state that is not air (air, cave_air, void_air); a block id matches every
state of that block; properties restrict to states with those values (the others are free).
A state matches the filter when it matches at least one entry without ``!`` — or, when every
entry has ``!``, when it is not air — and no entry with ``!``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from mcb_common import blockentity
from mcb_common import schematic as S
from mcb_common.blockstate import BlockState, parse_state_text
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box
from mcb_common.registry import AIR_NAMES, Registry

if TYPE_CHECKING:
    from .ops import PasteOp

RegionReader = Callable[[Box], tuple[Sequence[str], np.ndarray]]
AssetReader = Callable[[str], tuple[bytes, str]]


@dataclass(frozen=True)
class PartBlocks:
    """A part as generated: world positions (N, 3), a palette and one index per position."""

    xyz: np.ndarray
    palette: tuple[str, ...]
    states: np.ndarray


@dataclass(frozen=True)
class Source:
    """A paste source relative to its anchor: cells (N, 3), canonical palette, index per cell."""

    cells: np.ndarray
    palette: tuple[str, ...]
    states: np.ndarray
    digest: str
    warnings: tuple[str, ...] = ()


def _at(path: str, err: McbError) -> McbError:
    return McbError(err.code, f"{path}: {err.message}", err.retryable, {**err.details, "path": path})


# -- filters ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FilterEntry:
    negate: bool
    any_non_air: bool
    name: str
    props: tuple[tuple[str, str], ...]

    def hit(self, name: str, props: dict[str, str]) -> bool:
        if self.any_non_air:
            return name not in AIR_NAMES
        return name == self.name and all(props.get(k) == v for k, v in self.props)


def parse_filter(entries: Sequence[str], registry: Registry, path: str) -> tuple[FilterEntry, ...]:
    out = []
    for i, text in enumerate(entries):
        where = f"{path}[{i}]" if len(entries) > 1 else path
        negate = text.startswith("!")
        body = (text[1:] if negate else text).strip()
        if body == "*":
            out.append(FilterEntry(negate, True, "", ()))
            continue
        try:
            registry.canonical(body)  # the block, its properties and values exist
            name, props = parse_state_text(body)
        except McbError as e:
            raise _at(where, e) from None
        out.append(FilterEntry(negate, False, name, tuple(sorted(props.items()))))
    return tuple(out)


def matches(flt: Sequence[FilterEntry], state: str) -> bool:
    name, props = parse_state_text(state)
    positive = [e for e in flt if not e.negate]
    hit = any(e.hit(name, props) for e in positive) if positive else name not in AIR_NAMES
    return hit and not any(e.hit(name, props) for e in flt if e.negate)


def keep_properties(source: str, target: str, registry: Registry) -> str:
    """``target`` (canonical) with every property of ``source`` that the target block also has
    with that value allowed: oak_stairs[facing=east,half=top] → spruce_stairs keeps both."""
    _, sprops = parse_state_text(source)
    tname, tprops = parse_state_text(target)
    bt = registry.blocks.get(tname)
    if bt is None or not sprops:
        return target
    allowed = dict(bt.properties)
    for k, v in sprops.items():
        if k in allowed and v in allowed[k]:
            tprops[k] = v
    return str(BlockState(tname, tuple(sorted(tprops.items()))))


# -- paste sources ---------------------------------------------------------------------------
def default_asset_reader(asset_id: str) -> tuple[bytes, str]:
    from mcb_common.assets import AssetLibrary

    data, kind, _entry = AssetLibrary().read(asset_id)
    return data, kind


def load_asset(asset_id: str, registry: Registry, max_positions: int, reader: AssetReader | None, path: str) -> Source:
    """The schematic import path (mcb_common.schematic): the same refusals — entities, block
    entities, biomes, unknown fields or blocks, a newer DataVersion, more positions than the
    plan limit — and the same placement, at anchor (0, 0, 0) without rotation."""
    try:
        data, kind = (reader or default_asset_reader)(asset_id)
        s = S.read_bytes(data, kind)
        chk = S.check_import(s, registry, world_data_version=registry.data_version, max_positions=max_positions)
        palette, xyz_flat, states, warnings = S.placements(s, chk, (0, 0, 0), 0, registry)
    except McbError as e:
        raise _at(path, e) from None
    if not states:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{path}: asset {asset_id!r} places no blocks",
            details={"path": path, "asset_id": asset_id},
        )
    cells = np.asarray(xyz_flat, dtype=np.int64).reshape(-1, 3)
    air = sum(1 for st in states if palette[st].split("[", 1)[0] in AIR_NAMES)
    if air:
        warnings = [
            *warnings,
            f"{path}: the asset's air ({air:,} positions) is pasted too and removes what stands there",
        ]
    digest = hashlib.sha256(b"asset:" + asset_id.encode() + b"\n" + hashlib.sha256(data).digest()).hexdigest()
    return Source(cells, tuple(palette), np.asarray(states, dtype=np.uint32), digest, tuple(warnings))


def load_part(part_id: str, parts: Mapping[str, PartBlocks] | None, registry: Registry, path: str) -> Source:
    pb = (parts or {}).get(part_id)
    if pb is None:
        raise McbError(
            ErrorCode.NOT_FOUND,
            f"{path}: part {part_id!r} was not supplied; paste names parts of this project "
            "(the journal attaches them — see part_get)",
            details={"path": path, "part_id": part_id},
        )
    if len(pb.states) == 0:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{path}: part {part_id!r} holds no blocks",
            details={"path": path, "part_id": part_id},
        )
    try:
        # a part keeps furniture as full states (state{data}, mcb_common.blockentity): the data rides along
        palette = tuple(registry.canonical(blockentity.strip(st)) + blockentity.split(st)[1] for st in pb.palette)
    except McbError as e:
        raise _at(path, e) from None
    xyz = np.asarray(pb.xyz, dtype=np.int64).reshape(-1, 3)
    states = np.asarray(pb.states, dtype=np.uint32)
    if len(xyz) != len(states) or (len(states) and int(states.max()) >= len(palette)):
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{path}: part {part_id!r} is malformed",
            details={"path": path, "part_id": part_id},
        )
    cells = xyz - xyz.min(axis=0)
    h = hashlib.sha256(b"part:" + part_id.encode() + b"\n")
    order = np.lexsort((cells[:, 0], cells[:, 2], cells[:, 1]))
    h.update(np.ascontiguousarray(cells[order]).astype("<i8").tobytes())
    h.update("\n".join(palette[i] for i in states[order].tolist()).encode())
    return Source(cells, palette, states, h.hexdigest())


def turn_cells(cells: np.ndarray, quarter_turns: int) -> np.ndarray:
    """(x, z) → (−z, x) per quarter turn clockwise seen from above (as schematics turn)."""
    out = cells.copy()
    for _ in range(quarter_turns % 4):
        x = out[:, 0].copy()
        out[:, 0] = -out[:, 2]
        out[:, 2] = x
    return out


class Sources:
    """The paste sources of one compilation, each loaded once (their sizes count before any cell exists)."""

    def __init__(
        self, registry: Registry, max_positions: int, assets: AssetReader | None, parts: Mapping[str, PartBlocks] | None
    ):
        self.registry = registry
        self.max_positions = max_positions
        self.assets = assets
        self.parts = parts
        self.loaded: dict[tuple[str, str], Source] = {}  # ("asset" | "part", id) → source
        self.warnings: list[str] = []

    def load(self, paste: PasteOp) -> Source:
        key = ("asset", paste.asset) if paste.asset is not None else ("part", paste.part or "")
        src = self.loaded.get(key)
        if src is None:
            if paste.asset is not None:
                src = load_asset(paste.asset, self.registry, self.max_positions, self.assets, f"{paste.path}.asset")
            else:
                src = load_part(key[1], self.parts, self.registry, f"{paste.path}.part")
            self.loaded[key] = src
            self.warnings.extend(src.warnings)
        return src
