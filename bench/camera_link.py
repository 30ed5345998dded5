"""Benchmark: a capture's round trip through the camera link and the Java camera client core
(camera-mod/core's headless platform), against real processes: redis-server, the embedded world
host, the camera worker (MCB_CAMERA_DRIVER=fabric) and the headless client jar.

    paper-plugin/build.sh -pl ../camera-mod/core -am package -DskipTests   # the jar
    uv run python bench/camera_link.py [--runs 10]      # writes bench/out/camera_link.json

Round trip = the client's view: Capture RPC until the completed answer (inline wait), i.e. the
worker reads the scene's section revisions, sends `capture` with them, the Java core validates
the pose, waits by the readiness rule (sections at the asked revisions, 3 stable frames at the
headless platform's 16 ms frame time), draws the software frame, encodes the PNG, sends it back,
and the worker checks it and re-reads the revisions (stale check).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import grpc  # noqa: E402
from contract.hosts import find_jdk  # noqa: E402
from harness import free_port, start_process, start_redis  # noqa: E402
from mcb.camera.v1 import camera_pb2, camera_pb2_grpc  # noqa: E402
from mcb.common.v1 import common_pb2  # noqa: E402
from mcb_rpc import pbjson  # noqa: E402
from mcb_rpc.auth import call_metadata  # noqa: E402
from mcb_rpc.tokens import ensure_token  # noqa: E402

PRINCIPALS = ("agent", "admin", "service", "automation")
JAR = ROOT / "camera-mod" / "core" / "target" / "mcb-camera-headless.jar"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    jdk = find_jdk()
    if jdk is None or not JAR.exists():
        sys.exit(f"needs a JDK >= 21 and {JAR} (see the docstring)")
    tmp = Path(tempfile.mkdtemp(prefix="mcb-camera-link-bench-"))
    procs = []
    redis_proc, redis_url = start_redis(tmp)
    runtime, secrets = tmp / "runtime", tmp / "runtime" / "secrets"
    tokens = {p: ensure_token(secrets, p) for p in PRINCIPALS}
    (secrets / "camera-link.token").write_text("bench-link-key\n")
    wport, gport, hport, lport = free_port(), free_port(), free_port(), free_port()
    world_url = f"http://127.0.0.1:{wport}"
    base = {
        "MCB_RUNTIME_DIR": str(runtime),
        "MCB_SECRETS_DIR": str(secrets),
        "MCB_BIND_HOST": "127.0.0.1",
        "MCB_REDIS_URL": redis_url,
        "MCB_WORLD_HOST_URL": world_url,
        "PYTHONUNBUFFERED": "1",
        **{f"MCB_{p.upper()}_TOKEN": "" for p in PRINCIPALS},
    }
    try:
        procs.append(
            start_process(
                "world-host",
                [sys.executable, "-m", "mcb_world_host"],
                tmp / "logs",
                env={
                    **base,
                    "MCB_WORLD_DIR": str(runtime / "world"),
                    "MCB_WORLD_CREATE": "flat",
                    "MCB_WORLD_PREGEN": "-32,-32,31,31",
                    "MCB_WORLD_HOST_PORT": str(wport),
                },
                health_url=f"{world_url}/health",
                timeout=120,
            )
        )
        procs.append(
            start_process(
                "camera-worker",
                [sys.executable, "-m", "mcb_camera"],
                tmp / "logs",
                env={
                    **base,
                    "MCB_CAMERA_GRPC_PORT": str(gport),
                    "MCB_CAMERA_HEALTH_PORT": str(hport),
                    "MCB_CAMERA_INLINE_WAIT_S": "30",
                    "MCB_CAMERA_DRIVER": "fabric",
                    "MCB_CAMERA_LINK_PORT": str(lport),
                },
                health_url=f"http://127.0.0.1:{hport}/health",
                timeout=60,
            )
        )
        log = tmp / "logs" / "java-client.log"
        procs.append(
            start_process(
                "java-client",
                [
                    str(jdk / "bin" / "java"),
                    "-Xmx128m",
                    "-XX:+UseSerialGC",
                    "-jar",
                    str(JAR),
                    "--url",
                    f"ws://127.0.0.1:{lport}/",
                    "--key-file",
                    str(secrets / "camera-link.token"),
                    "--world-url",
                    world_url,
                    "--world-token-file",
                    str(secrets / "service.token"),
                    "--area",
                    "-64,0,-64,63,320,63",
                ],
                tmp / "logs",
                ready=lambda: log.exists() and "CONNECTED" in log.read_text(errors="replace"),
                timeout=60,
            )
        )
        md = call_metadata(tokens["agent"], "bench", "bench")
        ch = grpc.insecure_channel(f"127.0.0.1:{gport}", options=[("grpc.max_receive_message_length", 64 << 20)])
        stub = camera_pb2_grpc.CameraStub(ch)
        region = common_pb2.Box(min=common_pb2.Vec3(x=-32, y=56, z=-32), max=common_pb2.Vec3(x=31, y=119, z=31))

        def shoot(w: int, h: int) -> tuple[float, dict]:
            req = camera_pb2.CaptureRequest(
                pose=camera_pb2.Pose(x=-40, y=82, z=-40, yaw=-45, pitch=25, width=w, height=h), region=region
            )
            t = time.perf_counter()
            r = stub.Capture(req, metadata=md, timeout=120)
            while r.status != "completed":
                time.sleep(0.005)
                r = stub.Capture(camera_pb2.CaptureRequest(capture_id=r.capture_id), metadata=md, timeout=60)
            return time.perf_counter() - t, pbjson.plain(r.metadata)

        results = {}
        for w, h in ((320, 180), (1280, 720)):
            shoot(w, h)  # warm-up (JIT, first region read)
            runs = [shoot(w, h) for _ in range(args.runs)]
            times = [t for t, _ in runs]
            last = runs[-1][1]
            results[f"{w}x{h}"] = {
                "round_trip_s": {
                    "median": round(statistics.median(times), 3),
                    "min": round(min(times), 3),
                    "max": round(max(times), 3),
                },
                "client_report_last": last["client_report"],
                "sections": last["client_report"].get("sectionsChecked"),
            }
            print(f"{w}x{h}", json.dumps(results[f"{w}x{h}"]), flush=True)
        out = {
            "runs": args.runs,
            "region": "64^3",
            "results": results,
            "note": "2 shared CPU cores; headless platform frame time 16 ms, 3 stable frames",
        }
        dest = ROOT / "bench" / "out" / "camera_link.json"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {dest}")
    finally:
        for p in reversed(procs):
            p.stop()
        redis_proc.stop()


if __name__ == "__main__":
    main()
