"""Block geometry for the built-in renderer: which boxes (and crossed planes) a block state is.

Written for this project from the game's documented block shapes, in sixteenths of a block
(one texture pixel), as the Minecraft Wiki describes each block and as they show in the game:
slab = half a block (type bottom/top/double); stairs = a bottom (or top) slab plus a half-block
step on the ``facing`` side, with the ``shape`` corner variants (inner: step plus a quarter,
outer: a quarter only); fence = 4-px post with two 2-px rails (at 6-9 and 12-15) toward each
connected side; fence gate = two posts with rails across (or swung open to the sides); glass
pane / iron bars = 2-px post with 2-px arms; wall = 8-px post (``up``) with 6-px arms, 14 px
high (``low``) or full (``tall``); door = a 3-px panel on the far side of ``facing`` (closed) or
on the hinge side (open); trapdoor = 3-px slab at the bottom/top, or against the edge opposite
``facing`` when open; torch = 2-px stick 10 px high (wall torch: against the wall it hangs
on); carpet = 1 px; snow = 2 px per layer; lantern, ladder, pressure plate, bed, chest as
their boxes; plants (flowers, saplings, grass, ferns, crops, mushrooms, sugar cane, ...) as two
crossed planes. No model, texture or other game asset is read or shipped: the numbers below
are the whole table.

A ``Model`` is ``boxes`` (lo, hi in 0..16) plus ``crosses`` (the bounds of a crossed pair);
``faces()`` lists the faces worth drawing: a box face covered by another box of the same
block is dropped (no z-fighting inside stairs or fences), and ``boundary`` says whether the
face lies on the block's cell boundary (only those can be hidden by a neighbouring cube).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

Box16 = tuple[tuple[float, float, float], tuple[float, float, float]]

# dir ids as in mesh.py: 0..5 = +x, -x, +y, -y, +z, -z; 6, 7 = the two diagonal planes of a cross
AXIS = {0: (0, +1), 1: (0, -1), 2: (1, +1), 3: (1, -1), 4: (2, +1), 5: (2, -1)}


@dataclass(frozen=True)
class Model:
    boxes: tuple[Box16, ...] = ()
    crosses: tuple[Box16, ...] = ()
    family: str = "shape"

    def faces(self) -> list[tuple[Box16, int, bool]]:
        """(box, dir, on the cell boundary) for every face worth drawing."""
        out: list[tuple[Box16, int, bool]] = []
        for i, (lo, hi) in enumerate(self.boxes):
            for d, (ax, sgn) in AXIS.items():
                plane = hi[ax] if sgn > 0 else lo[ax]
                if any(_covers(self.boxes[j], lo, hi, ax, sgn, plane) for j in range(len(self.boxes)) if j != i):
                    continue
                out.append(((lo, hi), d, plane == (16 if sgn > 0 else 0)))
        for c in self.crosses:
            out.append((c, 6, False))
            out.append((c, 7, False))
        return out


def _covers(other: Box16, lo, hi, ax: int, sgn: int, plane: float) -> bool:
    """Does ``other`` hide the face of (lo, hi) on ``plane`` looking along ``sgn``·``ax``?"""
    olo, ohi = other
    inside = olo[ax] <= plane < ohi[ax] if sgn > 0 else olo[ax] < plane <= ohi[ax]
    if not inside:
        return False
    return all(olo[a] <= lo[a] and hi[a] <= ohi[a] for a in range(3) if a != ax)


def _b(x0, y0, z0, x1, y1, z1) -> Box16:
    return ((float(x0), float(y0), float(z0)), (float(x1), float(y1), float(z1)))


def _rot(box: Box16, facing: str) -> Box16:
    """A box drawn for ``facing=north`` turned to ``facing`` (about the block's centre)."""
    (x0, y0, z0), (x1, y1, z1) = box
    if facing == "east":  # north (-z) -> east (+x): x' = 16 - z, z' = x
        xs, zs = (16 - z0, 16 - z1), (x0, x1)
    elif facing == "south":
        xs, zs = (16 - x0, 16 - x1), (16 - z0, 16 - z1)
    elif facing == "west":  # north -> west (-x): x' = z, z' = 16 - x
        xs, zs = (z0, z1), (16 - x0, 16 - x1)
    else:
        return box
    return ((min(xs), y0, min(zs)), (max(xs), y1, max(zs)))


def _flip_y(box: Box16) -> Box16:
    (x0, y0, z0), (x1, y1, z1) = box
    return ((x0, 16 - y1, z0), (x1, 16 - y0, z1))


LEFT_OF = {"north": "west", "west": "south", "south": "east", "east": "north"}
RIGHT_OF = {v: k for k, v in LEFT_OF.items()}
OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}
SIDES = ("north", "east", "south", "west")


def _edge(side: str, thick: float, y0: float = 0, y1: float = 16) -> Box16:
    """A full-width panel ``thick`` px deep against the block's ``side`` edge."""
    return _rot(_b(0, y0, 0, 16, y1, thick), side)


def _arm(side: str, half_w: float, y0: float, y1: float, reach: float = 8) -> Box16:
    """A bar from the ``side`` edge toward the centre, ``2·half_w`` wide, ``reach`` px long."""
    return _rot(_b(8 - half_w, y0, 0, 8 + half_w, y1, reach), side)


def _stairs(p: dict[str, str]) -> tuple[Box16, ...]:
    facing, shape = p.get("facing", "north"), p.get("shape", "straight")
    base = _b(0, 0, 0, 16, 8, 16)
    step = {
        "straight": [_b(0, 8, 0, 16, 16, 8)],
        "inner_left": [_b(0, 8, 0, 16, 16, 8), _b(0, 8, 8, 8, 16, 16)],
        "inner_right": [_b(0, 8, 0, 16, 16, 8), _b(8, 8, 8, 16, 16, 16)],
        "outer_left": [_b(0, 8, 0, 8, 16, 8)],
        "outer_right": [_b(8, 8, 0, 16, 16, 8)],
    }.get(shape, [_b(0, 8, 0, 16, 16, 8)])
    boxes = [base] + [_rot(s, facing) for s in step]
    if p.get("half") == "top":
        boxes = [_flip_y(b) for b in boxes]
    return tuple(boxes)


def _connected(p: dict[str, str], side: str) -> bool:
    return p.get(side, "false") not in ("false", "none")


def _fence(p: dict[str, str]) -> tuple[Box16, ...]:
    boxes = [_b(6, 0, 6, 10, 16, 10)]
    for s in SIDES:
        if _connected(p, s):
            boxes += [_arm(s, 1, 6, 9, 6), _arm(s, 1, 12, 15, 6)]
    return tuple(boxes)


def _pane(p: dict[str, str]) -> tuple[Box16, ...]:
    boxes = [_b(7, 0, 7, 9, 16, 9)]
    boxes += [_arm(s, 1, 0, 16, 7) for s in SIDES if _connected(p, s)]
    return tuple(boxes)


def _wall(p: dict[str, str]) -> tuple[Box16, ...]:
    boxes = [_b(4, 0, 4, 12, 16, 12)] if p.get("up", "true") == "true" else []
    for s in SIDES:
        v = p.get(s, "none")
        if v in ("low", "tall", "true"):
            boxes.append(_arm(s, 3, 0, 16 if v == "tall" else 14, 8))
    if not boxes:
        boxes = [_b(4, 0, 4, 12, 16, 12)]
    return tuple(boxes)


def _gate(p: dict[str, str]) -> tuple[Box16, ...]:
    facing = p.get("facing", "north")
    low = 3 if p.get("in_wall") == "true" else 0
    posts = [_b(0, 5 - low, 7, 2, 16 - low, 9), _b(14, 5 - low, 7, 16, 16 - low, 9)]
    if p.get("open") == "true":
        bars = [
            _b(0, 6 - low, 9, 2, 9 - low, 15),
            _b(0, 12 - low, 9, 2, 15 - low, 15),
            _b(14, 6 - low, 9, 16, 9 - low, 15),
            _b(14, 12 - low, 9, 16, 15 - low, 15),
        ]
    else:
        bars = [
            _b(2, 6 - low, 7, 14, 9 - low, 9),
            _b(2, 12 - low, 7, 14, 15 - low, 9),
            _b(6, 9 - low, 7, 10, 12 - low, 9),
        ]
    return tuple(_rot(b, facing) for b in posts + bars)


def _door(p: dict[str, str]) -> tuple[Box16, ...]:
    facing = p.get("facing", "north")
    if p.get("open") == "true":
        side = LEFT_OF[facing] if p.get("hinge", "left") == "left" else RIGHT_OF[facing]
    else:
        side = OPPOSITE[facing]
    return (_edge(side, 3),)


def _trapdoor(p: dict[str, str]) -> tuple[Box16, ...]:
    if p.get("open") == "true":
        return (_edge(OPPOSITE[p.get("facing", "north")], 3),)
    return (_b(0, 13, 0, 16, 16, 16),) if p.get("half") == "top" else (_b(0, 0, 0, 16, 3, 16),)


def _wall_torch(p: dict[str, str]) -> tuple[Box16, ...]:
    # ``facing`` points away from the wall it hangs on; the stick (drawn upright) touches that wall
    return (_rot(_b(7, 3, 11, 9, 13, 16), p.get("facing", "north")),)


def _bed(p: dict[str, str]) -> tuple[Box16, ...]:
    return (
        _b(0, 3, 0, 16, 9, 16),
        _b(0, 0, 0, 3, 3, 3),
        _b(13, 0, 0, 16, 3, 3),
        _b(0, 0, 13, 3, 3, 16),
        _b(13, 0, 13, 16, 3, 16),
    )


PLANT = re.compile(
    r"(sapling|_tulip|^poppy|^dandelion|^allium|azure_bluet|blue_orchid|oxeye_daisy|cornflower|lily_of_the_valley|"
    r"wither_rose|torchflower|eyeblossom|_mushroom$|_fungus$|_roots$|^short_grass|^tall_grass|^fern|large_fern|"
    r"dead_bush|^bush$|firefly_bush|dry_grass|sugar_cane|^wheat|^carrots|^potatoes|^beetroots|sweet_berry_bush|"
    r"nether_wart|_stem$|^lilac|^peony|^rose_bush|^sunflower|pitcher_plant|pitcher_crop|nether_sprouts|"
    r"^kelp|seagrass|_coral$|hanging_roots|weeping_vines|twisting_vines|cave_vines|spore_blossom|pale_hanging_moss|"
    r"mangrove_propagule|cactus_flower|^cobweb|bamboo_sapling|small_dripleaf|big_dripleaf_stem)"
)

# the crossed planes' bounds: a full block for crops, cane, vines and corals; smaller where the
# plant's picture is (flowers, saplings, mushrooms ~ 10 px high, grass and ferns ~ 13 px)
CROSS = _b(0.8, 0, 0.8, 15.2, 16, 15.2)
CROSS_SMALL = _b(4, 0, 4, 12, 10, 12)
CROSS_GRASS = _b(2, 0, 2, 14, 13, 14)
SMALL_PLANT = re.compile(
    r"(sapling|_tulip|^poppy|^dandelion|^allium|azure_bluet|blue_orchid|oxeye_daisy|cornflower|"
    r"lily_of_the_valley|wither_rose|^torchflower$|eyeblossom|_mushroom$|_fungus$|propagule)"
)
GRASS_PLANT = re.compile(r"(^short_grass|^fern|_roots$|^bush$|dead_bush|dry_grass|nether_sprouts)")


def props(state: str) -> dict[str, str]:
    """``minecraft:oak_slab[type=top]`` -> ``{"type": "top"}``."""
    if "[" not in state:
        return {}
    out = {}
    for kv in state[state.index("[") + 1 : state.rindex("]")].split(","):
        if "=" in kv:
            k, v = kv.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def model_for(state: str) -> Model | None:
    """The geometry of ``state`` when it is not a single box the colour table already gives
    (``None``: keep the table's box: cubes, slabs, carpets, water)."""
    return _model(state)


@lru_cache(maxsize=4096)
def _model(state: str) -> Model | None:
    name = state.split("[", 1)[0]
    name = name.split(":", 1)[1] if ":" in name else name
    p = props(state)
    if name.endswith("_stairs"):
        return Model(_stairs(p), family="stairs")
    if name.endswith("_fence_gate"):
        return Model(_gate(p), family="fence_gate")
    if name.endswith("_fence"):
        return Model(_fence(p), family="fence")
    if name.endswith("_pane") or name == "iron_bars":
        return Model(_pane(p), family="pane")
    if name.endswith("_wall") and not name.endswith(
        ("_wall_sign", "_wall_banner", "_wall_torch", "_wall_fan", "_wall_head", "_wall_skull", "_wall_hanging_sign")
    ):
        return Model(_wall(p), family="wall")
    if name.endswith("_door"):
        return Model(_door(p), family="door")
    if name.endswith("_trapdoor"):
        return Model(_trapdoor(p), family="trapdoor")
    if name.endswith("wall_torch"):
        return Model(_wall_torch(p), family="torch")
    if name.endswith("torch") and name != "torchflower":
        return Model((_b(7, 0, 7, 9, 10, 9),), family="torch")
    if name.endswith("lantern") and name not in ("jack_o_lantern", "sea_lantern"):
        y = 1 if p.get("hanging") == "true" else 0
        return Model((_b(5, y, 5, 11, y + 7, 11), _b(6, y + 7, 6, 10, y + 9, 10)), family="lantern")
    if name.endswith("_chain") or name == "chain":
        axis = p.get("axis", "y")
        box = {"x": _b(0, 6.5, 6.5, 16, 9.5, 9.5), "z": _b(6.5, 6.5, 0, 9.5, 9.5, 16)}.get(
            axis, _b(6.5, 0, 6.5, 9.5, 16, 9.5)
        )
        return Model((box,), family="chain")
    if name == "ladder":
        return Model((_edge(OPPOSITE[p.get("facing", "north")], 3),), family="ladder")
    if name.endswith("_pressure_plate"):
        return Model((_b(1, 0, 1, 15, 1, 15),), family="pressure_plate")
    if name == "snow":
        return Model((_b(0, 0, 0, 16, 2 * max(1, min(8, int(p.get("layers", "1")))), 16),), family="snow")
    if name.endswith("_bed"):
        return Model(_bed(p), family="bed")
    if name in ("chest", "trapped_chest", "ender_chest"):
        return Model((_b(1, 0, 1, 15, 14, 15),), family="chest")
    if PLANT.search(name):
        cross = CROSS_SMALL if SMALL_PLANT.search(name) else CROSS_GRASS if GRASS_PLANT.search(name) else CROSS
        return Model(crosses=(cross,), family="plant")
    return None
