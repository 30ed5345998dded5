"""The worker's pose rules (validate_pose): the FOV range is the Minecraft client's FOV option,
30..110, for every driver (camera-mod/core Pose.MIN_FOV/MAX_FOV cites the game's source)."""

from __future__ import annotations

import pytest
from mcb.camera.v1 import camera_pb2
from mcb_camera.server import DEFAULT_FOV, MAX_FOV, MIN_FOV, validate_pose
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

