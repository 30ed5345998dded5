"""The built-in renderer's geometry and pictures, without a world host: shapes.py tables,
mesh.py culling/ambient occlusion, and gl.py pictures on a headless EGL context (Mesa's
llvmpipe here), compared with small golden PNGs in tests/golden/.

Regenerate the goldens after an intended change: ``MCB_UPDATE_GOLDEN=1 uv run --frozen pytest -q
services/camera-worker/tests/test_renderer.py`` (then look at them).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from mcb_camera import gl, mesh, patterns, png, scenes, shapes, viewpoints

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture(scope="module")
def renderer() -> gl.GLRenderer:
    try:
        return gl.GLRenderer()
    except Exception as exc:  # noqa: BLE001 - no EGL/OpenGL 3.3 on this machine
        pytest.skip(f"no headless OpenGL 3.3 context (moderngl/EGL): {exc}")


def faces_of(state: str) -> list:
    m = shapes.model_for(state)
    assert m is not None, state
    return m.faces()


def test_stairs_shapes_turn_with_facing_and_flip_with_half() -> None:
    north = shapes.model_for("minecraft:oak_stairs[facing=north,half=bottom,shape=straight]")
    assert north.boxes[1] == ((0, 8, 0), (16, 16, 8))
    assert shapes.model_for("minecraft:oak_stairs[facing=south,half=bottom,shape=straight]").boxes[1] == (
        (0, 8, 8),
        (16, 16, 16),
    )
    assert shapes.model_for("minecraft:oak_stairs[facing=east,half=bottom,shape=straight]").boxes[1] == (
        (8, 8, 0),
        (16, 16, 16),
    )
    assert shapes.model_for("minecraft:oak_stairs[facing=west,half=top,shape=straight]").boxes == (
        ((0, 8, 0), (16, 16, 16)),
        ((0, 0, 0), (8, 8, 16)),
    )
    assert len(shapes.model_for("minecraft:oak_stairs[facing=north,shape=inner_left]").boxes) == 3
    assert shapes.model_for("minecraft:oak_stairs[facing=north,shape=outer_right]").boxes[1] == ((8, 8, 0), (16, 16, 8))
    # the step's bottom face lies on the slab: dropped (no z-fighting), the slab's top is kept
    f = faces_of("minecraft:oak_stairs[facing=north,half=bottom,shape=straight]")
    assert (((0, 8, 0), (16, 16, 8)), 3, False) not in f
    assert (((0, 0, 0), (16, 8, 16)), 2, False) in f


def test_connections_doors_trapdoors_torches_plants() -> None:
    assert len(shapes.model_for("minecraft:oak_fence[north=false,south=false,east=false,west=false]").boxes) == 1
    assert len(shapes.model_for("minecraft:oak_fence[north=true,south=false,east=true,west=false]").boxes) == 5
    pane = shapes.model_for("minecraft:glass_pane[north=false,south=false,east=true,west=true]")
    assert ((9, 0, 7), (16, 16, 9)) in pane.boxes and ((0, 0, 7), (7, 16, 9)) in pane.boxes
    wall = shapes.model_for("minecraft:cobblestone_wall[up=false,north=tall,south=low,east=none,west=none]")
    assert [b[1][1] for b in wall.boxes] == [16, 14]
    closed = shapes.model_for("minecraft:oak_door[facing=east,half=lower,hinge=left,open=false]")
    assert closed.boxes == (((0, 0, 0), (3, 16, 16)),)  # the panel on the west side
    assert shapes.model_for("minecraft:oak_door[facing=east,hinge=left,open=true]").boxes == (((0, 0, 0), (16, 16, 3)),)
    assert shapes.model_for("minecraft:oak_door[facing=east,hinge=right,open=true]").boxes == (
        ((0, 0, 13), (16, 16, 16)),
    )
    assert shapes.model_for("minecraft:oak_trapdoor[half=top,open=false]").boxes == (((0, 13, 0), (16, 16, 16)),)
    assert shapes.model_for("minecraft:oak_trapdoor[facing=north,open=true]").boxes == (((0, 0, 13), (16, 16, 16)),)
    assert shapes.model_for("minecraft:torch").boxes == (((7, 0, 7), (9, 10, 9)),)
    assert shapes.model_for("minecraft:poppy").crosses and shapes.model_for("minecraft:wheat[age=3]").crosses
    assert shapes.model_for("minecraft:stone") is None and shapes.model_for("minecraft:oak_slab[type=top]") is None
    assert shapes.model_for("minecraft:oak_wall_sign[facing=north]") is None  # not a wall


def test_mesh_culls_against_cubes_but_keeps_inner_faces() -> None:
    pal = [
        "minecraft:air",
        "minecraft:stone",
        "minecraft:oak_slab[type=bottom]",
        "minecraft:oak_fence[north=true,south=false,east=false,west=false]",
    ]
    a = np.zeros((2, 1, 3), np.uint16)
    a[0, 0] = [2, 3, 1]  # slab, fence post (arm to the north, out of the region), stone
    a[1, 0] = [1, 1, 1]  # stone over all three
    m = mesh.build(pal, a)
    rows = m.opaque
    slab_top = rows[(rows[:, 6] == 2) & (rows[:, 0] == 0) & (rows[:, 1] == 0)]
    assert len(slab_top) == 1 and slab_top[0, 4] == 0.5  # kept under the stone: it is inside the cell
    post_top = rows[(rows[:, 6] == 2) & (rows[:, 0] == 1 + 6 / 16)]
    assert len(post_top) == 0  # the post's top touches the stone above: culled
    post_east = rows[(rows[:, 6] == 0) & (rows[:, 3] == 1 + 10 / 16)]
    assert len(post_east) == 1  # inside the cell, facing the stone: drawn
    # ambient occlusion: the slab's -z face sees stone above-behind? no: a face with no
    # opaque neighbour around is fully lit, one in a corner is darker
    assert rows[:, 11:15].min() < 1.0 and rows[:, 11:15].max() == 1.0


def _golden(name: str, img: np.ndarray) -> None:
    path = GOLDEN / name
    if os.environ.get("MCB_UPDATE_GOLDEN") == "1" or not path.exists():
        if os.environ.get("MCB_UPDATE_GOLDEN") != "1":
            pytest.fail(f"golden {path.name} is missing; run with MCB_UPDATE_GOLDEN=1 and look at it")
        path.write_bytes(png.encode(img))
    ref = png.decode(path.read_bytes()).astype(np.int16)
    assert ref.shape == img.shape
    diff = np.abs(ref - img.astype(np.int16))
    # small tolerance: another Mesa build may round a few edge pixels differently
    assert diff.mean() < 0.5 and (diff > 24).mean() < 0.002, (name, float(diff.mean()), float((diff > 24).mean()))


def test_every_family_matches_its_golden_and_renders_identically_twice(renderer: gl.GLRenderer) -> None:
    pal, arr = scenes.families()
    m = mesh.build(pal, arr)
    v = gl.perspective_view(*scenes.FAMILIES_POSE, 256, 144, (0, 0, 0), 96)
    one = renderer.render(m, v)
    two = renderer.render(mesh.build(pal, arr), v)
    assert np.array_equal(one, two)
    _golden("families.png", one)


def test_gold_box_on_grass_changes_the_automatic_view(renderer: gl.GLRenderer) -> None:
    region = (0, 64, 0, 4, 72, 4)  # a 5x9x5 gold box
    name, pose = viewpoints.poses(region)[0]
    assert name == "entrance"
    images = []
    for with_box in (False, True):
        pal, arr, origin = scenes.box_on_grass(region, with_box)
        m = mesh.build(pal, arr)
        far = max(64.0, float(sum(m.size)) * 2 + 32)
        v = gl.perspective_view(
            (pose["x"], pose["y"], pose["z"]), pose["yaw"], pose["pitch"], pose["fov"], 320, 180, origin, far
        )
        images.append(renderer.render(m, v).astype(np.int16))
    before, after = images
    assert np.abs(after - before).mean() > 2.0
    _golden("gold-box-after.png", after.astype(np.uint8))


# --- per-material patterns and doors (issue 31 item 8) -------------------------------------

F = "minecraft:"
PX = 48  # pixels per block in the head-on pictures below


def _wall(states: dict[tuple[int, int], str], fill: str, w: int = 5, h: int = 4) -> tuple[list[str], np.ndarray]:
    """A one-block-thick wall in the plane z = 1 (x 0..w-1, y 0..h-1) of ``fill``, with
    ``states`` at (x, y); air in front and behind."""
    pal = [F + "air", fill]
    a = np.zeros((h, 3, w), np.uint16)
    a[:, 1, :] = 1
    for (x, y), s in states.items():
        if s not in pal:
            pal.append(s)
        a[y, 1, x] = pal.index(s)
    return pal, a


def _head_on(size: tuple[int, int, int], from_north: bool) -> gl.View:
    """Orthographic, looking at the wall square on, PX pixels per block."""
    sx, sy, sz = size
    fwd = np.array([0.0, 0.0, 1.0 if from_north else -1.0])
    eye = np.array([sx / 2, sy / 2, sz / 2]) - fwd * (sz / 2 + 2)
    return gl.View(eye, fwd, 0.0, sx * PX, sy * PX, (sx / 2, sy / 2), 64.0)


def _luma(img: np.ndarray) -> np.ndarray:
    return img.astype(np.float64) @ np.array([0.299, 0.587, 0.114])


DOOR = {
    (2, 0): F + "oak_door[facing=south,half=lower,hinge=left,open=false]",
    (2, 1): F + "oak_door[facing=south,half=upper,hinge=left,open=false]",
}


@pytest.mark.parametrize("from_north", [True, False], ids=["flush-side", "recessed-side"])
def test_oak_door_in_an_oak_plank_wall_shows_along_its_outline(renderer: gl.GLRenderer, from_north: bool) -> None:
    """The issue's finding: both are the game's WOOD map colour, so in flat colours the door
    vanished. A closed door facing south is a 3-px panel on the north side of its cell: flush
    with the wall's north face, 13 px deep seen from the south."""
    images = []
    for door in (True, False):
        pal, arr = _wall(DOOR if door else {}, F + "oak_planks")
        m = mesh.build(pal, arr)
        v = _head_on(m.size, from_north)
        images.append(_luma(renderer.render(m, v)))
    with_door, without = images
    (c0, r0), (c1, r1) = gl.project(v, np.array([[2.0, 0.0, 1.0], [3.0, 2.0, 1.0]]))
    c0, c1 = sorted((int(round(c0)), int(round(c1))))
    r0, r1 = sorted((int(round(r0)), int(round(r1))))
    diff = np.abs(with_door - without)
    band = 4  # pixels inside the door's outline: its frame
    outline = np.zeros(diff.shape, bool)
    outline[r0:r1, c0:c1] = True
    outline[r0 + band : r1 - band, c0 + band : c1 - band] = False
    outline[r1 - 2 :, :] = False  # the ground edge of the picture
    assert diff[outline].mean() > 15, diff[outline].mean()
    # and the rest of the wall is untouched
    away = np.ones(diff.shape, bool)
    away[r0 - 3 : r1 + 3, c0 - 3 : c1 + 3] = False
    assert diff[away].mean() < 0.5


def _rows_and_columns(state: str, from_north: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Row and column luma profiles across the middle block of a 3x3 wall of ``state``."""
    pal, arr = _wall({}, state, 3, 3)
    m = mesh.build(pal, arr)
    img = _luma(renderer_once().render(m, _head_on(m.size, from_north)))
    mid = img[PX + 3 : 2 * PX - 3, PX + 3 : 2 * PX - 3]
    return mid.mean(axis=1), mid.mean(axis=0)


_R: list[gl.GLRenderer] = []


def renderer_once() -> gl.GLRenderer:
    if not _R:
        _R.append(gl.GLRenderer())
    return _R[0]


def _bands(profile: np.ndarray, darker: bool = True, depth: float = 6.0) -> int:
    """How many separate runs of the profile lie ``depth`` below (or above) its median."""
    med = np.median(profile)
    hit = (med - profile > depth) if darker else (profile - med > depth)
    return int(np.count_nonzero(hit[1:] & ~hit[:-1]) + hit[0])


def test_materials_draw_their_patterns(renderer: gl.GLRenderer) -> None:
    # inside one block (its faint edge excluded): stone is flat; planks 3 board lines (4
    # boards); bricks 3 light mortar courses; stone bricks 1 course line
    rows, cols = _rows_and_columns(F + "stone")
    assert np.ptp(rows) < 2 and np.ptp(cols) < 2
    rows, _ = _rows_and_columns(F + "oak_planks")
    assert _bands(rows) == 3, rows.round(1)
    rows, _ = _rows_and_columns(F + "bricks")
    assert _bands(rows, darker=False) == 3, rows.round(1)
    rows, _ = _rows_and_columns(F + "stone_bricks")
    assert _bands(rows) == 1, rows.round(1)
    # a log's bark runs along its axis: an upright log's stripes vary across columns, a log
    # lying along x varies across rows; a log lying along z shows its cut end here
    rows, cols = _rows_and_columns(F + "oak_log[axis=y]")
    assert np.ptp(cols) > 3 * max(np.ptp(rows), 1.0), (np.ptp(rows), np.ptp(cols))
    rows, cols = _rows_and_columns(F + "oak_log[axis=x]")
    assert np.ptp(rows) > 3 * max(np.ptp(cols), 1.0), (np.ptp(rows), np.ptp(cols))
    pal, arr = _wall({}, F + "oak_log[axis=z]", 3, 3)
    m = mesh.build(pal, arr)
    end = _luma(renderer.render(m, _head_on(m.size, True)))[PX : 2 * PX, PX : 2 * PX]
    rim = np.r_[end[2, 8:-8], end[-3, 8:-8], end[8:-8, 2], end[8:-8, -3]]
    assert end[PX // 2 - 6 : PX // 2 + 6, PX // 2 - 6 : PX // 2 + 6].mean() > rim.mean() + 25  # light wood, dark rim


def test_glass_has_a_frame_and_stays_translucent(renderer: gl.GLRenderer) -> None:
    """A glass block in front of a black wall: the frame is nearly opaque (light), the middle
    lets the black through."""
    pal = [F + "air", F + "glass", F + "black_concrete"]
    a = np.zeros((1, 3, 1), np.uint16)
    a[0, 0, 0], a[0, 2, 0] = 1, 2
    m = mesh.build(pal, a)
    v = _head_on(m.size, True)
    img = _luma(renderer.render(m, v))
    (c0, r0), (c1, r1) = gl.project(v, np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]))
    c0, c1, r0, r1 = int(round(min(c0, c1))), int(round(max(c0, c1))), int(round(min(r0, r1))), int(round(max(r0, r1)))
    edge = np.r_[img[r0 + 2, c0 + 8 : c1 - 8], img[r0 + 8 : r1 - 8, c0 + 2]]  # the 3-px frame, past the outline
    centre = img[(r0 + r1) // 2 - 4 : (r0 + r1) // 2 + 4, (c0 + c1) // 2 - 4 : (c0 + c1) // 2 + 4]
    assert edge.mean() > centre.mean() + 60, (edge.mean(), centre.mean())
    assert centre.mean() < 110  # translucent: the black wall shows through


def test_patterns_are_chosen_by_material_and_axis() -> None:
    assert patterns.box_patterns(F + "oak_planks") == (patterns.PLANKS,) * 6
    assert patterns.box_patterns(F + "spruce_stairs[facing=north]") == (patterns.PLANKS,) * 6
    assert patterns.box_patterns(F + "brick_wall") == (patterns.BRICKS,) * 6
    assert patterns.box_patterns(F + "deepslate_bricks") == (patterns.STONE_BRICKS,) * 6
    assert patterns.box_patterns(F + "red_stained_glass_pane") == (patterns.GLASS,) * 6
    assert patterns.box_patterns(F + "stone") == (patterns.PLAIN,) * 6
    # axis y: rings on top and bottom; bark on the sides with stripes along y (vary along u)
    assert patterns.box_patterns(F + "oak_log[axis=y]") == (
        patterns.BARK_U,
        patterns.BARK_U,
        patterns.RINGS,
        patterns.RINGS,
        patterns.BARK_U,
        patterns.BARK_U,
    )
    assert patterns.box_patterns(F + "birch_log[axis=x]")[:2] == (patterns.RINGS, patterns.RINGS)
    assert patterns.RINGS not in patterns.box_patterns(F + "oak_wood[axis=y]")
    assert patterns.plank_of(F + "stripped_cherry_log[axis=z]") == F + "cherry_planks"
    door = F + "oak_door[facing=south,half=upper,hinge=left,open=false]"
    assert patterns.shape_face_pattern(door, (0, 0, 0), (16, 16, 3), 5) == patterns.DOOR_UPPER
    assert patterns.shape_face_pattern(door, (0, 0, 0), (16, 16, 3), 0) == patterns.PLAIN  # the 3-px edge


def test_a_step_in_one_material_is_outlined(renderer: gl.GLRenderer) -> None:
    """Head on, a stone wall whose right half stands two blocks further back: same colour, same
    (no) pattern, its side face hidden, and too far back for ambient occlusion to darken the
    corner. The depth-edge pass darkens the step; an ordinary joint between two blocks of the
    wall stays a faint line."""
    pal = [F + "air", F + "stone"]
    a = np.zeros((3, 5, 6), np.uint16)
    a[:, 1, :3] = 1  # left half at z = 1
    a[:, 3, 3:] = 1  # right half at z = 3
    m = mesh.build(pal, a)
    v = _head_on(m.size, True)
    img = _luma(renderer.render(m, v))
    rows = slice(PX // 2, 5 * PX // 2)
    col = lambda x: int(round(gl.project(v, np.array([[x, 1.5, 1.0]]))[0][0]))  # noqa: E731

    def darkest(x: float) -> float:
        c = col(x)
        return float(img[rows, c - 2 : c + 3].mean(axis=0).min())

    plain = float(np.median(img[rows, col(0.5)]))
    assert plain - darkest(3.0) > 35, (plain, darkest(3.0))  # the step
    assert plain - darkest(2.0) < 25, (plain, darkest(2.0))  # an ordinary joint in the same plane
