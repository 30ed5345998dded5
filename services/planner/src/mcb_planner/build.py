"""The write set under construction, and what every shape's ``write`` step shares.

* packed keys: ``(y + 64) << 52 | (z + 2^25) << 26 | (x + 2^25)`` (invariant: positions are
  inside the world, which the bounds check guarantees); ordering keys orders positions by
  (y, z, x), the deterministic output order;
* ``Blocks``: block texts → canonical states → table indexes, oriented per frame (a turned
  stair is another state), with the connection properties the text spells out (connect.py);
* ``Build``: the placements' keys and states in order (later operations win), the world's
  regions read so far (``replace``, ``overlay``, ``foundation`` see the world as the earlier
  operations leave it) and the digest of everything read besides the recipe.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import WORLD_XZ_LIMIT, Box
from mcb_common.registry import AIR_NAMES, Registry

from . import connect, furniture, shapes, sources
from .sources import RegionReader

if TYPE_CHECKING:
    from .placement import Frame, Placement

# The overworld's build heights since 1.18 (every version the registry knows).
WORLD_MIN_Y = -64
WORLD_MAX_Y = 319

XZ_OFF = 1 << 25  # > WORLD_XZ_LIMIT, so x + XZ_OFF fits 26 bits
MASK26 = (1 << 26) - 1
assert XZ_OFF > WORLD_XZ_LIMIT


def pack(cells: np.ndarray) -> np.ndarray:
    """(N, 3) cells inside the world → int64 keys ordered like (y, z, x)."""
    return ((cells[:, 1] - WORLD_MIN_Y) << 52) | ((cells[:, 2] + XZ_OFF) << 26) | (cells[:, 0] + XZ_OFF)


def unpack(keys: np.ndarray) -> np.ndarray:
    out = np.empty((len(keys), 3), dtype=np.int64)
    out[:, 0] = (keys & MASK26) - XZ_OFF
    out[:, 1] = (keys >> 52) + WORLD_MIN_Y
    out[:, 2] = ((keys >> 26) & MASK26) - XZ_OFF
    return out


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def budget(message: str, limit: str, value: int, maximum: int, **details: Any) -> McbError:
    return McbError(
        ErrorCode.BUDGET_EXCEEDED,
        message,
        details={"limit": limit, "value": value, "max": maximum, **details},
    )


def box_text(b: Box) -> str:
    return f"x {b.min.x}..{b.max.x}, y {b.min.y}..{b.max.y}, z {b.min.z}..{b.max.z}"


def salt(name: str) -> int:
    return int.from_bytes(hashlib.sha256(b"mcb-palette:" + name.encode()).digest()[:8], "little")


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over uint64 (wrapping arithmetic): a well-mixed hash."""
    x = x.copy()
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def choose(keys: np.ndarray, options: tuple[tuple[int, int], ...], salt: int, seed: int) -> np.ndarray:
    """Weighted choice per packed position key: a pure function of (seed, palette name,
    position), so it does not depend on operation order, repeats or other shapes."""
    if len(options) == 1:
        return np.full(len(keys), options[0][0], dtype=np.uint32)
    base = np.uint64((seed * 0x9E3779B97F4A7C15 + salt) & 0xFFFFFFFFFFFFFFFF)
    h = _mix64(keys.astype(np.uint64) ^ base)
    total = sum(w for _, w in options)
    r = h % np.uint64(total)
    bounds = np.cumsum([w for _, w in options]).astype(np.uint64)
    idx = np.searchsorted(bounds, r, side="right")
    states = np.array([s for s, _ in options], dtype=np.uint32)
    return states[idx]


def _canonical(registry: Registry, text: str, path: str) -> str:
    try:
        return furniture.canonical(registry, text, path)  # block-entity data and leaves too
    except McbError as e:
        if "path" in e.details:  # already names its exact place (e.g. ….block_entity.items[0].count)
            raise
        raise McbError(e.code, f"{path}: {e.message}", e.retryable, {**e.details, "path": path}) from None


class Blocks:
    """Block texts of one recipe → canonical states (checked against the registry) → indexes
    of one table, per orientation; palette entries with their weighted choices."""

    def __init__(self, registry: Registry, palette: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]):
        self.registry = registry
        self.canon: dict[str, str] = {}  # block text as written → canonical state
        self.table: dict[str, int] = {}  # canonical state → index
        self.palette_opts: dict[str, tuple[tuple[str, int], ...]] = {}  # palette name → canonical choices
        self.raw_palette = dict(palette)
        self.used_palette: set[str] = set()
        self.filters: dict[str, tuple[sources.FilterEntry, ...]] = {}  # replace path → its filter
        self._oriented: dict[tuple[str, bool, int], int] = {}  # (canonical, mirrored, turns) → index
        for name, choices in palette:
            out = []
            for i, (text, weight) in enumerate(choices):
                if text not in self.canon:
                    where = f"palette.{name}" if len(choices) == 1 else f"palette.{name}[{i}].block"
                    self.canon[text] = _canonical(registry, text, where)
                out.append((self.canon[text], weight))
            self.palette_opts[name] = tuple(out)

    def add(self, text: str, where: str) -> None:
        """A block text (or ``$name``) a shape writes, checked once."""
        if text.startswith("$"):
            self.used_palette.add(text[1:])
        elif text not in self.canon:
            self.canon[text] = _canonical(self.registry, text, where)

    def index(self, state: str, flipped: bool, k: int) -> int:
        key = (state, flipped, k)
        i = self._oriented.get(key)
        if i is None:
            s2 = (
                furniture.persist(state)
                if not flipped and k == 0
                else furniture.persist(
                    furniture.turn(state, self.registry, mirror_axis="x" if flipped else None, quarter_turns=k)
                )
            )
            i = self._oriented[key] = self.table.setdefault(s2, len(self.table))
        return i

    def intern(self, state: str) -> int:
        return self.table.setdefault(state, len(self.table))

    @staticmethod
    def pin(text: str, flipped: bool, k: int) -> int:
        """Connection properties the text spells out, in the world frame (connect.py)."""
        return connect.turn_pins(connect.pins_of(text), flipped, k) << connect.PIN_SHIFT

    def options(self, text: str, frame: Frame) -> tuple[tuple[tuple[int, int], ...], int]:
        """(state index, weight) choices and the palette salt of a block text placed by ``frame``."""
        flipped, k = frame.orientation()
        if text.startswith("$"):
            name = text[1:]
            opts = tuple(
                (self.index(st, flipped, k) | self.pin(raw, flipped, k), w)
                for (st, w), (raw, _) in zip(self.palette_opts[name], self.raw_palette[name], strict=True)
            )
            return opts, salt(name)
        return ((self.index(self.canon[text], flipped, k) | self.pin(text, flipped, k), 1),), 0

    def is_air(self) -> np.ndarray:
        return np.array([n.split("[", 1)[0] in AIR_NAMES for n in self.table], dtype=bool)


class Build:
    """The write set so far: keys and states per placement, in recipe order."""

    def __init__(
        self, blocks: Blocks, world: RegionReader | None, seed: int, pasted: Mapping[tuple[str, str], sources.Source]
    ):
        self.blocks = blocks
        self.world = world
        self.seed = seed
        self.keys_parts: list[np.ndarray] = []
        self.state_parts: list[np.ndarray] = []
        self.explicit_parts: list[np.ndarray] = []  # as the placements wrote them (no partners)
        self.explicit_states: list[np.ndarray] = []
        self.added_parts: list[np.ndarray] = []  # the other halves of two-part blocks
        self.unmatched: list[str] = []  # replace placements that matched nothing
        self.reads: dict[Box, tuple[np.ndarray, np.ndarray]] = {}
        self.inputs = hashlib.sha256()  # what was read besides the recipe (part of the recipe hash)
        self.read_neighbours = False  # connect.finish read the world around the write set
        for key in sorted(pasted):
            self.inputs.update(f"{key[0]}:{key[1]}={pasted[key].digest}\n".encode())

    def add(self, p: Placement) -> None:
        k_, s_ = p.shape.write(p, self)
        self.explicit_parts.append(k_)
        self.explicit_states.append(s_)
        # doors, beds, tall plants: the other half joins the placement (connect.py)
        cand = (
            {o & connect.INDEX_MASK for o, _ in p.options}
            if p.options and not p.shape.reads_world_states
            else set(np.unique(s_ & connect.INDEX_MASK).tolist())
        )
        now = list(self.blocks.table)
        version = self.blocks.registry.version
        if any(connect.info(now[i], version).cat in connect.TWO_PART for i in cand):
            k_, s_, add = connect.add_partners(k_, s_, now, self.blocks.intern, version)
            if len(add):
                self.added_parts.append(add)
        self.keys_parts.append(k_)
        self.state_parts.append(s_)

    def choose(self, keys: np.ndarray, p: Placement, options: tuple[tuple[int, int], ...] | None = None) -> np.ndarray:
        """A state per key: ``options`` (default: the placement's), weighted by the recipe's seed."""
        return choose(keys, p.options if options is None else options, p.salt, self.seed)

    def collapse(self) -> tuple[np.ndarray, np.ndarray]:
        """The write set so far as sorted distinct keys (later operations win)."""
        if not self.keys_parts:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.uint32)
        all_keys = np.concatenate(self.keys_parts)
        all_states = np.concatenate(self.state_parts)
        keys_, first = np.unique(all_keys[::-1], return_index=True)
        states_ = all_states[::-1][first]
        self.keys_parts[:] = [keys_]
        self.state_parts[:] = [states_]
        return keys_, states_

    def merged(self) -> tuple[np.ndarray, np.ndarray]:
        """Every placement's keys and states merged: sorted distinct keys, later operations win."""
        if len(self.keys_parts) == 1:
            order = np.argsort(self.keys_parts[0], kind="stable")  # one shape's cells are distinct
            return self.keys_parts[0][order], self.state_parts[0][order]
        all_keys = np.concatenate(self.keys_parts)
        all_states = np.concatenate(self.state_parts)
        # Later operations win: keep each key's *last* occurrence, i.e. the first one of the
        # reversed arrays (np.unique's return_index is stable and picks first occurrences).
        keys, first = np.unique(all_keys[::-1], return_index=True)
        return keys, all_states[::-1][first]

    def read(self, p: Placement, box: Box) -> tuple[np.ndarray, np.ndarray]:
        """The world's states of ``box`` (YZX): (table index per world palette entry, world index per position)."""
        got = self.reads.get(box)
        if got is not None:
            return got
        what = p.shape.NAME
        if self.world is None:
            raise McbError(
                ErrorCode.UNAVAILABLE,
                f"{p.where()}: {what} reads the world's current states, and this planner "
                "has no world reader configured",
                details={"path": p.shape.path},
            )
        try:
            wpal, widx = self.world(box)
        except McbError as e:
            if e.code != ErrorCode.NOT_FOUND:
                raise
            raise McbError(
                ErrorCode.NOT_FOUND,
                f"{p.where()}: cannot read the {what} region {box_text(box)}: {e.message}",
                details={**e.details, "path": p.shape.path, "region": box.as_dict()},
            ) from None
        widx = np.asarray(widx, dtype=np.int64)
        if len(widx) != box.volume or (len(widx) and int(widx.max()) >= len(wpal)):
            raise McbError(
                ErrorCode.INTERNAL,
                f"the world host answered {len(widx)} positions for {box_text(box)} ({box.volume} expected)",
            )
        wmap = np.empty(len(wpal), dtype=np.int64)
        for i, st in enumerate(wpal):
            try:
                c = self.blocks.registry.canonical(st)
            except McbError:
                c = st  # a state this registry does not know: never matches a filter
            wmap[i] = self.blocks.intern(c)
        self.inputs.update(f"region {box_text(box)}\n".encode())
        self.inputs.update(canonical_json(list(wpal)))
        self.inputs.update(widx.astype("<u2").tobytes())
        got = self.reads[box] = (wmap, widx)
        return got

    def as_left(self, keys: np.ndarray, cur: np.ndarray) -> np.ndarray:
        """``cur`` (table index per key) with the positions earlier operations wrote replaced by those states."""
        mk, ms = self.collapse()
        if len(mk):
            pos = np.minimum(np.searchsorted(mk, keys), len(mk) - 1)
            hit = mk[pos] == keys
            cur = np.where(hit, (ms[pos] & connect.INDEX_MASK).astype(np.int64), cur)
        return cur

    def current(self, p: Placement, box: Box) -> np.ndarray:
        """Table index per position of ``box`` (YZX): the world as the earlier operations leave it."""
        wmap, widx = self.read(p, box)
        cur = wmap[widx]
        if self.keys_parts:
            cur = self.as_left(pack(shapes.box_cells(box.min, box.max, False)), cur)
        return cur
