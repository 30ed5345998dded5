"""Connection states and two-part blocks, computed from the final neighbourhood.

After a recipe's write set is merged, the states the game derives from neighbours are filled
in, so an agent writes ``oak_fence`` and gets a fence that joins its neighbours. The
neighbourhood is the plan plus the world around it: the bounding box of the connectable cells
grown by one block on every side is read through the planner's world port (the same
``region_read`` as ``replace``); positions the plan writes win over the world. A property the
recipe spells out (``glass_pane[north=true]``) is *pinned* and kept as written; pasted
schematics and parts keep all their states (they were saved connected). World blocks outside
the plan are never changed: when the game would re-shape one (a world fence next to a new
fence) a warning counts them.

Sources (restated here in our own terms, nothing copied): minecraft.wiki *Wall* (read through
the search tool: "a center post … unless connecting to only two opposite sides or all four
sides"; walls join panes and bars and gates but not fences) and *Block states* (bed ``facing``
is where the head points); the game's block classes as they appear in public mod and
decompiled-mapping repositories, read through the search tool (``StairBlock.getStairsShape``
with ``canTakeShape``, ``DoorBlock.getHinge``, ``ChestBlock.getConnectedDirection``: ``left``
means the partner is clockwise of ``facing``); the fence, pane, wire and tall-plant rules as
the game behaves (``FenceBlock.connectsTo``, ``IronBarsBlock.attachsTo``,
``RedStoneWireBlock.getConnectingSide``) from our knowledge of it, checked by the golden tests
in ``tests/test_connect.py``:

* fence: a side connects to a fence of the same family (every wooden fence together; nether
  brick fences only together), to a fence gate whose span runs along that side's axis
  (gate ``facing`` perpendicular to the side), and to a *full solid* block that is not one of
  the connection exceptions (leaves, barrier, pumpkins, carved pumpkins, jack o'lanterns,
  melons, shulker boxes).
* glass pane / iron bars / copper bars: to panes and bars (any kind), walls, and full solid
  blocks that are not exceptions.
* wall: to walls, panes/bars, gates spanning that axis and full solid non-exception blocks.
  A connected side is ``tall`` when the block above the wall is full solid or a wall
  connected on the same side, else ``low``; ``up`` (the post) is true when the wall above has
  a post, when the sides are not one straight line (an end, a corner, a T, a lone post), or —
  for a straight low wall — when the block above is full solid, a fence, a wall post or one of
  the post-override blocks (torches, signs, banners, pressure plates, lanterns); a straight
  tall wall has no post.
* stairs: ``shape`` from the stairs in front (on the ``facing`` side) and behind, same half,
  turned 90°: in front → outer corner, behind → inner corner; left/right relative to the
  facing (``StairBlock`` rule including its "can take shape" test against the side stairs).
* redstone wire (simplified, stated honestly): a side is ``up`` when the block above the wire
  is not a conductor, the side block is a full solid block and wire lies on top of it;
  ``side`` when the side block is wire, a repeater along that axis, an observer facing away,
  another signal source (torch, lever, button, pressure plate, redstone block, comparator,
  daylight detector, target, tripwire hook, trapped chest, detector rail, lectern, sculk
  sensors, lightning rod) or, when the side block is not a conductor, wire one block lower;
  else ``none``; then the game's placement rule: a wire with no connection on an axis gets
  ``side`` on both ends of the other axis when that axis has none either (a lone dust is a
  cross, a one-sided dust a line). "Conductor" = a full solid block that minecraft-data does
  not mark transparent (glass and ice are not conductors); power levels are not computed.
* chest (chest, trapped chest, each copper chest kind): two plan chests of the same block with
  the same facing that are side by side pair up — the one whose partner lies clockwise of its
  facing is ``left``, the other ``right``; along a run of three or more, pairs form from the
  run's counter-clockwise end. World chests are not paired with (they would have to change).
* door: the upper half is added above the lower (or the lower under a lone upper), sharing
  facing/hinge/open/powered (taken from the lower, as the game's half sync does). Unpinned
  ``hinge``: next to a door of the same kind on its left → right; on its right → left;
  otherwise full solid blocks on the left (−1 each, both heights) and right (+1) decide
  (score > 0 → right), else ``left`` (a tie is the game's centre-click case: left).
* bed: the head is added one block along ``facing`` from the foot (or the foot behind a lone
  head); tall plants (``half`` upper/lower: sunflower, lilac, rose bush, peony, tall grass,
  large fern, pitcher plant, small dripleaf, tall seagrass): the upper half above the lower.
  An added half must land on air (or a replaceable plant/snow layer) or on a position the plan
  writes itself, inside the area and the world: else the plan is refused (``conflict`` with
  ``details.reason = "other_half_blocked"``, or ``out_of_bounds``).
* halves the recipe writes both (``check_halves``): they must be one block — the same block,
  the two halves, and the properties the game keeps in step agreeing: a bed's ``facing`` (the
  game's ``BedBlock.updateShape`` keeps a half only while the same bed's other part lies along
  its facing: a head that faces elsewhere is an orphan), a door's ``facing``, ``open``,
  ``powered`` and, when both spell it out, ``hinge`` (``DoorBlock.updateShape`` copies them from
  the other half, so one of the two would silently change). Else the plan is refused
  (``invalid_request``, ``details.reason = "halves_disagree"``, with both positions).
* fence and pane sides the recipe spells out are kept (pinned) — one that contradicts its
  neighbours (``north=true`` with nothing there that joins, or ``false`` beside a block that
  does) is warned about with its positions: the game re-shapes it at the next neighbour update.

"Full solid" is an approximation from minecraft-data's bounding box ("block") minus the
shapes known not to be full cubes (slabs, stairs, fences, walls, panes, doors, trapdoors,
chests, beds, carpets, plates, buttons, lanterns, chains, rods, anvils, hoppers, cauldrons,
heads, pots, candles, cakes, snow layers, paths, farmland, scaffolding, …).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, overload

import numpy as np
from mcb_common.blockstate import BlockState, parse_state_text
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_common.registry import AIR_NAMES, Registry

# -- pins: which connection properties the recipe spelled out ---------------------------------
# Packed above the state index in the compiler's uint32 states (compile.py).
PIN_SHIFT = 20
INDEX_MASK = (1 << PIN_SHIFT) - 1
PIN_N, PIN_E, PIN_S, PIN_W = 1, 2, 4, 8
PIN_UP, PIN_SHAPE, PIN_TYPE, PIN_HINGE, PIN_INWALL, PIN_ALL = 16, 32, 64, 128, 256, 512
_PIN_OF = {
    "north": PIN_N,
    "east": PIN_E,
    "south": PIN_S,
    "west": PIN_W,
    "up": PIN_UP,
    "shape": PIN_SHAPE,
    "type": PIN_TYPE,
    "hinge": PIN_HINGE,
    "in_wall": PIN_INWALL,
}
_SIDES = (PIN_N, PIN_E, PIN_S, PIN_W)  # clockwise from north


def pins_of(text: str) -> int:
    """The pin bits of a block text as written (properties it names)."""
    if "[" not in text:
        return 0
    try:
        _, props = parse_state_text(text.split("{", 1)[0])
    except McbError:
        return 0
    out = 0
    for k in props:
        out |= _PIN_OF.get(k, 0)
    return out


def turn_pins(mask: int, mirrored: bool, quarter_turns: int) -> int:
    """Pins in the world frame: mirror x (east ↔ west) first, then quarter turns clockwise."""
    sides = [bool(mask & b) for b in _SIDES]  # n, e, s, w
    if mirrored:
        sides = [sides[0], sides[3], sides[2], sides[1]]
    k = quarter_turns % 4
    sides = sides[-k:] + sides[:-k] if k else sides
    out = mask & ~(PIN_N | PIN_E | PIN_S | PIN_W)
    for b, on in zip(_SIDES, sides, strict=True):
        if on:
            out |= b
    return out


# -- block classes ----------------------------------------------------------------------------
DIRS = ("north", "east", "south", "west")
_DXZ = ((0, -1), (1, 0), (0, 1), (-1, 0))
_XZ_OFF = 1 << 25
_NON_FULL = re.compile(
    r"(_slab|_stairs|_fence|_fence_gate|_wall|_pane|_bars|_door|_trapdoor|_bed|chest|_carpet|"
    r"_pressure_plate|_button|lantern|chain|lightning_rod|end_rod|anvil|hopper|cauldron|lectern|"
    r"enchanting_table|brewing_stand|grindstone|stonecutter|bell|campfire|candle|cake|_head|_skull|"
    r"flower_pot|potted_.*|snow|farmland|dirt_path|daylight_detector|repeater|comparator|"
    r"scaffolding|bamboo|cactus|conduit|dragon_egg|turtle_egg|sniffer_egg|sea_pickle|_sign|_banner|"
    r"ladder|azalea|piston_head|moving_piston|shulker_box|pointed_dripstone|amethyst_cluster|_bud|"
    r"big_dripleaf.*|chorus_plant|decorated_pot|frogspawn|heavy_core|lily_pad|cocoa|composter|"
    r"dried_ghast|_shelf|copper_golem_statue|mangrove_roots|_leaves|barrier|bed)$"
)
_EXCEPTIONS = re.compile(r"(_leaves|barrier|carved_pumpkin|jack_o_lantern|melon|pumpkin|shulker_box)$")
_SIGNAL = re.compile(
    r"(redstone_block|redstone_torch|redstone_wall_torch|lever|_button|_pressure_plate|"
    r"daylight_detector|comparator|target|tripwire_hook|trapped_chest|detector_rail|lectern|"
    r"sculk_sensor|lightning_rod)$"
)
_POST_OVERRIDE = re.compile(r"(torch|_sign|_banner|_pressure_plate|lantern|tripwire)$")
_REPLACEABLE = frozenset(
    {
        "short_grass",
        "fern",
        "dead_bush",
        "bush",
        "short_dry_grass",
        "snow",
        "vine",
        "glow_lichen",
        "light",
        "structure_void",
        "fire",
        "soul_fire",
        "crimson_roots",
        "warped_roots",
        "nether_sprouts",
        "hanging_roots",
        "leaf_litter",
        "resin_clump",
    }
)

# categories (small ints, one per class of connectable block)
FENCE, GATE, PANE, WALL, STAIRS, WIRE, CHEST, DOOR, BED, TALL = range(1, 11)


@lru_cache(maxsize=2)
def _raw(version: str) -> dict[str, dict]:
    from mcb_common.registry import KNOWN_VERSIONS

    fname = KNOWN_VERSIONS[version][0]
    raw = json.loads(resources.files("mcb_common").joinpath("data", fname).read_bytes())
    return {f"minecraft:{e['name']}": e for e in raw}


@dataclass(frozen=True, slots=True)
class Info:
    """What the rules need to know about one state."""

    cat: int  # 0 or one of the categories
    full: bool  # full solid cube (sturdy faces)
    exception: bool
    conductor: bool
    signal: bool
    air: bool
    replaceable: bool
    facing: int  # 0..3 (n, e, s, w) or −1
    top: bool  # stairs half=top
    family: str  # fence family / block name for chests and doors
    lower: bool  # door/tall plant half=lower, bed part=foot
    sides: tuple[str, ...]  # current n/e/s/w values (for world walls/wires)
    up: bool  # wall up
    post_override: bool
    repeater_axis: int  # repeater facing axis 0 (n-s) / 1 (e-w), −1 else
    observer: int  # observer facing 0..3, −1 else


@lru_cache(maxsize=8192)
def info(state: str, version: str) -> Info:
    name, props = parse_state_text(state.split("{", 1)[0])  # 13C: a full state may carry {block-entity data}
    short = name.removeprefix("minecraft:")
    raw = _raw(version).get(name)
    air = name in AIR_NAMES
    full = bool(raw and raw.get("boundingBox") == "block" and not _NON_FULL.search(short))
    facing = DIRS.index(props["facing"]) if props.get("facing") in DIRS else -1
    cat = 0
    if short.endswith("_fence_gate"):
        cat = GATE
    elif short.endswith("_fence"):
        cat = FENCE
    elif short.endswith("glass_pane") or short.endswith("_bars") or short == "iron_bars":
        cat = PANE
    elif short.endswith("_wall") and props.get("north") in ("none", "low", "tall"):
        cat = WALL
    elif short.endswith("_stairs"):
        cat = STAIRS
    elif short == "redstone_wire":
        cat = WIRE
    elif props.get("type") in ("single", "left", "right") and short.endswith("chest"):
        cat = CHEST
    elif short.endswith("_door") and "hinge" in props:
        cat = DOOR
    elif short.endswith("_bed") and "part" in props:
        cat = BED
    elif props.get("half") in ("upper", "lower"):
        cat = TALL
    family = name
    if cat == FENCE:
        family = "nether" if short == "nether_brick_fence" else "wood"
    lower = props.get("half") == "lower" or props.get("part") == "foot"
    return Info(
        cat=cat,
        full=full,
        exception=bool(_EXCEPTIONS.search(short)),
        conductor=full and not (raw or {}).get("transparent", False),
        signal=bool(_SIGNAL.search(short)),
        air=air,
        replaceable=air or short in _REPLACEABLE and props.get("layers", "1") == "1",
        facing=facing,
        top=props.get("half") == "top",
        family=family,
        lower=lower,
        sides=tuple(props.get(d, "") for d in DIRS),
        up=props.get("up") == "true",
        post_override=bool(_POST_OVERRIDE.search(short)),
        repeater_axis=facing % 2 if short == "repeater" and facing >= 0 else -1,
        observer=facing if short == "observer" else -1,
    )


CONNECTABLE = frozenset({FENCE, GATE, PANE, WALL, STAIRS, WIRE, CHEST, DOOR})
TWO_PART = frozenset({DOOR, BED, TALL})


# -- packed keys -----------------------------------------------------------------------------
def _key_delta(dx: int, dy: int, dz: int) -> int:
    return (dy << 52) + (dz << 26) + dx


def _unpack(keys: np.ndarray) -> np.ndarray:
    m26 = (1 << 26) - 1
    return np.stack([(keys & m26) - _XZ_OFF, (keys >> 52) - 64, ((keys >> 26) & m26) - _XZ_OFF], axis=1)


# -- two-part blocks --------------------------------------------------------------------------
def partner(state: str, version: str) -> tuple[tuple[int, int, int], str] | None:
    """(offset, state) of the other half of a two-part block, or None."""
    inf = info(state, version)
    if inf.cat not in TWO_PART:
        return None
    bs = BlockState(*_split(state))
    if inf.cat == BED:
        if inf.facing < 0:
            return None
        dx, dz = _DXZ[inf.facing]
        if inf.lower:
            return (dx, 0, dz), str(bs.with_props(part="head"))
        return (-dx, 0, -dz), str(bs.with_props(part="foot"))
    if inf.lower:
        return (0, 1, 0), str(bs.with_props(half="upper"))
    return (0, -1, 0), str(bs.with_props(half="lower"))


def _data_split(full: str) -> tuple[str, str]:
    """``state{data}`` → (state, "{data}" or "") — block-entity data rides on the state text."""
    i = full.find("{")
    return (full, "") if i < 0 else (full[:i], full[i:])


def _split(state: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    name, props = parse_state_text(state.split("{", 1)[0])
    return name, tuple(sorted(props.items()))


def add_partners(
    keys: np.ndarray, states: np.ndarray, names: Sequence[str], intern: Callable[[str], int], version: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One placement's cells plus the missing halves of its two-part blocks (same pins).

    Returns (keys, states, added keys). A half is added only where the placement itself does
    not write; the final check (``finish``) refuses halves that do not match."""
    idx = states & INDEX_MASK
    uniq = np.unique(idx)
    extra_k, extra_s = [], []
    for u in uniq.tolist():
        pr = partner(names[u], version)
        if pr is None:
            continue
        (dx, dy, dz), other = pr
        sel = idx == u
        k2 = keys[sel] + _key_delta(dx, dy, dz)
        s2 = (states[sel] & ~np.uint32(INDEX_MASK)) | np.uint32(intern(other))
        extra_k.append(k2)
        extra_s.append(s2)
    if not extra_k:
        return keys, states, np.empty(0, dtype=np.int64)
    k2 = np.concatenate(extra_k)
    s2 = np.concatenate(extra_s)
    order = np.argsort(keys)
    sk = keys[order]
    pos = np.minimum(np.searchsorted(sk, k2), len(sk) - 1)
    new = sk[pos] != k2
    k2, s2 = k2[new], s2[new]
    k2, first = np.unique(k2, return_index=True)  # two halves may claim one position
    s2 = s2[first]
    return np.concatenate([keys, k2]), np.concatenate([states, s2.astype(np.uint32)]), k2


# -- the neighbourhood ------------------------------------------------------------------------
class Hood:
    """State index at any packed key: the plan where it writes, else the world read around the
    connectable cells (air outside it). Within the neighbourhood box (≤ the read limit) both
    live in one dense grid, so a lookup is an index computation; a larger box falls back to a
    binary search in the plan's sorted keys, the world then being air."""

    def __init__(
        self, keys: np.ndarray, idx: np.ndarray, box: Box, world_idx: np.ndarray | None, air: int, dense: bool
    ):
        self.keys, self.idx, self.box, self.air = keys, idx, box, air
        self.dense = dense
        if dense:
            self.wgrid = world_idx if world_idx is not None else np.full(box.volume, air, dtype=np.int64)
            self.grid = self.wgrid.copy()
            self.plan = np.zeros(box.volume, dtype=bool)
            f, ok = self._flat(keys)
            self.grid[f[ok]] = idx[ok]
            self.plan[f[ok]] = True

    def _flat(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        b = self.box
        m26 = (1 << 26) - 1
        x = (q & m26) - _XZ_OFF - b.min.x
        y = (q >> 52) - 64 - b.min.y
        z = ((q >> 26) & m26) - _XZ_OFF - b.min.z
        sx, sy, sz = b.size.x, b.size.y, b.size.z
        ok = (x >= 0) & (x < sx) & (y >= 0) & (y < sy) & (z >= 0) & (z < sz)
        return (y * sz + z) * sx + x, ok

    def _lookup(self, arr: np.ndarray, q: np.ndarray, default) -> np.ndarray:
        f, ok = self._flat(q)
        out = np.full(len(q), default, dtype=arr.dtype)
        out[ok] = arr[f[ok]]
        return out

    def at(self, q: np.ndarray) -> np.ndarray:
        if self.dense:
            return self._lookup(self.grid, q, self.air)
        out = np.full(len(q), self.air, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.keys, q), len(self.keys) - 1)
        hit = self.keys[pos] == q
        out[hit] = self.idx[pos[hit]]
        return out

    def world_at(self, q: np.ndarray) -> np.ndarray:
        if self.dense:
            return self._lookup(self.wgrid, q, self.air)
        return np.full(len(q), self.air, dtype=np.int64)

    def in_plan(self, q: np.ndarray) -> np.ndarray:
        if self.dense:
            return self._lookup(self.plan, q, False)
        pos = np.minimum(np.searchsorted(self.keys, q), len(self.keys) - 1)
        return self.keys[pos] == q


@dataclass
class Tables:
    """Per-state-index attribute arrays (grown as the table grows)."""

    names: list[str]
    version: str

    def __post_init__(self) -> None:
        infos = [info(n, self.version) for n in self.names]
        self.infos = infos
        a = lambda f: np.array([f(i) for i in infos])  # noqa: E731
        self.cat = a(lambda i: i.cat).astype(np.int64)
        self.full = a(lambda i: i.full).astype(bool)
        self.exc = a(lambda i: i.exception).astype(bool)
        self.cond = a(lambda i: i.conductor).astype(bool)
        self.signal = a(lambda i: i.signal).astype(bool)
        self.facing = a(lambda i: i.facing).astype(np.int64)
        self.top = a(lambda i: i.top).astype(bool)
        self.wood = a(lambda i: i.cat == FENCE and i.family == "wood").astype(bool)
        self.up = a(lambda i: i.up).astype(bool)
        self.post_override = a(lambda i: i.post_override).astype(bool)
        self.rep_axis = a(lambda i: i.repeater_axis).astype(np.int64)
        self.observer = a(lambda i: i.observer).astype(np.int64)
        self.solid = self.full & ~self.exc
        gate = self.cat == GATE
        fence = self.cat == FENCE
        # per direction d (from the block to its neighbour): what a fence/pane/wall joins there
        self.gate_span = [gate & (self.facing >= 0) & (self.facing % 2 != d % 2) for d in range(4)]
        self.fence_wood = [(fence & self.wood) | g | self.solid for g in self.gate_span]
        self.fence_nether = [(fence & ~self.wood) | g | self.solid for g in self.gate_span]
        self.pane_joins = (self.cat == PANE) | (self.cat == WALL) | self.solid
        self.wall_joins = [(self.cat == WALL) | (self.cat == PANE) | g | self.solid for g in self.gate_span]
        self.side_on = np.array([[s not in ("", "none", "false") for s in i.sides] for i in infos], dtype=bool).reshape(
            len(infos), 4
        )


@dataclass(frozen=True)
class Outcome:
    states: np.ndarray  # uint32 table indexes (pins stripped)
    warnings: tuple[str, ...]
    read: tuple[Box, Sequence[str], np.ndarray] | None  # the world box read, for the hash


@overload
def _cw(d: int) -> int: ...
@overload
def _cw(d: np.ndarray) -> np.ndarray: ...
def _cw(d: np.ndarray | int) -> np.ndarray | int:
    return (d + 1) % 4


@overload
def _ccw(d: int) -> int: ...
@overload
def _ccw(d: np.ndarray) -> np.ndarray: ...
def _ccw(d: np.ndarray | int) -> np.ndarray | int:
    return (d + 3) % 4


# A rule's computed properties (see _restate): a property to a bool array or to (codes, vocabulary).
Props = Mapping[str, "np.ndarray | tuple[np.ndarray, tuple[str, ...]]"]


WorldRead = Callable[[Box], tuple[Sequence[str], np.ndarray]]


def finish(
    keys: np.ndarray,
    packed: np.ndarray,
    table: dict[str, int],
    registry: Registry,
    world: WorldRead | None,
    added: np.ndarray,
    explicit: Sequence[np.ndarray],
    area: Box | None,
    world_y: tuple[int, int],
    max_read: int,
) -> Outcome:
    """Connection states and two-part checks over the merged write set (sorted ``keys``)."""
    version = registry.version
    idx = (packed & INDEX_MASK).astype(np.int64)
    pins = (packed >> PIN_SHIFT).astype(np.int64)

    def intern(state: str) -> int:
        return table.setdefault(state, len(table))

    air = intern("minecraft:air")
    names = list(table)
    cat = np.array([info(n, version).cat for n in names], dtype=np.int64)[idx]
    warnings: list[str] = []
    interesting = (cat > 0) & (pins & PIN_ALL == 0)
    if not interesting.any() and not len(added):
        return Outcome(idx.astype(np.uint32), (), None)

    # the world around the connectable cells
    wbox = widx = None
    read_info = None
    sel_keys = keys[interesting] if interesting.any() else added
    if len(added):
        sel_keys = np.concatenate([sel_keys, added])
    xyz = _unpack(sel_keys)
    lo = xyz.min(axis=0) - 1
    hi = xyz.max(axis=0) + 1
    lo[1] = max(int(lo[1]), world_y[0])
    hi[1] = min(int(hi[1]), world_y[1])
    box = Box(Vec3(*map(int, lo)), Vec3(*map(int, hi)))
    if world is None:
        pass  # a planner without a world port (tests, the core alone): the world is air
    elif box.volume > max_read:
        warnings.append(
            f"connection states were computed from the plan alone: the neighbourhood "
            f"{box.volume:,} positions is above the planner's read limit {max_read:,}"
        )
    else:
        try:
            wpal, wi = world(box)
        except McbError as e:
            if e.code != ErrorCode.NOT_FOUND:
                raise
            warnings.append(
                f"connection states: part of the neighbourhood was never generated ({e.message}); it is taken as air"
            )
        else:
            wi = np.asarray(wi, dtype=np.int64)
            wmap = np.empty(len(wpal), dtype=np.int64)
            for i, st in enumerate(wpal):
                try:
                    wmap[i] = intern(registry.canonical(st))
                except McbError:
                    wmap[i] = air  # a state this registry does not know: no connection
            wbox, widx = box, wmap[wi] if len(wi) else wi
            read_info = (box, list(wpal), np.asarray(wi))
    names = list(table)
    T = Tables(names, version)
    hood = Hood(keys, idx, box, widx, air, dense=box.volume <= max_read)

    _check_two_part(keys, idx, T, hood, names, added, explicit, area, world_y, version)

    out = idx.copy()
    contradicted: list[tuple[int, str, str]] = []  # (key, side, pinned value) of fence/pane sides
    for c in (FENCE, GATE, PANE, WALL, STAIRS, WIRE, CHEST, DOOR):
        m = (T.cat[idx] == c) & (pins & PIN_ALL == 0)
        if not m.any():
            continue
        sel = np.nonzero(m)[0]
        props = _RULES[c](keys[sel], idx[sel], T, hood)
        if c in (FENCE, PANE):
            contradicted += _contradicted(keys[sel], idx[sel], pins[sel], props, T)
        out[sel] = _restate(idx[sel], pins[sel], props, names, intern, registry)
    if contradicted:
        where = "; ".join(
            f"{' '.join(map(str, _unpack(np.array([k], dtype=np.int64))[0].tolist()))} {side}={val}"
            for k, side, val in contradicted[:3]
        )
        warnings.append(
            f"{len(contradicted)} fence/pane side(s) the recipe spells out contradict their neighbours "
            f"({where}{' …' if len(contradicted) > 3 else ''}): an arm into a block that does not "
            "join, or none toward one that does; kept as written, but the game re-shapes them at the "
            "next neighbour update — leave north/east/south/west out to have them computed"
        )
    names = list(table)
    # doors: the upper half follows the lower (facing, hinge, open, powered)
    T2 = Tables(names, version)
    doors = np.nonzero(T2.cat[out] == DOOR)[0]
    if len(doors):
        out = _sync_doors(keys, out, doors, names, intern)
    w = _world_neighbours(keys, idx, out, T, hood, wbox)
    if w:
        warnings.append(
            f"{w} connectable block(s) of the world (fences, panes, walls, stairs, wire) "
            "touch the plan; the game may re-shape them on their next update — the plan "
            "leaves them as they are"
        )
    return Outcome(out.astype(np.uint32), tuple(warnings), read_info)


def _check_two_part(keys, idx, T, hood, names, added, explicit, area, world_y, version) -> None:
    cats = T.cat[idx]
    two = np.nonzero(np.isin(cats, list(TWO_PART)))[0]
    bad = []
    for i in two.tolist():
        st = names[idx[i]]
        pr = partner(st, version)
        if pr is None:
            continue
        (dx, dy, dz), other = pr
        q = np.array([keys[i] + _key_delta(dx, dy, dz)], dtype=np.int64)
        got = hood.at(q)[0]
        if (
            not hood.in_plan(q)[0]
            or info(names[got], version).cat != T.cat[idx[i]]
            or info(names[got], version).lower == info(st, version).lower
            or parse_state_text(names[got].split("{", 1)[0])[0] != parse_state_text(st.split("{", 1)[0])[0]
        ):
            bad.append((i, st))
        if len(bad) >= 8:
            break
    if bad:
        xyz = _unpack(keys[[i for i, _ in bad]])
        samples = [
            {"x": int(x), "y": int(y), "z": int(z), "state": s}
            for (x, y, z), (_, s) in zip(xyz.tolist(), bad, strict=True)
        ]
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{len(bad)} two-part block(s) lost their other half to a later operation or "
            f"overlap another half (first: {samples[0]['state']} at "
            f"{samples[0]['x']} {samples[0]['y']} {samples[0]['z']}); place doors, beds and "
            "tall plants once and keep the position above/beside them free",
            details={"reason": "two_part_block", "count": len(bad), "samples": samples},
        )
    if not len(added):
        return
    # added halves: inside the world/area, on a replaceable block unless the plan writes there
    add = np.unique(added)
    written = np.unique(np.concatenate(explicit)) if explicit else np.empty(0, dtype=np.int64)
    if len(written):
        pos = np.minimum(np.searchsorted(written, add), len(written) - 1)
        add = add[written[pos] != add]
    if not len(add):
        return
    xyz = _unpack(add)
    outside = (xyz[:, 1] < world_y[0]) | (xyz[:, 1] > world_y[1])
    if area is not None:
        lo = np.array([area.min.x, area.min.y, area.min.z])
        hi = np.array([area.max.x, area.max.y, area.max.z])
        outside |= ((xyz < lo) | (xyz > hi)).any(axis=1)
    if outside.any():
        x, y, z = map(int, xyz[np.nonzero(outside)[0][0]])
        raise McbError(
            ErrorCode.OUT_OF_BOUNDS,
            f"the other half of a door, bed or tall plant would land at {x} {y} {z}, outside "
            + ("the project's area" if area is not None else "the world's heights"),
            details={"reason": "other_half_outside", "count": int(outside.sum()), "x": x, "y": y, "z": z},
        )
    # what the world holds there (the plan does not write these positions otherwise)
    wst = hood.world_at(add)
    blocked = np.array([not info(names[s], version).replaceable for s in wst.tolist()], dtype=bool)
    if blocked.any():
        ids = np.nonzero(blocked)[0][:8]
        samples = [
            {"x": int(x), "y": int(y), "z": int(z), "state": names[wst[j]]}
            for j, (x, y, z) in zip(ids.tolist(), xyz[ids].tolist(), strict=True)
        ]
        raise McbError(
            ErrorCode.CONFLICT,
            f"the other half of {int(blocked.sum())} door/bed/tall plant(s) would replace "
            f"{samples[0]['state']} at {samples[0]['x']} {samples[0]['y']} {samples[0]['z']}; "
            "clear that position in the recipe (e.g. with air) or move the block",
            details={"reason": "other_half_blocked", "count": int(blocked.sum()), "samples": samples},
        )


def _contradicted(
    keys: np.ndarray, idx: np.ndarray, pins: np.ndarray, props: Props, T: Tables
) -> list[tuple[int, str, str]]:
    """Pinned fence/pane sides that differ from what the neighbours make (``FenceBlock.connectsTo``,
    ``IronBarsBlock.attachsTo`` as ``_fence``/``_pane`` restate them)."""
    out: list[tuple[int, str, str]] = []
    for d, bit in enumerate(_SIDES):
        pinned = (pins & bit) != 0
        if not pinned.any():
            continue
        written = T.side_on[idx, d]
        bad = np.nonzero(pinned & (written != np.asarray(props[DIRS[d]], dtype=bool)))[0]
        out += [(int(keys[i]), DIRS[d], "true" if written[i] else "false") for i in bad.tolist()]
    return sorted(out)


# what the game keeps in step between the two halves (BedBlock/DoorBlock.updateShape)
_SHARED = {BED: ("facing",), DOOR: ("facing", "open", "powered", "hinge"), TALL: ()}


def two_part_mask(packed: np.ndarray, names: Sequence[str], version: str) -> np.ndarray:
    """Which of these states (with pins) are doors, beds or tall plants."""
    idx = (packed & INDEX_MASK).astype(np.int64)
    cats = np.array([info(n, version).cat for n in names], dtype=np.int64)
    return np.isin(cats[idx], list(TWO_PART))


def check_halves(keys: np.ndarray, packed: np.ndarray, names: Sequence[str], version: str) -> None:
    """Refuse two-part blocks whose two halves the recipe writes itself but that disagree: not
    the same block, not the two halves, or a kept-in-step property differing (``_SHARED``;
    ``hinge`` only when both halves spell it out). ``keys`` sorted and unique, ``packed`` the
    last writer's state with its pins."""
    idx = (packed & INDEX_MASK).astype(np.int64)
    pins = (packed >> PIN_SHIFT).astype(np.int64)
    cats = np.array([info(n, version).cat for n in names], dtype=np.int64)
    two = np.nonzero(np.isin(cats[idx], list(TWO_PART)))[0]
    bad: list[dict[str, Any]] = []
    count = 0
    for i in two.tolist():
        st = names[idx[i]]
        inf = info(st, version)
        if not inf.lower:  # each pair once, from its lower half / foot
            continue
        pr = partner(st, version)
        if pr is None:
            continue
        q = keys[i] + _key_delta(*pr[0])
        j = int(np.searchsorted(keys, q))
        if j >= len(keys) or keys[j] != q or cats[idx[j]] != inf.cat:
            continue  # not written by the recipe as the same kind of block: added or checked later
        other = names[idx[j]]
        (n1, p1), (n2, p2) = (parse_state_text(s.split("{", 1)[0]) for s in (st, other))
        differ = [
            k for k in _SHARED[inf.cat] if p1.get(k) != p2.get(k) and (k != "hinge" or (pins[i] & pins[j] & PIN_HINGE))
        ]
        if n1 == n2 and not info(other, version).lower and not differ:
            continue
        count += 1
        if len(bad) < 8:
            (x, y, z), (x2, y2, z2) = _unpack(np.array([keys[i], q], dtype=np.int64)).tolist()
            bad.append(
                {
                    "x": x,
                    "y": y,
                    "z": z,
                    "state": st,
                    "differ": differ or ["block"],
                    "other": {"x": x2, "y": y2, "z": z2, "state": other},
                }
            )
    if bad:
        b = bad[0]
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{count} two-part block(s) whose two halves disagree (first: {b['state']} at "
            f"{b['x']} {b['y']} {b['z']} and {b['other']['state']} at {b['other']['x']} "
            f"{b['other']['y']} {b['other']['z']}: {', '.join(b['differ'])} differ); the game "
            "would drop or rewrite one half — write only the lower half / foot (the other is "
            "added to match) or the same block, facing, hinge and open on both",
            details={"reason": "halves_disagree", "count": count, "samples": bad},
        )


def _neighbours(keys: np.ndarray, hood: Hood, dy: int = 0) -> list[np.ndarray]:
    return [hood.at(keys + _key_delta(dx, dy, dz)) for dx, dz in _DXZ]


def _fence(keys, idx, T, hood) -> dict[str, np.ndarray]:
    wood = T.wood[idx]
    out = {}
    for d, nb in enumerate(_neighbours(keys, hood)):
        # a gate spans across d when its facing is perpendicular (either direction of the axis)
        out[DIRS[d]] = np.where(wood, T.fence_wood[d][nb], T.fence_nether[d][nb])
    return out


def _pane(keys, idx, T, hood) -> dict[str, np.ndarray]:
    return {DIRS[d]: T.pane_joins[nb] for d, nb in enumerate(_neighbours(keys, hood))}


def _gate(keys, idx, T, hood) -> dict[str, np.ndarray]:
    f = T.facing[idx]
    nbs = _neighbours(keys, hood)
    stacked = np.stack([T.cat[nb] == WALL for nb in nbs], axis=1)
    rows = np.arange(len(keys))
    return {"in_wall": stacked[rows, _cw(f)] | stacked[rows, _ccw(f)]}


def _wall_connects(keys, T, hood) -> np.ndarray:
    return np.stack([T.wall_joins[d][nb] for d, nb in enumerate(_neighbours(keys, hood))], axis=1)


def _wall(keys, idx, T, hood) -> Props:
    conn = _wall_connects(keys, T, hood)
    above_k = keys + _key_delta(0, 1, 0)
    n = len(keys)
    side = np.zeros((n, 4), dtype=np.int64)  # 0 none, 1 low, 2 tall
    up = np.zeros(n, dtype=bool)
    ys = keys >> 52
    # top-down: a wall's post and sides depend on the (already computed) wall above it
    done_up: dict[int, bool] = {}
    done_side: dict[int, np.ndarray] = {}
    for y in sorted(np.unique(ys).tolist(), reverse=True):
        sel = np.nonzero(ys == y)[0]
        ab = hood.at(above_k[sel])
        above_is_wall = T.cat[ab] == WALL
        above_conn = np.zeros((len(sel), 4), dtype=bool)
        above_up = T.up[ab].copy()
        # a plan wall above: use its computed values
        for j, k in enumerate(above_k[sel].tolist()):
            if k in done_up:
                above_up[j] = done_up[k]
                above_conn[j] = done_side[k] > 0
        world_wall = above_is_wall & ~np.array([k in done_up for k in above_k[sel].tolist()], dtype=bool)
        above_conn[world_wall] = T.side_on[ab[world_wall]]
        full_above = T.full[ab]
        c = conn[sel]
        tall = c & (full_above[:, None] | (above_is_wall[:, None] & above_conn))
        s = np.where(c, np.where(tall, 2, 1), 0)
        none = s == 0
        # minecraft.wiki *Wall*: a post "unless connecting to only two opposite sides or all four"
        straight = (none[:, 0] == none[:, 2]) & (none[:, 1] == none[:, 3]) & ~none.all(axis=1)
        tall_straight = ((s[:, 0] == 2) & (s[:, 2] == 2)) | ((s[:, 1] == 2) & (s[:, 3] == 2))
        covered = full_above | (T.cat[ab] == FENCE) | T.post_override[ab] | (above_is_wall & above_up)
        u = (above_is_wall & above_up) | ~straight | (~tall_straight & covered)
        side[sel] = s
        up[sel] = u
        for j, k in enumerate(keys[sel].tolist()):
            done_up[k] = bool(u[j])
            done_side[k] = s[j]
    out: dict[str, Any] = {DIRS[d]: (side[:, d], _WALL_SIDES) for d in range(4)}
    out["up"] = up
    return out


def _stairs(keys, idx, T, hood) -> dict[str, tuple[np.ndarray, tuple[str, ...]]]:
    f = T.facing[idx]
    top = T.top[idx]
    n = len(keys)
    dxz = np.array(_DXZ)
    shape = np.zeros(n, dtype=np.int64)  # index into _STAIR_SHAPES

    def at_dir(d: np.ndarray) -> np.ndarray:
        dx, dz = dxz[d, 0], dxz[d, 1]
        return hood.at(keys + (dz << 26) + dx)

    def can_take(d: np.ndarray) -> np.ndarray:
        o = at_dir(d)
        return (T.cat[o] != STAIRS) | (T.facing[o] != f) | (T.top[o] != top)

    front = at_dir(f)
    ff = T.facing[front]
    fr = (T.cat[front] == STAIRS) & (T.top[front] == top) & (ff >= 0) & (ff % 2 != f % 2)
    fr &= can_take((ff + 2) % 4)
    shape[fr & (ff == _ccw(f))] = 1
    shape[fr & (ff != _ccw(f))] = 2
    back = at_dir((f + 2) % 4)
    bf = T.facing[back]
    bk = ~fr & (T.cat[back] == STAIRS) & (T.top[back] == top) & (bf >= 0) & (bf % 2 != f % 2)
    bk &= can_take(np.where(bf >= 0, bf, 0))
    shape[bk & (bf == _ccw(f))] = 3
    shape[bk & (bf != _ccw(f))] = 4
    return {"shape": (shape, _STAIR_SHAPES)}


def _wire(keys, idx, T, hood) -> dict[str, tuple[np.ndarray, tuple[str, ...]]]:
    above = hood.at(keys + _key_delta(0, 1, 0))
    open_above = ~T.cond[above]
    n = len(keys)
    side = np.zeros((n, 4), dtype=np.int64)  # 0 none, 1 side, 2 up
    for d, (dx, dz) in enumerate(_DXZ):
        nk = keys + (dz << 26) + dx
        nb = hood.at(nk)
        over = hood.at(nk + _key_delta(0, 1, 0))
        under = hood.at(nk + _key_delta(0, -1, 0))
        climb = open_above & T.full[nb] & (T.cat[over] == WIRE)
        direct = (
            (T.cat[nb] == WIRE)
            | (T.rep_axis[nb] == d % 2)
            | (T.observer[nb] == d)
            | (T.signal[nb] & (T.rep_axis[nb] < 0))
        )
        down = ~T.cond[nb] & (T.cat[under] == WIRE)
        side[:, d] = np.where(climb, 2, np.where(direct | down, 1, 0))
    conn = side > 0
    ns_none = ~conn[:, 0] & ~conn[:, 2]
    ew_none = ~conn[:, 1] & ~conn[:, 3]
    for d in (3, 1):  # west, east
        side[:, d] = np.where(~conn[:, d] & ns_none, 1, side[:, d])
    for d in (0, 2):  # north, south
        side[:, d] = np.where(~conn[:, d] & ew_none, 1, side[:, d])
    return {DIRS[d]: (side[:, d], _WIRE_SIDES) for d in range(4)}


def _chest(keys, idx, T, hood) -> dict[str, tuple[np.ndarray, tuple[str, ...]]]:
    f = T.facing[idx]
    n = len(keys)
    kind = np.zeros(n, dtype=np.int64)  # index into _CHEST_TYPES
    pos_of = {int(k): i for i, k in enumerate(keys.tolist())}
    dxz = _DXZ

    def mate(i: int, d: int) -> int | None:
        dx, dz = dxz[d]
        j = pos_of.get(int(keys[i]) + (dz << 26) + dx)
        if j is None or idx[j] != idx[i]:  # same block, same facing (and same other props)
            return None
        return j

    paired = np.zeros(n, dtype=bool)
    for i in range(n):
        if paired[i] or f[i] < 0:
            continue
        if mate(i, _ccw(int(f[i]))) is not None:
            continue  # not the counter-clockwise end of its run
        j, cur = mate(i, _cw(int(f[i]))), i
        while j is not None and not paired[cur]:
            kind[cur], kind[j] = 1, 2
            paired[cur] = paired[j] = True
            nxt = mate(j, _cw(int(f[i])))
            if nxt is None:
                break
            cur, j = nxt, mate(nxt, _cw(int(f[i])))
    return {"type": (kind, _CHEST_TYPES)}


def _door(keys, idx, T, hood) -> dict[str, tuple[np.ndarray, tuple[str, ...]]]:
    f = T.facing[idx]
    lower = np.array([T.infos[i].lower for i in idx.tolist()], dtype=bool)
    dxz = np.array(_DXZ)
    up = _key_delta(0, 1, 0)

    def side(d: np.ndarray, dy: int) -> np.ndarray:
        return hood.at(keys + (dxz[d, 1] << 26) + dxz[d, 0] + dy * up)

    left, right = side(_ccw(f), 0), side(_cw(f), 0)
    score = -T.full[left].astype(int) - T.full[side(_ccw(f), 1)] + T.full[right] + T.full[side(_cw(f), 1)]
    lower_of = np.array([info(n, T.version).lower for n in T.names], dtype=bool)
    left_door = (
        (T.cat[left] == DOOR)
        & lower_of[left]
        & (
            np.array([T.names[a].split("[")[0] for a in left.tolist()])
            == np.array([T.names[a].split("[")[0] for a in idx.tolist()])
        )
    )
    right_door = (
        (T.cat[right] == DOOR)
        & lower_of[right]
        & (
            np.array([T.names[a].split("[")[0] for a in right.tolist()])
            == np.array([T.names[a].split("[")[0] for a in idx.tolist()])
        )
    )
    # the game's DoorBlock.getHinge: right when a door is on the left only, or the right side is
    # more solid; else left (its click-position tie-break taken at the block's centre: left)
    hinge = np.where((left_door & ~right_door) | (score > 0), 1, 0)
    # upper halves are synced from their lower half afterwards
    return {"hinge": (np.where(lower, hinge, 0), ("left", "right"))}


_RULES: dict[int, Callable[..., Props]] = {
    FENCE: _fence,
    GATE: _gate,
    PANE: _pane,
    WALL: _wall,
    STAIRS: _stairs,
    WIRE: _wire,
    CHEST: _chest,
    DOOR: _door,
}


_WALL_SIDES = ("none", "low", "tall")
_WIRE_SIDES = ("none", "side", "up")
_STAIR_SHAPES = ("straight", "outer_left", "outer_right", "inner_left", "inner_right")
_CHEST_TYPES = ("single", "left", "right")
_BOOL = ("false", "true")


def _restate(
    idx: np.ndarray,
    pins: np.ndarray,
    props: Props,
    names: Sequence[str],
    intern: Callable[[str], int],
    registry: Registry,
) -> np.ndarray:
    """New table indexes: each state with the computed properties, pinned ones kept. ``props``
    maps a property to a bool array or to (codes, vocabulary)."""
    cols = []
    for c, val in props.items():
        codes, vocab = (val, _BOOL) if not isinstance(val, tuple) else val
        cols.append((c, np.asarray(codes).astype(np.int64), vocab))
    code = idx.astype(np.int64) * 1024 + pins
    for _, codes, vocab in cols:
        code = code * len(vocab) + codes
    uniq, first, inv = np.unique(code, return_index=True, return_inverse=True)
    new = np.empty(len(uniq), dtype=np.int64)
    for r, row in enumerate(first.tolist()):
        i, pin = int(idx[row]), int(pins[row])
        state, data = _data_split(names[i])  # a chest may carry its block-entity data
        name, cur = parse_state_text(state)
        for c, codes, vocab in cols:
            if pin & _PIN_OF[c] or c not in cur:
                continue
            cur[c] = vocab[codes[row]]
        new[r] = intern(str(BlockState(name, tuple(sorted(cur.items())))) + data)
    return new[inv.ravel()]


def _sync_doors(
    keys: np.ndarray, out: np.ndarray, doors: np.ndarray, names: Sequence[str], intern: Callable[[str], int]
) -> np.ndarray:
    pos_of = {int(k): i for i, k in enumerate(keys.tolist())}
    up = _key_delta(0, 1, 0)
    names = list(names)

    def add(state: str) -> int:
        i = intern(state)
        if i >= len(names):
            names.append(state)
        return i

    for i in doors.tolist():
        name, props = parse_state_text(_data_split(names[out[i]])[0])
        if props.get("half") != "lower":
            continue
        j = pos_of.get(int(keys[i]) + up)
        if j is None:
            continue
        n2, p2 = parse_state_text(_data_split(names[out[j]])[0])
        if n2 != name or p2.get("half") != "upper":
            continue
        synced = {**props, "half": "upper"}
        out[j] = add(str(BlockState(name, tuple(sorted(synced.items())))))
    return out


def _world_neighbours(keys, idx, out, T, hood, wbox) -> int:
    """How many connectable world blocks (fences, panes, walls, stairs, wire) touch the plan
    sideways: the game may re-shape them on their next update; we count them, never change them."""
    if wbox is None or not hood.dense:
        return 0
    conn = np.isin(T.cat, [FENCE, PANE, WALL, STAIRS, WIRE])
    if not conn[hood.wgrid].any():
        return 0
    found = []
    for dx, dz in _DXZ:
        q = keys + (dz << 26) + dx
        m = conn[hood.world_at(q)] & ~hood.in_plan(q)
        found.append(q[m])
    return len(np.unique(np.concatenate(found)))
