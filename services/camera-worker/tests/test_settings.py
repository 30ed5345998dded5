"""The camera worker reads its environment in one place (settings.py), checked once."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from mcb_camera.settings import CameraSettings

SRC = Path(__file__).resolve().parents[1] / "src" / "mcb_camera"


def test_defaults_and_values_from_the_environment() -> None:
    assert CameraSettings.from_env({}) == CameraSettings()
    s = CameraSettings.from_env(
        {
            "MCB_CAMERA_DRIVER": " Fabric ",
            "MCB_CAMERA_INLINE_WAIT_S": "0",
            "MCB_CAMERA_VIEW_DISTANCE": "32.5",
            "MCB_CAMERA_LINK_PORT": "9001",
            "MCB_CAMERA_LINK_KEY": "k",
            "MCB_CAMERA_GL_BACKEND": "x11",
            "MCB_CAMERA_TEST_HOLD_AFTER_READ_S": "1.5",
        }
    )
    assert (
        s.driver,
        s.inline_wait_s,
        s.view_distance,
        s.link_port,
        s.link_key,
        s.gl_backend,
        s.test_hold_after_read_s,
    ) == ("fabric", 0.0, 32.5, 9001, "k", "x11", 1.5)


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"MCB_CAMERA_DRIVER": "vulkan"}, "MCB_CAMERA_DRIVER"),
        ({"MCB_CAMERA_INLINE_WAIT_S": "soon"}, "MCB_CAMERA_INLINE_WAIT_S"),
        ({"MCB_CAMERA_OPERATION_TIMEOUT_S": "-1"}, "MCB_CAMERA_OPERATION_TIMEOUT_S"),
        ({"MCB_CAMERA_LINK_PORT": "70000"}, "MCB_CAMERA_LINK_PORT"),
    ],
)
def test_a_bad_value_stops_the_worker_naming_the_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(SystemExit, match=named):
        CameraSettings.from_env(env)


def test_no_module_but_settings_reads_the_environment() -> None:
    readers = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "settings.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb"):
                readers.append(f"{path.name}:{node.lineno}")
            elif (
                isinstance(node, ast.ImportFrom)
                and node.module == "os"
                and any(a.name in ("environ", "getenv") for a in node.names)
            ):
                readers.append(f"{path.name}:{node.lineno}")
    assert readers == [], f"read MCB_CAMERA_* in settings.py (CameraSettings), not in {readers}"


def test_the_link_port_comes_from_the_stacks_saved_ports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31 item 1: like every port of the stack, the link's is MCB_CAMERA_LINK_PORT, else the
    one `mcb up` saved in config.json ("ports"), else 8766."""
    import json

    from mcb_rpc.settings import Settings

    for var in ("MCB_CAMERA_LINK_PORT", "MCB_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MCB_RUNTIME_DIR", str(tmp_path))
    assert CameraSettings.from_env({}, link_port=Settings.from_env().ports["camera_link"]).link_port == 8766
    (tmp_path / "config.json").write_text(json.dumps({"ports": {"camera_link": 29001}}))
    saved = Settings.from_env().ports["camera_link"]
    assert CameraSettings.from_env({}, link_port=saved).link_port == 29001
    assert CameraSettings.from_env({"MCB_CAMERA_LINK_PORT": "29002"}, link_port=saved).link_port == 29002
