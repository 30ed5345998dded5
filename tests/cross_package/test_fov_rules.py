"""One FOV range across the tree: the Minecraft client's FOV option (30..110; anything else is
silently drawn at 70). The camera worker, the MCP tool schema and the Java camera core refuse
the same poses (each has its own boundary tests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcb_bridge.tools import camera_specs, validate_arguments
from mcb_camera.poses import MAX_FOV, MIN_FOV
from mcb_common.errors import ErrorCode, McbError

ROOT = Path(__file__).resolve().parents[2]
POSE_JAVA = ROOT / "camera-mod" / "core" / "src" / "main" / "java" / "dev" / "mcb" / "camera" / "core" / "Pose.java"


def _java_constant(name: str) -> float:
    m = re.search(rf"public static final float {name} = ([0-9.]+)f;", POSE_JAVA.read_text())
    assert m, f"{name} not found in {POSE_JAVA}"
    return float(m.group(1))


def _spec(name: str):  # noqa: ANN202
    return next(s for s in camera_specs() if s.name == name)


def test_worker_tool_schema_and_java_core_share_the_games_fov_range() -> None:
    assert (MIN_FOV, MAX_FOV) == (30.0, 110.0)
    for name in ("camera_capture", "camera_save"):
        fov = _spec(name).input_schema["properties"]["pose"]["properties"]["fov"]
        assert (fov["minimum"], fov["maximum"]) == (MIN_FOV, MAX_FOV), name
    assert "30-110" in _spec("camera_capture").description  # tools/list shows the pose without bounds
    assert (_java_constant("MIN_FOV"), _java_constant("MAX_FOV")) == (MIN_FOV, MAX_FOV)


@pytest.mark.parametrize("name", ["camera_capture", "camera_save"])
@pytest.mark.parametrize(
    ("fov", "ok"), [(29.9, False), (30, True), (70, True), (110, True), (110.1, False), (10, False), (170, False)]
)
def test_the_mcp_tools_refuse_a_fov_outside_30_to_110(name: str, fov: float, ok: bool) -> None:
    args = {"pose": {"x": 0, "y": 80, "z": 0, "yaw": 0, "pitch": 0, "fov": fov}}
    if name == "camera_save":
        args["camera_id"] = "front"
    if ok:
        validate_arguments(_spec(name), args)
        return
    with pytest.raises(McbError) as info:
        validate_arguments(_spec(name), args)
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert info.value.details["problems"][0]["path"] == "pose.fov", info.value.details


def test_the_docs_state_the_same_range() -> None:
    for doc in ("camera-mod/README.md", "docs/camera-link.md", "services/camera-worker/README.md"):
        text = (ROOT / doc).read_text()
        assert "30–110" in text or "30..110" in text, doc
        assert "10..170" not in text and "1..170" not in text, doc
