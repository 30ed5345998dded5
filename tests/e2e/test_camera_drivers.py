"""ACCEPTANCE 12 (worker level): real redis-server, real embedded world host, real camera
worker processes; the Fabric link against a scripted stand-in client process.

* a capture during a change is flagged stale (the worker holds after reading, the test
  changes a block in that window);
* a scene that cannot become ready (chunks never generated) -> capture_not_ready;
* no camera client / a dropped link -> camera_unavailable; the client's timeout ->
  capture_not_ready;
* an old image is never returned for a new request.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import numpy as np
import pytest
from harness import Proc, free_port, start_process, start_redis, wait_until
from mcb.camera.v1 import camera_pb2, camera_pb2_grpc
from mcb.common.v1 import common_pb2
from mcb_camera import gl, png
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.auth import call_metadata
from mcb_rpc.errors import from_rpc_error
from mcb_rpc.tokens import ensure_token

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")

HERE = Path(__file__).resolve().parent
PRINCIPALS = ("agent", "admin", "service", "automation")


class Env:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.procs: list[Proc] = []
        self.redis, self.redis_url = start_redis(tmp)
        self.runtime = tmp / "runtime"
        self.secrets = self.runtime / "secrets"
        self.tokens = {p: ensure_token(self.secrets, p) for p in PRINCIPALS}
        port = free_port()
        self.world_url = f"http://127.0.0.1:{port}"
        self.base = {
            "MCB_RUNTIME_DIR": str(self.runtime),
            "MCB_SECRETS_DIR": str(self.secrets),
            "MCB_BIND_HOST": "127.0.0.1",
            "MCB_REDIS_URL": self.redis_url,
            "MCB_WORLD_HOST_URL": self.world_url,
            "PYTHONUNBUFFERED": "1",
            **{f"MCB_{p.upper()}_TOKEN": "" for p in PRINCIPALS},
        }
        self.procs.append(
            start_process(
                "world-host",
                [sys.executable, "-m", "mcb_world_host"],
                tmp / "logs",
                env={
                    **self.base,
                    "MCB_WORLD_DIR": str(self.runtime / "world"),
                    "MCB_WORLD_CREATE": "flat",
                    "MCB_WORLD_PREGEN": "-32,-32,31,31",
                    "MCB_WORLD_HOST_PORT": str(port),
                    "MCB_ALLOW_LOCAL_AUTOMATION": "1",
                },
                health_url=f"{self.world_url}/health",
                timeout=60,
            )
        )

    def worker(self, name: str, **env: str) -> tuple[Proc, str]:
        g, h = free_port(), free_port()
        e = {
            **self.base,
            "MCB_CAMERA_GRPC_PORT": str(g),
            "MCB_CAMERA_HEALTH_PORT": str(h),
            "MCB_CAMERA_INLINE_WAIT_S": "0",
            "MCB_JOURNAL_ADDR": f"127.0.0.1:{free_port()}",
            "MCB_RUNTIME_DIR": str(self.runtime / name),
            **env,
        }
        p = start_process(
            name,
            [sys.executable, "-m", "mcb_camera"],
            self.tmp / "logs",
            env=e,
            health_url=f"http://127.0.0.1:{h}/health",
            timeout=60,
        )
        self.procs.append(p)
        return p, f"127.0.0.1:{g}"

    def set_blocks(self, blocks: list[dict], actor: str = "external") -> None:
        r = httpx.post(
            f"{self.world_url}/v1/rpc",
            headers={"Authorization": f"Bearer {self.tokens['automation']}"},
            json={"method": "automation_set_blocks", "params": {"actor": actor, "blocks": blocks}},
            timeout=30,
        )
        assert r.json()["ok"], r.text

    def close(self) -> None:
        for p in reversed(self.procs):
            p.stop()
        self.redis.stop()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    e = Env(tmp_path_factory.mktemp("camdrv"))
    yield e
    e.close()


def box(x0: int, y0: int, z0: int, x1: int, y1: int, z1: int) -> common_pb2.Box:
    return common_pb2.Box(min=common_pb2.Vec3(x=x0, y=y0, z=z0), max=common_pb2.Vec3(x=x1, y=y1, z=z1))


REGION = box(-16, 60, -16, 15, 80, 15)
POSE = camera_pb2.Pose(x=-20, y=72, z=-20, yaw=-45, pitch=25, width=320, height=180)


def capture(addr: str, token: str, **kw) -> camera_pb2.CaptureResponse:
    with grpc.insecure_channel(addr) as ch:
        return camera_pb2_grpc.CameraStub(ch).Capture(
            camera_pb2.CaptureRequest(**kw), metadata=call_metadata(token, "p1", "pl"), timeout=30
        )


def poll_until_done(addr: str, token: str, cid: str, timeout: float = 40) -> camera_pb2.CaptureResponse:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = capture(addr, token, capture_id=cid)
        if r.status == "completed":
            return r
        assert r.status == "pending", r
        time.sleep(0.1)
    raise TimeoutError(f"capture {cid} still pending after {timeout}s")


def error_of(fn) -> McbError:
    with pytest.raises(grpc.RpcError) as info:
        fn()
    return from_rpc_error(info.value, "camera-worker")


def test_capture_during_change_is_stale_and_next_is_fresh(env: Env) -> None:
    _, addr = env.worker("cam-hold", MCB_CAMERA_TEST_HOLD_AFTER_READ_S="1.5")
    tok = env.tokens["agent"]
    first = capture(addr, tok, pose=POSE, region=REGION)
    assert first.status == "pending" and first.capture_id
    # wait until the worker has read the scene and holds before drawing
    wait_until(
        lambda: capture(addr, tok, capture_id=first.capture_id).metadata.stage == "holding",
        20,
        "the worker to hold after reading",
        interval=0.05,
    )
    env.set_blocks([{"x": 0, "y": 64, "z": 0, "state": "minecraft:gold_block"}])  # silent: no event
    done = poll_until_done(addr, tok, first.capture_id)
    meta = done.metadata
    assert meta.stale is True and meta.server_revision_verified is False
    assert meta.changed_section_count >= 1 and len(meta.changed_sections) >= 1
    assert done.image.startswith(b"\x89PNG")
    # the next request gets a new capture id and a fresh, verified picture - never the old one
    second = poll_until_done(addr, tok, capture(addr, tok, pose=POSE, region=REGION).capture_id)
    m2 = second.metadata
    assert second.capture_id != first.capture_id
    assert m2.stale is False and m2.server_revision_verified is True
    assert m2.max_revision > meta.max_revision or m2.revision_digest != meta.revision_digest
    assert second.image != done.image
    # polling the first id still answers the first picture (ids are never reused)
    again = capture(addr, tok, capture_id=first.capture_id)
    assert again.image == done.image


def test_scene_that_cannot_become_ready_is_capture_not_ready(env: Env) -> None:
    _, addr = env.worker("cam-notready", MCB_CAMERA_READINESS_TIMEOUT_S="2")
    tok = env.tokens["agent"]
    started = time.monotonic()
    r = capture(
        addr,
        tok,
        pose=camera_pb2.Pose(x=5000, y=80, z=5000, width=64, height=64),
        region=box(5000, 60, 5000, 5031, 70, 5031),
    )

    def failed() -> bool:
        try:
            capture(addr, tok, capture_id=r.capture_id)
            return False
        except grpc.RpcError:
            return True

    wait_until(failed, 20, "the capture to fail", interval=0.1)
    err = error_of(lambda: capture(addr, tok, capture_id=r.capture_id))
    assert err.code is ErrorCode.CAPTURE_NOT_READY, err
    assert err.retryable is True
    assert err.details["missingChunks"] and err.details["capture_id"] == r.capture_id
    assert 1.5 < time.monotonic() - started < 15
    assert not list((env.runtime / "cam-notready").glob("camera/captures/*.png"))


def _client(env: Env, url: str, key: str, mode: str, name: str) -> Proc:
    out = env.tmp / "logs" / f"{name}.log"
    p = start_process(
        name,
        [sys.executable, str(HERE / "camera_client_stub.py"), url, key, mode],
        env.tmp / "logs",
        ready=lambda: "CONNECTED" in out.read_text(errors="replace") if out.exists() else False,
        timeout=20,
    )
    env.procs.append(p)
    return p


def test_fabric_link(env: Env) -> None:
    lport = free_port()
    _, addr = env.worker("cam-link", MCB_CAMERA_DRIVER="fabric", MCB_CAMERA_LINK_PORT=str(lport))
    tok = env.tokens["agent"]
    key = (env.secrets / "camera-link.token").read_text().strip()
    url = f"ws://127.0.0.1:{lport}"
    # no client: camera_unavailable at once
    err = error_of(lambda: capture(addr, tok, pose=POSE))
    assert err.code is ErrorCode.CAMERA_UNAVAILABLE and "no camera client" in err.message
    # a wrong key is refused before the WebSocket opens
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    with pytest.raises(InvalidStatus):
        connect(url, additional_headers={"Authorization": "Bearer nope"}, open_timeout=5)
    # a working client: the PNG it made comes back with its metadata, unverified
    ok = _client(env, url, key, "ok", "stub-ok")
    r = poll_until_done(addr, tok, capture(addr, tok, pose=POSE, region=REGION).capture_id)
    meta = r.metadata
    assert meta.driver == "fabric" and meta.HasField("server_revision_verified") and not meta.server_revision_verified
    assert meta.client_report["stableFrames"] == 3 and meta.width == 320
    from mcb_camera import png

    assert int(png.decode(r.image)[0, 0, 0]) == int(POSE.yaw) % 256
    ok.stop()
    # the client times out on readiness -> capture_not_ready
    nr = _client(env, url, key, "notready", "stub-notready")
    cid = capture(addr, tok, pose=POSE).capture_id
    wait_until(lambda: _failed(addr, tok, cid), 20, "notready failure")
    assert error_of(lambda: capture(addr, tok, capture_id=cid)).code is ErrorCode.CAPTURE_NOT_READY
    nr.stop()
    # the link drops in the middle of a capture -> camera_unavailable, and no picture
    _client(env, url, key, "drop", "stub-drop")
    cid = capture(addr, tok, pose=POSE).capture_id
    wait_until(lambda: _failed(addr, tok, cid), 20, "drop failure")
    err = error_of(lambda: capture(addr, tok, capture_id=cid))
    assert err.code is ErrorCode.CAMERA_UNAVAILABLE and "dropped" in err.message
    assert not (env.runtime / "cam-link" / "camera" / "captures" / f"{cid}.png").exists()


def _failed(addr: str, tok: str, cid: str) -> bool:
    try:
        capture(addr, tok, capture_id=cid)
        return False
    except grpc.RpcError:
        return True


def test_saved_camera_auto_viewpoints_and_diff(env: Env) -> None:
    _, addr = env.worker("cam-misc")
    tok, admin = env.tokens["agent"], env.tokens["admin"]
    with grpc.insecure_channel(addr) as ch:
        stub = camera_pb2_grpc.CameraStub(ch)
        md = call_metadata(admin, "p1", "pl")
        saved = stub.SaveCamera(
            camera_pb2.SaveCameraRequest(
                project_id="p1", camera=camera_pb2.CameraInfo(camera_id="front", name="Front", pose=POSE)
            ),
            metadata=md,
            timeout=10,
        )
        assert saved.pose.width == 320 and saved.pose.fov == 70
        listed = stub.ListCameras(camera_pb2.ListCamerasRequest(), metadata=call_metadata(tok, "p1", "pl"), timeout=10)
        assert [c.camera_id for c in listed.cameras] == ["front"] and listed.driver == "builtin"
        # a bunker around where a viewpoint would stand: the pose must be moved out of it
        env.set_blocks(
            [
                {"x": x, "y": y, "z": z, "state": "minecraft:stone"}
                for x in range(-2, 3)
                for y in range(64, 71)
                for z in range(10, 17)
            ]
        )
        vps = stub.AutoViewpoints(
            camera_pb2.AutoViewpointsRequest(region=box(-4, 64, -4, 4, 70, 4)), metadata=md, timeout=20
        ).viewpoints
        assert [v.name for v in vps] == ["entrance", "opposite", "diagonal"]
        for v in vps:
            feet = (int(v.pose.x // 1), int(v.pose.y // 1), int(v.pose.z // 1))
            r = httpx.post(
                f"{env.world_url}/v1/rpc",
                headers={"Authorization": f"Bearer {env.tokens['service']}"},
                json={"method": "blocks_get", "params": {"xyz": [*feet, feet[0], feet[1] + 1, feet[2]]}},
                timeout=10,
            ).json()["result"]
            assert all(not r["palette"][i].startswith("minecraft:stone") for i in r["state"]), (v, r)
        assert any("moved" in v.note for v in vps), [v.note for v in vps]
    a = poll_until_done(addr, tok, capture(addr, tok, camera_id="front", region=REGION).capture_id)
    env.set_blocks(
        [{"x": x, "y": 64 + y, "z": 0, "state": "minecraft:lime_wool"} for x in range(-3, 4) for y in range(6)]
    )
    b = poll_until_done(addr, tok, capture(addr, tok, camera_id="front", region=REGION).capture_id)
    with grpc.insecure_channel(addr) as ch:
        d = camera_pb2_grpc.CameraStub(ch).DiffCaptures(
            camera_pb2.DiffCapturesRequest(capture_a=a.capture_id, capture_b=b.capture_id),
            metadata=call_metadata(tok, "p1", "pl"),
            timeout=20,
        )
    assert 0.001 < d.changed_fraction < 0.5 and len(d.bbox) == 4 and d.image.startswith(b"\x89PNG")


def _image(r: camera_pb2.CaptureResponse) -> np.ndarray:
    return png.decode(r.image).astype(np.int16)


def test_side_view_is_perpendicular_to_the_entrance(env: Env) -> None:
    """Issue 31 item 8: ``side`` looked the same way as ``entrance`` (both from the south).
    An asymmetric build, no door (entrance: south): a 12-long, 3-high wall along x in the row
    z = -24 and an 8-high pillar in front of its west end (z = -23). ``side`` now looks from the
    west (a quarter turn clockwise from the entrance, viewpoints.SIDE_OF): the pillar is on
    the right (south), the wall end on the left, 2 blocks wide; ``entrance`` looks from the
    south: the pillar at the left (west) end of a 12-block wall."""
    _, addr = env.worker("cam-side")
    tok = env.tokens["agent"]
    region = box(16, 64, -24, 27, 73, -23)
    size = (12, 10, 2)
    w, h = 320, 180

    def shoot(view: str) -> camera_pb2.CaptureResponse:
        return poll_until_done(addr, tok, capture(addr, tok, region=region, view=view, width=w, height=h).capture_id)

    before = {v: shoot(v) for v in ("side", "entrance")}
    env.set_blocks(
        [{"x": x, "y": y, "z": -24, "state": "minecraft:stone_bricks"} for x in range(16, 28) for y in range(64, 67)]
        + [{"x": 16, "y": y, "z": -23, "state": "minecraft:red_concrete"} for y in range(64, 72)]
    )
    after = {v: shoot(v) for v in ("side", "entrance")}

    side_meta = after["side"].metadata
    assert side_meta.view == "side"
    assert side_meta.pose.x < 16 and abs(side_meta.pose.yaw - 270) < 1e-6, side_meta.pose
    ent_meta = after["entrance"].metadata
    assert ent_meta.pose.z > -23 and abs(ent_meta.pose.yaw % 360 - 180) < 1e-6, ent_meta.pose

    changed = {v: np.abs(_image(after[v]) - _image(before[v])).max(axis=2) > 12 for v in after}
    # side: orthographic, looking east from the west; 180 px for 12 blocks (10 high + margin)
    sv = gl.ortho_view("side", size, w, h, side_meta.pose.yaw)

    def at(view: gl.View, mask: np.ndarray, point: tuple[float, float, float], origin=(16, 64, -24)) -> bool:
        c, r = gl.project(view, np.array([point]) - np.array(origin, float))[0]
        return bool(mask[int(r), int(c)])

    m = changed["side"]
    assert at(sv, m, (16.5, 71.5, -22.5))  # the pillar's top, on the right (south)
    assert not at(sv, m, (16.5, 71.5, -23.5))  # above the wall's end, left (north): sky
    assert at(sv, m, (16.5, 65.5, -23.5))  # the wall's end face
    cols = np.flatnonzero(m.any(axis=0))
    per_block = h / (2 * (size[1] / 2 + 1))
    assert abs((cols.max() - cols.min() + 1) - 2 * per_block) <= 4, (cols.min(), cols.max(), per_block)
    # entrance: perspective from the south; the pillar stands at the west (left) end
    pose = ent_meta.pose
    ev = gl.perspective_view((pose.x, pose.y, pose.z), pose.yaw, pose.pitch, pose.fov, w, h, (0, 0, 0), 256)
    m = changed["entrance"]
    assert at(ev, m, (16.5, 71.5, -22.5), (0, 0, 0))  # the pillar's top
    assert not at(ev, m, (27.5, 71.5, -23.0), (0, 0, 0))  # the wall's east end is low: sky there
    assert at(ev, m, (27.5, 65.0, -23.5), (0, 0, 0))
    c_pillar = gl.project(ev, np.array([[16.5, 68.0, -22.5]]))[0][0]
    c_east = gl.project(ev, np.array([[27.5, 65.0, -23.5]]))[0][0]
    assert c_pillar < c_east  # west is on the left when looking north
    assert not np.array_equal(_image(after["side"]), _image(after["entrance"]))


def test_pose_inside_a_solid_block_is_refused_with_a_suggestion(env: Env) -> None:
    """Issue 31 item 8: a pose inside a solid block returned a plain brown picture. The eye
    (feet + 1.62) inside an opaque block is refused before anything is queued, naming the block,
    with the nearest free pose along the view ray; that pose works."""
    _, addr = env.worker("cam-inside")
    tok, admin = env.tokens["agent"], env.tokens["admin"]
    env.set_blocks(
        [
            {"x": x, "y": y, "z": z, "state": "minecraft:dirt"}
            for x in range(-26, -23)
            for y in range(64, 67)
            for z in range(22, 25)
        ]
    )
    inside = camera_pb2.Pose(x=-24.5, y=63.5, z=23.5, yaw=180, pitch=0, width=64, height=64)  # eye (-25, 65, 23)
    err = error_of(lambda: capture(addr, tok, pose=inside))
    assert err.code is ErrorCode.INVALID_REQUEST, err
    d = err.details
    assert d["reason"] == "pose_inside_block" and d["block"] == "minecraft:dirt"
    assert d["position"] == {"x": -25, "y": 65, "z": 23}
    assert "minecraft:dirt at (-25, 65, 23)" in err.message and "try pose" in err.message
    s = d["suggestedPose"]
    assert s["yaw"] == 180 and s["pitch"] == 0 and s["x"] == -24.5 and 24.9 < s["z"] < 25.6, s
    assert not list((env.runtime / "cam-inside").glob("camera/captures/*"))  # nothing was queued
    ok = poll_until_done(addr, tok, capture(addr, tok, pose=camera_pb2.Pose(**s, width=64, height=64)).capture_id)
    assert ok.image.startswith(b"\x89PNG")
    # a saved camera inside the block: the same refusal, naming the camera
    with grpc.insecure_channel(addr) as ch:
        camera_pb2_grpc.CameraStub(ch).SaveCamera(
            camera_pb2.SaveCameraRequest(camera=camera_pb2.CameraInfo(camera_id="buried", pose=inside)),
            metadata=call_metadata(admin, "p1", "pl"),
            timeout=10,
        )
    err = error_of(lambda: capture(addr, tok, camera_id="buried"))
    assert err.code is ErrorCode.INVALID_REQUEST and err.details["camera_id"] == "buried", err
    assert "camera_save" in err.message
    # orthographic views have no eye: a pose with view side is drawn along its yaw
    ok = poll_until_done(
        addr, tok, capture(addr, tok, pose=inside, view="side", region=box(-26, 64, 22, -24, 66, 24)).capture_id
    )
    assert ok.metadata.view == "side"
    # the built-in renderer drawing only a region the eye is outside of: nothing hides the view
    ok = poll_until_done(addr, tok, capture(addr, tok, pose=inside, region=box(-26, 60, 10, -20, 70, 20)).capture_id)
    assert ok.image.startswith(b"\x89PNG")


def test_world_host_lost_is_camera_unavailable(env: Env) -> None:
    """Runs last in this module: it stops the shared world host."""
    _, addr = env.worker("cam-lost")
    tok = env.tokens["agent"]
    ok = poll_until_done(addr, tok, capture(addr, tok, pose=POSE, region=REGION).capture_id)
    assert ok.image.startswith(b"\x89PNG")
    env.procs[0].stop()  # the world host
    cid = capture(addr, tok, pose=POSE, region=REGION).capture_id
    wait_until(lambda: _failed(addr, tok, cid), 30, "the capture to fail")
    err = error_of(lambda: capture(addr, tok, capture_id=cid))
    assert err.code is ErrorCode.CAMERA_UNAVAILABLE and err.details["worker_state"] == "link_lost"
    assert not (env.runtime / "cam-lost" / "camera" / "captures" / f"{cid}.png").exists()
