"""The worker's pose rules (validate_pose): the FOV range is the Minecraft client's FOV option,
30..110, for every driver (camera-mod/core Pose.MIN_FOV/MAX_FOV cites the game's source)."""

from __future__ import annotations

import pytest
from mcb.camera.v1 import camera_pb2
from mcb_camera.poses import DEFAULT_FOV, MAX_FOV, MIN_FOV, validate_pose
from mcb_common.errors import ErrorCode, McbError


def pose(fov: float) -> camera_pb2.Pose:  # Pose.fov is a float32 on the wire
    return camera_pb2.Pose(x=0.5, y=80, z=0.5, yaw=45, pitch=30, fov=fov)


def test_the_range_is_the_games_fov_option() -> None:
    assert (MIN_FOV, MAX_FOV, DEFAULT_FOV) == (30.0, 110.0, 70.0)


@pytest.mark.parametrize("fov", [30.0, 30.5, 70.0, 109.5, 110.0])
def test_a_fov_inside_30_to_110_is_kept(fov: float) -> None:
    assert validate_pose(pose(fov)).fov == pytest.approx(fov)


def test_no_fov_is_the_default_70() -> None:
    assert validate_pose(pose(0)).fov == DEFAULT_FOV


@pytest.mark.parametrize("fov", [29.99, 1.0, 10.0, -70.0, 110.01, 120.0, 170.0])
def test_a_fov_outside_30_to_110_is_refused_with_what_to_ask_instead(fov: float) -> None:
    with pytest.raises(McbError) as info:
        validate_pose(pose(fov))
    err = info.value
    assert err.code is ErrorCode.INVALID_REQUEST
    assert "between 30 and 110" in err.message and "default 70" in err.message, err.message
    assert err.details["field"] == "pose.fov"
    assert (err.details["min"], err.details["max"]) == (30.0, 110.0)
    assert err.details["fov"] == pytest.approx(fov)


# --- the side view and a pose inside a block (issue 31 item 8) -----------------------------


@pytest.mark.parametrize(
    ("entrance", "side", "yaw"),
    [("south", "west", 270.0), ("west", "north", 0.0), ("north", "east", 90.0), ("east", "south", 180.0)],
)
def test_side_is_a_quarter_turn_clockwise_from_the_entrance(entrance: str, side: str, yaw: float) -> None:
    from mcb_camera import gl, viewpoints

    box = (0, 64, 0, 9, 69, 5)
    got_side, p = viewpoints.side_pose(box, entrance)
    assert got_side == side and p["yaw"] % 360 == pytest.approx(yaw) and p["pitch"] == 0
    # looking at the box's centre, horizontally, perpendicular to the entrance view's direction
    ent = dict(viewpoints.poses(box, entrance))["entrance"]
    assert abs(gl.look_dir(ent["yaw"], 0) @ gl.look_dir(p["yaw"], 0)) < 1e-9
    ux, uz = viewpoints.SIDES[side]
    assert (p["x"] - 5.0) * ux + (p["z"] - 3.0) * uz > 0  # it stands on that side


async def _blocks_of(solid: set[tuple[int, int, int]], calls: list[int]):
    async def blocks(cells: list[tuple[int, int, int]]) -> list[str]:
        calls.append(len(cells))
        return ["minecraft:stone" if c in solid else "minecraft:air" for c in cells]

    return blocks


def test_a_pose_inside_a_block_steps_back_along_its_view() -> None:
    import asyncio

    from mcb_camera import viewpoints

    wall = {(x, y, z) for x in range(-3, 4) for y in range(60, 70) for z in range(0, 3)}
    calls: list[int] = []
    blocks = asyncio.run(_blocks_of(wall, calls))
    pose = {"x": 0.5, "y": 63.0, "z": 1.5, "yaw": 180.0, "pitch": 0.0, "fov": 70.0}  # looks north, eye (0, 64, 1)
    hit = asyncio.run(viewpoints.solid_at_eye(pose, blocks))
    assert hit == ((0, 64, 1), "minecraft:stone")
    free = asyncio.run(viewpoints.step_back(pose, blocks))
    assert free is not None and free["z"] == 3.0 and free["x"] == 0.5 and free["yaw"] == 180.0  # out the south face
    # buried deep: no free cell along the ray or above within 32 blocks
    deep = {(x, y, z) for x in range(-1, 2) for y in range(60, 110) for z in range(-40, 40)}
    assert asyncio.run(viewpoints.step_back(pose, asyncio.run(_blocks_of(deep, [])))) is None
    assert asyncio.run(viewpoints.solid_at_eye({**pose, "y": 70.0}, blocks)) is None
