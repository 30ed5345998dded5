"""Block categories the write path treats specially: block entities, fluids, gravity blocks,
redstone. Loaded from the vendored ``data/block_categories-<version>.json`` (see
``data/PROVENANCE.md``: the block-entity list follows minecraft.wiki's "Block entity format"
table of block entity ids and their blocks, mapped onto this registry's block names).

Why (ARCHITECTURE §3): the guaranteed building set excludes block entities (their contents
are not block states: overwriting a chest destroys its items, and a placed sign/chest has no
data), fluids (they flow: a write next to or into water changes more than the write set), and
gravity blocks whose support is removed (they fall). Redstone is classified for warnings only.

``BlockInfo.category(state)`` answers for any state text: ``"block_entity"``, ``"fluid"``
(water, lava, bubble columns, always-waterlogged plants, and any ``waterlogged=true`` state),
``"gravity"``, ``"redstone"`` or ``None``; block entity wins over the others.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .registry import AIR_NAMES, DEFAULT_VERSION

_FILES = {"1.21.11": "block_categories-1.21.11.json"}

BLOCK_ENTITY = "block_entity"
FLUID = "fluid"
GRAVITY = "gravity"
REDSTONE = "redstone"


_NAMES: dict[str, str] = {}  # state -> block name: a world holds few distinct states, asked per block


def _name(state: str) -> str:
    name = _NAMES.get(state)
    if name is None:
        name = state.split("{", 1)[0].split("[", 1)[0].strip()  # a full state may carry {data}
        name = name if ":" in name else f"minecraft:{name}"
        if len(_NAMES) < 65_536:
            _NAMES[state] = name
    return name


@dataclass(frozen=True)
class BlockInfo:
    version: str
    block_entity_of: dict[str, str]  # block name -> block entity id
    fluids: frozenset[str]
    gravity: frozenset[str]
    redstone: frozenset[str]

    @classmethod
    def load(cls, version: str = DEFAULT_VERSION) -> BlockInfo:
        return _load(version if version in _FILES else DEFAULT_VERSION)

    def block_entity(self, state: str) -> str | None:
        """The block entity id this block carries, or None."""
        return self.block_entity_of.get(_name(state))

    def is_fluid(self, state: str) -> bool:
        return _name(state) in self.fluids or "waterlogged=true" in state.split("{", 1)[0]

    def is_gravity(self, state: str) -> bool:
        return _name(state) in self.gravity

    def is_air(self, state: str) -> bool:
        return _name(state) in AIR_NAMES

    def supports(self, state: str) -> bool:
        """Whether a gravity block resting on ``state`` stays put (air and fluids do not hold
        it; vanilla also lets it fall through fire and other replaceable blocks — we only
        claim the common cases)."""
        n = _name(state)
        return n not in AIR_NAMES and n not in self.fluids

    def category(self, state: str) -> str | None:
        if self.block_entity(state):
            return BLOCK_ENTITY
        if self.is_fluid(state):
            return FLUID
        if self.is_gravity(state):
            return GRAVITY
        if _name(state) in self.redstone:
            return REDSTONE
        return None


@lru_cache(maxsize=4)
def _load(version: str) -> BlockInfo:
    raw = json.loads(resources.files("mcb_common").joinpath("data", _FILES[version]).read_text())
    be = {f"minecraft:{b}": be_id for be_id, blocks in raw["blockEntities"].items() for b in blocks}
    fl = raw["fluids"]
    return BlockInfo(
        version=version,
        block_entity_of=be,
        fluids=frozenset(f"minecraft:{b}" for b in fl["sources"] + fl["alwaysWaterlogged"]),
        gravity=frozenset(f"minecraft:{b}" for b in raw["gravity"]),
        redstone=frozenset(f"minecraft:{b}" for b in raw["redstone"]),
    )
