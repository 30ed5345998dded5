"""The block registry of one Minecraft Java version, and state validation.

Loaded from the vendored ``data/blocks-<version>.json`` (npm ``minecraft-data``, MIT; see
``data/PROVENANCE.md``). ``Registry.canonical(text)`` turns any valid shorthand into the
canonical state string (blockstate.py) or raises ``unsupported_block`` with the nearest
valid names, properties or values.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .blockstate import BlockState, parse_state_text
from .errors import ErrorCode, McbError

# version -> (data file, DataVersion)
KNOWN_VERSIONS: dict[str, tuple[str, int]] = {
    "1.21.11": ("blocks-1.21.11.json", 4671),
}
DEFAULT_VERSION = "1.21.11"
AIR = "minecraft:air"
AIR_NAMES = frozenset({"minecraft:air", "minecraft:cave_air", "minecraft:void_air"})


@dataclass(frozen=True, slots=True)
class BlockType:
    name: str  # namespaced
    properties: tuple[tuple[str, tuple[str, ...]], ...]  # vanilla order, values in vanilla order
    default: tuple[tuple[str, str], ...]  # sorted by property name

    @property
    def default_state(self) -> BlockState:
        return BlockState(self.name, self.default)


class Registry:
    def __init__(self, version: str, blocks: dict[str, BlockType], data_version: int, sha256: str):
        self.version = version
        self.data_version = data_version
        self.sha256 = sha256
        self.blocks = blocks
        self._names = sorted(blocks)
        self._canonical = lru_cache(maxsize=65536)(self._canonical_uncached)

    # -- loading -------------------------------------------------------------------------
    @classmethod
    def load(cls, version: str = DEFAULT_VERSION) -> Registry:
        return _load(version)

    @classmethod
    def from_json_bytes(cls, version: str, data_version: int, raw: bytes) -> Registry:
        entries = json.loads(raw)
        blocks: dict[str, BlockType] = {}
        for e in entries:
            props: list[tuple[str, tuple[str, ...]]] = []
            for st in e.get("states") or []:
                if st["type"] == "bool":
                    values: tuple[str, ...] = ("true", "false")
                elif st["type"] == "int":
                    values = tuple(str(v) for v in st["values"])
                else:
                    values = tuple(st["values"])
                props.append((st["name"], values))
            # The default state id is a mixed-radix number over the properties, last fastest.
            idx = e["defaultState"] - e["minStateId"]
            default: dict[str, str] = {}
            for pname, values in reversed(props):
                default[pname] = values[idx % len(values)]
                idx //= len(values)
            name = f"minecraft:{e['name']}"
            blocks[name] = BlockType(name, tuple(props), tuple(sorted(default.items())))
        return cls(version, blocks, data_version, hashlib.sha256(raw).hexdigest())

    # -- queries -------------------------------------------------------------------------
    def __contains__(self, name: str) -> bool:
        return name in self.blocks

    def names(self) -> list[str]:
        return list(self._names)

    def canonical(self, text: str) -> str:
        """Canonical state string for ``text``; raises ``unsupported_block`` with suggestions."""
        return self._canonical(text)

    def parse(self, text: str) -> BlockState:
        name, props = parse_state_text(self.canonical(text))
        return BlockState(name, tuple(sorted(props.items())))

    def is_valid_canonical(self, text: str) -> bool:
        try:
            return self.canonical(text) == text
        except McbError:
            return False

    def _canonical_uncached(self, text: str) -> str:
        name, props = parse_state_text(text)
        bt = self.blocks.get(name)
        if bt is None:
            near = difflib.get_close_matches(name, self._names, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise McbError(
                ErrorCode.UNSUPPORTED_BLOCK,
                f"unknown block {name!r} in Minecraft {self.version}{hint}",
                details={"block": name, "suggestions": near},
            )
        allowed = dict(bt.properties)
        state = dict(bt.default)
        for k, v in props.items():
            if k not in allowed:
                valid = sorted(allowed) or ["(none)"]
                raise McbError(
                    ErrorCode.UNSUPPORTED_BLOCK,
                    f"{name} has no property {k!r}; its properties are {', '.join(valid)}",
                    details={"block": name, "property": k, "valid_properties": sorted(allowed)},
                )
            if v not in allowed[k]:
                raise McbError(
                    ErrorCode.UNSUPPORTED_BLOCK,
                    f"{name}: {k}={v} is not allowed; use one of {', '.join(allowed[k])}",
                    details={"block": name, "property": k, "valid_values": list(allowed[k])},
                )
            state[k] = v
        return str(BlockState(name, tuple(sorted(state.items()))))

    def summary(self) -> dict:
        return {
            "minecraftVersion": self.version,
            "dataVersion": self.data_version,
            "blockCount": len(self.blocks),
            "sha256": self.sha256,
            "source": "npm minecraft-data (MIT), vendored; see mcb_common/data/PROVENANCE.md",
        }


@lru_cache(maxsize=4)
def _load(version: str) -> Registry:
    if version not in KNOWN_VERSIONS:
        raise McbError(
            ErrorCode.VERSION_MISMATCH,
            f"no block registry for Minecraft {version}; known: {', '.join(KNOWN_VERSIONS)}",
        )
    fname, dv = KNOWN_VERSIONS[version]
    raw = resources.files("mcb_common").joinpath("data", fname).read_bytes()
    return Registry.from_json_bytes(version, dv, raw)
