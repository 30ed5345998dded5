"""The camera link against the Java camera client's core (camera-mod/core), not a script: the
headless client jar (``dev.mcb.camera.core.headless.Main``: the core's link client, readiness
rule, pose validation and PNG encoding over a deterministic software frame source) runs as a
real process against a real camera worker (``MCB_CAMERA_DRIVER=fabric``) and a real embedded
world host, like the world-protocol conformance suite runs against the Java test host.

* the client starts before the worker: it reconnects with backoff and is welcomed;
* a capture comes back as the client's PNG, with the sections it held at the asked revisions;
  the same pose gives the same picture, another pose another one;
* a pose outside the client's allowed areas -> out_of_bounds, no picture;
* a client that never holds the sections at the asked revisions -> capture_not_ready.

Skips with the reason when no JDK >= 21 or no built jar (``make java-test`` builds it).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e.test_camera_drivers import POSE, REGION, Env, capture, error_of, poll_until_done
from harness import Proc, free_port, start_process, wait_until
from mcb.camera.v1 import camera_pb2
from mcb_common.errors import ErrorCode

ROOT = Path(__file__).resolve().parents[2]
JAR = ROOT / "camera-mod" / "core" / "target" / "mcb-camera-headless.jar"


def _java() -> Path:
    from contract.hosts import find_jdk

    jdk = find_jdk()
    if jdk is None:
        pytest.skip("the Java camera client was not run: needs a JDK >= 21 (scripts/bootstrap.sh says how)")
    if not JAR.exists():
        pytest.skip(
            f"the Java camera client was not run: {JAR.relative_to(ROOT)} is not built "
            "(make java-test, or paper-plugin/build.sh -pl ../camera-mod/core -am package)"
        )
    return jdk / "bin" / "java"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    _java()
    e = Env(tmp_path_factory.mktemp("camjava"))
    yield e
    e.close()


def _client(env: Env, java: Path, lport: int, name: str, *extra: str, wait: bool = True) -> Proc:
    out = env.tmp / "logs" / f"{name}.log"
    argv = [
        str(java),
        "-Xmx128m",
        "-XX:+UseSerialGC",
        "-jar",
        str(JAR),
        "--url",
        f"ws://127.0.0.1:{lport}/",
        "--key-file",
        str(env.secrets / "camera-link.token"),
        "--world-url",
        env.world_url,
        "--world-token-file",
        str(env.secrets / "service.token"),
        *extra,
    ]
    p = start_process(
        name,
        argv,
        env.tmp / "logs",
        ready=(lambda: "CONNECTED" in out.read_text(errors="replace") if out.exists() else False)
        if wait
        else (lambda: out.exists()),
        timeout=30,
    )
    env.procs.append(p)
    return p


AREA = "-40,60,-40,40,100,40"


def test_java_client_reconnects_and_captures(env: Env) -> None:
    java = _java()
    lport = free_port()
    # the client first: nothing listens yet, it retries with backoff
    (env.secrets / "camera-link.token").write_text("java-client-link-key\n")
    client = _client(env, java, lport, "java-cam", "--area", AREA, wait=False)
    _, addr = env.worker(
        "cam-java",
        MCB_CAMERA_DRIVER="fabric",
        MCB_CAMERA_LINK_PORT=str(lport),
        MCB_CAMERA_LINK_KEY="java-client-link-key",
        MCB_CAMERA_READINESS_TIMEOUT_S="3",
    )
    log = env.tmp / "logs" / "java-cam.log"
    wait_until(lambda: "CONNECTED" in log.read_text(errors="replace"), 30, "the Java client to connect")
    assert log.read_text().count("CONNECTING") >= 2  # it did retry
    tok = env.tokens["agent"]
    first = poll_until_done(addr, tok, capture(addr, tok, pose=POSE, region=REGION).capture_id)
    meta = first.metadata
    assert meta.driver == "fabric" and meta.HasField("server_revision_verified") and not meta.server_revision_verified
    assert meta.client.client == "mcb-camera-headless"
    report = meta.client_report
    assert report["stableFrames"] == 3 and report["sectionsChecked"] >= 4 and report["chunksPending"] == 0
    assert meta.width == 320 and first.image.startswith(b"\x89PNG")
    from mcb_camera import png

    img = png.decode(first.image)
    assert img.shape == (180, 320, 3)
    assert img[0, 160, 2] == 255 and img[-1, 160, 2] < 120  # sky on top, ground below (pitch 25)
    again = poll_until_done(addr, tok, capture(addr, tok, pose=POSE, region=REGION).capture_id)
    assert again.capture_id != first.capture_id and again.image == first.image
    turned = camera_pb2.Pose(x=POSE.x, y=POSE.y, z=POSE.z, yaw=POSE.yaw + 90, pitch=POSE.pitch, width=320, height=180)
    other = poll_until_done(addr, tok, capture(addr, tok, pose=turned, region=REGION).capture_id)
    assert other.image != first.image
    # outside the client's allowed areas: refused by the client, no picture
    far = camera_pb2.Pose(x=300, y=72, z=0, width=320, height=180)
    cid = capture(addr, tok, pose=far).capture_id
    wait_until(lambda: _failed(addr, tok, cid), 20, "the out-of-area capture to fail")
    err = error_of(lambda: capture(addr, tok, capture_id=cid))
    assert err.code is ErrorCode.OUT_OF_BOUNDS and "allowed area" in err.message, err
    client.stop()


def test_java_client_behind_the_asked_revisions_is_capture_not_ready(env: Env) -> None:
    java = _java()
    lport = free_port()
    _, addr = env.worker(
        "cam-java-lag",
        MCB_CAMERA_DRIVER="fabric",
        MCB_CAMERA_LINK_PORT=str(lport),
        MCB_CAMERA_LINK_KEY="java-client-link-key",
        MCB_CAMERA_READINESS_TIMEOUT_S="1",
    )
    (env.secrets / "camera-link.token").write_text("java-client-link-key\n")
    _client(env, java, lport, "java-cam-lag", "--area", AREA, "--lag-revisions", "1")
    tok = env.tokens["agent"]
    cid = capture(addr, tok, pose=POSE, region=REGION).capture_id
    wait_until(lambda: _failed(addr, tok, cid), 20, "the lagging capture to fail")
    err = error_of(lambda: capture(addr, tok, capture_id=cid))
    assert err.code is ErrorCode.CAPTURE_NOT_READY, err
    assert err.details["client"]["sectionsBehind"] >= 1
    assert not list((env.runtime / "cam-java-lag").glob("camera/captures/*.png"))


def _failed(addr: str, tok: str, cid: str) -> bool:
    import grpc

    try:
        capture(addr, tok, capture_id=cid)
        return False
    except grpc.RpcError:
        return True
