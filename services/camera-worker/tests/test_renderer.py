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
from mcb_camera import gl, mesh, png, scenes, shapes, viewpoints

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
    assert shapes.model_for("minecraft:oak_stairs[facing=south,half=bottom,shape=straight]").boxes[1] == ((0, 8, 8), (16, 16, 16))
    assert shapes.model_for("minecraft:oak_stairs[facing=east,half=bottom,shape=straight]").boxes[1] == ((8, 8, 0), (16, 16, 16))
    assert shapes.model_for("minecraft:oak_stairs[facing=west,half=top,shape=straight]").boxes == (
        ((0, 8, 0), (16, 16, 16)), ((0, 0, 0), (8, 8, 16)))
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
    assert shapes.model_for("minecraft:oak_door[facing=east,hinge=right,open=true]").boxes == (((0, 0, 13), (16, 16, 16)),)
    assert shapes.model_for("minecraft:oak_trapdoor[half=top,open=false]").boxes == (((0, 13, 0), (16, 16, 16)),)
    assert shapes.model_for("minecraft:oak_trapdoor[facing=north,open=true]").boxes == (((0, 0, 13), (16, 16, 16)),)
    assert shapes.model_for("minecraft:torch").boxes == (((7, 0, 7), (9, 10, 9)),)
    assert shapes.model_for("minecraft:poppy").crosses and shapes.model_for("minecraft:wheat[age=3]").crosses
    assert shapes.model_for("minecraft:stone") is None and shapes.model_for("minecraft:oak_slab[type=top]") is None
    assert shapes.model_for("minecraft:oak_wall_sign[facing=north]") is None  # not a wall


def test_mesh_culls_against_cubes_but_keeps_inner_faces() -> None:
    pal = ["minecraft:air", "minecraft:stone", "minecraft:oak_slab[type=bottom]",
           "minecraft:oak_fence[north=true,south=false,east=false,west=false]"]
    a = np.zeros((2, 1, 3), np.uint16)
    a[0, 0] = [2, 3, 1]   # slab, fence post (arm to the north, out of the region), stone
    a[1, 0] = [1, 1, 1]   # stone over all three
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
        v = gl.perspective_view((pose["x"], pose["y"], pose["z"]), pose["yaw"], pose["pitch"], pose["fov"],
                                320, 180, origin, far)
        images.append(renderer.render(m, v).astype(np.int16))
    before, after = images
    assert np.abs(after - before).mean() > 2.0
    _golden("gold-box-after.png", after.astype(np.uint8))
