"""The camera worker as a real process, against a real redis-server.

Here the worker runs with ``MCB_CAMERA_DRIVER=none``: it must say so honestly —
``worker_state="no_driver"`` and ``camera_unavailable`` on capture — and never return an image.
The drivers that take pictures are tested in tests/e2e/test_camera*.py.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
import pytest
import redis
from harness import Proc, free_port, start_process, start_redis, wait_until
from mcb.camera.v1 import camera_pb2, camera_pb2_grpc
from mcb_camera.store import CameraStore
from mcb_common.errors import ErrorCode
from mcb_rpc.auth import call_metadata
from mcb_rpc.errors import from_rpc_error
from mcb_rpc.tokens import ensure_token

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="redis-server is not installed (make test installs it)"
)


@dataclass
class Worker:
    proc: Proc
    redis_proc: Proc
    redis_url: str
    grpc_addr: str
    health_url: str
    tokens: dict[str, str]
    runtime: Path

    def stub(self) -> tuple[grpc.Channel, camera_pb2_grpc.CameraStub]:
        ch = grpc.insecure_channel(self.grpc_addr)
        return ch, camera_pb2_grpc.CameraStub(ch)


def _start(tmp: Path) -> Worker:
    redis_proc, redis_url = start_redis(tmp)
    runtime = tmp / "runtime"
    secrets = runtime / "secrets"
    tokens = {p: ensure_token(secrets, p) for p in ("agent", "admin", "service", "automation")}
    gport, hport = free_port(), free_port()
    env = {
        "MCB_RUNTIME_DIR": str(runtime),
        "MCB_SECRETS_DIR": str(secrets),
        "MCB_REDIS_URL": redis_url,
        "MCB_CAMERA_GRPC_PORT": str(gport),
        "MCB_CAMERA_HEALTH_PORT": str(hport),
        "MCB_BIND_HOST": "127.0.0.1",
        "MCB_CAMERA_DRIVER": "none",
    }
    for p in ("agent", "admin", "service", "automation"):
        env[f"MCB_{p.upper()}_TOKEN"] = ""  # only the files count, whatever the caller's env says
    health = f"http://127.0.0.1:{hport}/health"
    try:
        proc = start_process(
            "camera-worker", [sys.executable, "-m", "mcb_camera"], tmp / "logs", env=env, health_url=health, timeout=30
        )
    except BaseException:
        redis_proc.kill9()
        raise
    return Worker(proc, redis_proc, redis_url, f"127.0.0.1:{gport}", health, tokens, runtime)


def _stop(w: Worker) -> None:
    rc = w.proc.stop()
    w.redis_proc.stop()
    assert rc == 0, f"camera-worker exited with {rc} on SIGTERM:\n{w.proc.log()}"


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    w = _start(tmp_path_factory.mktemp("camera"))
    yield w
    _stop(w)


def test_health_ok_reports_no_driver(worker: Worker) -> None:
    r = httpx.get(worker.health_url, timeout=5)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "ok"
    assert body["service"] == "camera-worker"
    assert body["redis"] == {"ok": True}
    assert body["worker_state"] == "no_driver"
    assert body["driver"] == ""
    # no secret of any kind in the health body
    for tok in worker.tokens.values():
        assert tok not in r.text


def test_worker_state_is_published_to_redis(worker: Worker) -> None:
    client = redis.Redis.from_url(worker.redis_url, decode_responses=True, socket_timeout=2)
    try:
        raw = client.get("mcb:camera:worker")
        assert raw is not None, "the worker publishes its state under mcb:camera:worker"
        assert json.loads(raw)["worker_state"] == "no_driver"
        assert 0 < client.ttl("mcb:camera:worker") <= 15
    finally:
        client.close()


@pytest.mark.parametrize("principal", ["agent", "admin", "service"])
def test_list_cameras_empty_no_driver(worker: Worker, principal: str) -> None:
    ch, stub = worker.stub()
    with ch:
        resp = stub.ListCameras(
            camera_pb2.ListCamerasRequest(project_id="p1"),
            metadata=call_metadata(worker.tokens[principal], "p1", "player-1"),
            timeout=10,
        )
    assert list(resp.cameras) == []
    assert resp.worker_state == "no_driver"
    assert resp.driver == ""


def test_capture_by_pose_is_camera_unavailable(worker: Worker) -> None:
    ch, stub = worker.stub()
    req = camera_pb2.CaptureRequest(project_id="p1", pose=camera_pb2.Pose(x=0, y=80, z=0, yaw=45, pitch=30))
    with ch, pytest.raises(grpc.RpcError) as info:
        stub.Capture(req, metadata=call_metadata(worker.tokens["agent"], "p1", "player-1"), timeout=10)
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    err = from_rpc_error(info.value, "camera-worker")
    assert err.code is ErrorCode.CAMERA_UNAVAILABLE
    assert err.retryable is True
    assert "no camera driver" in err.message and "MCB_CAMERA_DRIVER" in err.message
    assert err.details == {"worker_state": "no_driver"}
    # nothing was stored as if a picture had been taken
    assert not list((worker.runtime / "camera").glob("**/*.png"))


def test_capture_bad_requests_are_structured(worker: Worker) -> None:
    md = call_metadata(worker.tokens["agent"], "p1", "player-1")
    cases = [
        (camera_pb2.CaptureRequest(project_id="p1"), ErrorCode.INVALID_REQUEST),
        (camera_pb2.CaptureRequest(project_id="p1", camera_id="front", capture_id="c1"), ErrorCode.INVALID_REQUEST),
        (camera_pb2.CaptureRequest(project_id="p1", pose=camera_pb2.Pose(pitch=120)), ErrorCode.INVALID_REQUEST),
        (camera_pb2.CaptureRequest(project_id="p1", camera_id="front"), ErrorCode.NOT_FOUND),
        (camera_pb2.CaptureRequest(project_id="p1", capture_id="cap-1"), ErrorCode.NOT_FOUND),
        (camera_pb2.CaptureRequest(project_id="other", pose=camera_pb2.Pose(y=80)), ErrorCode.PERMISSION_DENIED),
        # issue 32: compare needs a plan; a plan preview needs the built-in renderer (driver none here)
        (
            camera_pb2.CaptureRequest(project_id="p1", pose=camera_pb2.Pose(y=80), compare=True),
            ErrorCode.INVALID_REQUEST,
        ),
        (
            camera_pb2.CaptureRequest(project_id="p1", pose=camera_pb2.Pose(y=80), plan_id="plan-1"),
            ErrorCode.INVALID_REQUEST,
        ),
    ]
    ch, stub = worker.stub()
    with ch:
        for req, code in cases:
            with pytest.raises(grpc.RpcError) as info:
                stub.Capture(req, metadata=md, timeout=10)
            err = from_rpc_error(info.value, "camera-worker")
            assert err.code is code, (req, err)
            assert err.message


def test_a_plan_preview_without_the_builtin_renderer_says_why(worker: Worker) -> None:
    """Issue 32: a Fabric client (or no driver) cannot draw a plan; refused before queueing."""
    ch, stub = worker.stub()
    req = camera_pb2.CaptureRequest(project_id="p1", pose=camera_pb2.Pose(y=80), plan_id="plan-1", compare=True)
    with ch, pytest.raises(grpc.RpcError) as info:
        stub.Capture(req, metadata=call_metadata(worker.tokens["agent"], "p1", "player-1"), timeout=10)
    err = from_rpc_error(info.value, "camera-worker")
    assert err.code is ErrorCode.INVALID_REQUEST
    assert err.details == {"field": "plan_id", "reason": "preview_needs_builtin"}
    assert "built-in renderer" in err.message


def test_a_fov_outside_the_games_range_is_refused_before_anything_else(worker: Worker) -> None:
    """30..110 (the Minecraft client's FOV option): refused for a pose, a camera_save and a
    camera saved under the older 1..170 rule; a valid pose with no driver is camera_unavailable."""
    md = call_metadata(worker.tokens["agent"], "p1", "player-1")
    ch, stub = worker.stub()
    with ch:
        for fov in (29.5, 110.5):
            with pytest.raises(grpc.RpcError) as info:
                stub.Capture(
                    camera_pb2.CaptureRequest(project_id="p1", pose=camera_pb2.Pose(y=80, fov=fov)),
                    metadata=md,
                    timeout=10,
                )
            err = from_rpc_error(info.value, "camera-worker")
            assert err.code is ErrorCode.INVALID_REQUEST, err
            assert "between 30 and 110" in err.message and err.details["field"] == "pose.fov", err
            assert (err.details["min"], err.details["max"]) == (30.0, 110.0)
        with pytest.raises(grpc.RpcError) as info:
            stub.Capture(
                camera_pb2.CaptureRequest(project_id="p1", pose=camera_pb2.Pose(y=80, fov=110)), metadata=md, timeout=10
            )
        assert from_rpc_error(info.value, "camera-worker").code is ErrorCode.CAMERA_UNAVAILABLE
        with pytest.raises(grpc.RpcError) as info:
            stub.SaveCamera(
                camera_pb2.SaveCameraRequest(
                    project_id="p1", camera=camera_pb2.CameraInfo(camera_id="wide", pose=camera_pb2.Pose(y=80, fov=120))
                ),
                metadata=md,
                timeout=10,
            )
        assert from_rpc_error(info.value, "camera-worker").code is ErrorCode.INVALID_REQUEST
        # a camera saved while 1..170 was accepted (the store keeps what it was given)
        CameraStore(worker.runtime / "camera").save(
            "p1", camera_pb2.CameraInfo(camera_id="old-wide", pose=camera_pb2.Pose(y=80, fov=20))
        )
        with pytest.raises(grpc.RpcError) as info:
            stub.Capture(camera_pb2.CaptureRequest(project_id="p1", camera_id="old-wide"), metadata=md, timeout=10)
        err = from_rpc_error(info.value, "camera-worker")
        assert err.code is ErrorCode.INVALID_REQUEST, err
        assert "saved camera 'old-wide'" in err.message and "camera_save" in err.message, err.message
        assert err.details["camera_id"] == "old-wide" and err.details["field"] == "pose.fov"


@pytest.mark.parametrize("token", ["wrong-token", None])
def test_wrong_or_missing_token_is_unauthenticated(worker: Worker, token: str | None) -> None:
    md = call_metadata(token) if token else ()
    ch, stub = worker.stub()
    with ch:
        for call, req in (
            (stub.ListCameras, camera_pb2.ListCamerasRequest()),
            (stub.Capture, camera_pb2.CaptureRequest(pose=camera_pb2.Pose(y=80))),
        ):
            with pytest.raises(grpc.RpcError) as info:
                call(req, metadata=md, timeout=10)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert from_rpc_error(info.value, "camera-worker").code is ErrorCode.UNAUTHENTICATED


def test_automation_token_is_permission_denied(worker: Worker) -> None:
    ch, stub = worker.stub()
    with ch, pytest.raises(grpc.RpcError) as info:
        stub.ListCameras(
            camera_pb2.ListCamerasRequest(), metadata=call_metadata(worker.tokens["automation"]), timeout=10
        )
    assert from_rpc_error(info.value, "camera-worker").code is ErrorCode.PERMISSION_DENIED


def test_health_degraded_while_redis_is_down_and_recovers(tmp_path: Path) -> None:
    w = _start(tmp_path)
    try:
        assert httpx.get(w.health_url, timeout=5).status_code == 200
        port = int(w.redis_url.rsplit(":", 1)[1].split("/")[0])
        w.redis_proc.stop()

        seen: dict[str, httpx.Response] = {}

        def degraded() -> bool:
            seen["r"] = httpx.get(w.health_url, timeout=5)
            return seen["r"].status_code == 503

        wait_until(degraded, 15, "health to report degraded after redis stopped", interval=0.2)
        body = seen["r"].json()
        assert body["status"] == "degraded"
        assert body["redis"]["ok"] is False and "redis unreachable" in body["redis"]["error"]
        assert body["worker_state"] == "no_driver"

        # gRPC keeps answering honestly while Redis is away
        ch, stub = w.stub()
        with ch:
            resp = stub.ListCameras(
                camera_pb2.ListCamerasRequest(), metadata=call_metadata(w.tokens["admin"]), timeout=10
            )
        assert resp.worker_state == "no_driver"

        # Redis comes back on the same port: the worker reconnects by itself
        w.redis_proc = start_process(
            "redis-again",
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(tmp_path / "redis"),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            tmp_path / "logs",
            ready=lambda: _ping(port),
            timeout=15,
        )
        wait_until(
            lambda: httpx.get(w.health_url, timeout=5).status_code == 200,
            15,
            "health to recover after redis restarted",
            interval=0.2,
        )
    finally:
        _stop(w)


def _ping(port: int) -> bool:
    try:
        return bool(redis.Redis(port=port, socket_timeout=0.5, socket_connect_timeout=0.5).ping())
    except redis.RedisError:
        return False
