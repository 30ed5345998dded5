"""Benchmark: camera capture latency with the built-in renderer, cold and warm, at 1280x720,
for a 64³ and a 128³ region, against real processes (redis-server, the embedded world host,
the camera worker; llvmpipe on EGL when there is no GPU).

    uv run python bench/camera_capture.py            # writes bench/out/camera_capture.json
    uv run python bench/camera_capture.py --pictures docs/img   # also saves three pictures

cold  = the first capture of a region after the worker started: a full region_read, meshing,
        drawing, PNG, plus the revision checks; (the GL context is created at worker start)
warm  = the same region again, unchanged: revision checks prove nothing changed, the mesh is
        reused, the picture is drawn anew (a new capture id and a new image every time)
Latency is measured by the client: Capture RPC until the completed answer (inline wait).
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
import httpx  # noqa: E402
from harness import free_port, start_process, start_redis  # noqa: E402
from mcb.camera.v1 import camera_pb2, camera_pb2_grpc  # noqa: E402
from mcb.common.v1 import common_pb2  # noqa: E402
from mcb_rpc import pbjson  # noqa: E402
from mcb_rpc.auth import call_metadata  # noqa: E402
from mcb_rpc.tokens import ensure_token  # noqa: E402

PRINCIPALS = ("agent", "admin", "service", "automation")


def scene_blocks() -> list[dict]:
    """A small village on the flat world (grass at y=63) inside x,z in [-32, 31]."""
    b: list[dict] = []

    def put(x: int, y: int, z: int, s: str) -> None:
        b.append({"x": x, "y": y, "z": z, "state": s})

    # a stone-brick keep with glass windows, an oak door and a red roof
    for y in range(64, 76):
        for x in range(-10, 3):
            for z in range(-10, 3):
                edge = x in (-10, 2) or z in (-10, 2)
                if not edge:
                    continue
                window = y in (67, 68, 71, 72) and (x % 4 == 0 or z % 4 == 0) and not (x in (-10, 2) and z in (-10, 2))
                put(x, y, z, "minecraft:glass" if window else "minecraft:stone_bricks")
    put(-4, 64, 2, "minecraft:oak_door[facing=south,half=lower,hinge=left,open=false,powered=false]")
    put(-4, 65, 2, "minecraft:oak_door[facing=south,half=upper,hinge=left,open=false,powered=false]")
    for i in range(7):
        for x in range(-10 + i, 3 - i):
            for z in range(-10 + i, 3 - i):
                if x in (-10 + i, 2 - i) or z in (-10 + i, 2 - i):
                    put(x, 76 + i, z, "minecraft:red_terracotta")
    # a round tower of cobblestone with oak planks on top
    for y in range(64, 84):
        for x in range(10, 21):
            for z in range(-20, -9):
                d = (x - 15) ** 2 + (z + 15) ** 2
                if 16 <= d <= 25:
                    put(x, y, z, "minecraft:cobblestone" if y < 83 else "minecraft:oak_planks")
    # a pond, trees, flowers, wool stripes
    for x in range(-25, -14):
        for z in range(10, 22):
            put(x, 63, z, "minecraft:water[level=0]")
    for tx, tz in ((8, 12), (14, 20), (20, 8), (-20, -20)):
        for y in range(64, 69):
            put(tx, y, tz, "minecraft:oak_log[axis=y]")
        for x in range(tx - 2, tx + 3):
            for z in range(tz - 2, tz + 3):
                for y in range(68, 71):
                    if (x, z) != (tx, tz) or y > 68:
                        put(x, y, z, "minecraft:oak_leaves[distance=1,persistent=true,waterlogged=false]")
    for i, c in enumerate(("white", "orange", "yellow", "lime", "light_blue", "blue", "purple", "magenta")):
        for x in range(-4, 12):
            put(x, 63, 24 + i, f"minecraft:{c}_wool")
    for x in range(-30, 30, 3):
        put(x, 64, -28, "minecraft:poppy")
    # shaped blocks (issue 17): a fence with gates, a stair-stepped wall, a glass-pane wall,
    # a cobblestone wall, torches, carpets, slabs and a meadow of plants
    for x in range(-30, 30):
        gate = x % 10 == 0
        put(
            x,
            64,
            -31,
            "minecraft:oak_fence_gate[facing=north,open=false,in_wall=false,powered=false]"
            if gate
            else "minecraft:oak_fence[east=true,north=false,south=false,west=true,waterlogged=false]",
        )
        put(
            x,
            64,
            30,
            "minecraft:cobblestone_wall[up=%s,east=low,north=none,south=none,west=low,waterlogged=false]"
            % ("true" if x % 8 == 0 else "false"),
        )
    for i in range(8):
        for x in range(22, 30):
            put(
                x,
                64 + i,
                10 + i,
                "minecraft:stone_brick_stairs[facing=south,half=bottom,shape=straight,waterlogged=false]",
            )
    for y in range(64, 68):
        for z in range(-8, 8):
            put(-30, y, z, "minecraft:glass_pane[east=false,north=true,south=true,west=false,waterlogged=false]")
    for x in range(-9, 2, 2):
        put(x, 66, 3, "minecraft:wall_torch[facing=south]")
        put(x, 64, 4, "minecraft:red_carpet")
        put(x + 1, 64, 4, "minecraft:oak_slab[type=bottom,waterlogged=false]")
    flowers = (
        "minecraft:short_grass",
        "minecraft:dandelion",
        "minecraft:poppy",
        "minecraft:fern",
        "minecraft:cornflower",
    )
    for x in range(-12, 8):
        for z in range(-30, -20):
            if (x * 7 + z * 3) % 4 == 0:
                put(x, 64, z, flowers[(x + z) % len(flowers)])
    return b


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pictures", type=Path, default=None)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mcb-camera-bench-"))
    procs = []
    redis_proc, redis_url = start_redis(tmp)
    runtime, secrets = tmp / "runtime", tmp / "runtime" / "secrets"
    tokens = {p: ensure_token(secrets, p) for p in PRINCIPALS}
    wport, gport, hport = free_port(), free_port(), free_port()
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
                    "MCB_WORLD_PREGEN": "-64,-64,63,63",
                    "MCB_WORLD_HOST_PORT": str(wport),
                    "MCB_ALLOW_LOCAL_AUTOMATION": "1",
                },
                health_url=f"{world_url}/health",
                timeout=120,
            )
        )
        blocks = scene_blocks()
        for i in range(0, len(blocks), 30000):
            r = httpx.post(
                f"{world_url}/v1/rpc",
                headers={"Authorization": f"Bearer {tokens['automation']}"},
                json={
                    "method": "automation_set_blocks",
                    "params": {"actor": "external", "blocks": blocks[i : i + 30000]},
                },
                timeout=120,
            )
            assert r.json()["ok"], r.text
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
                },
                health_url=f"http://127.0.0.1:{hport}/health",
                timeout=60,
            )
        )
        md = call_metadata(tokens["agent"], "bench", "bench")
        ch = grpc.insecure_channel(f"127.0.0.1:{gport}", options=[("grpc.max_receive_message_length", 64 << 20)])
        stub = camera_pb2_grpc.CameraStub(ch)

        def shoot(req: camera_pb2.CaptureRequest) -> tuple[float, dict, bytes]:
            t = time.perf_counter()
            r = stub.Capture(req, metadata=md, timeout=120)
            while r.status != "completed":
                time.sleep(0.01)
                r = stub.Capture(camera_pb2.CaptureRequest(capture_id=r.capture_id), metadata=md, timeout=60)
            return time.perf_counter() - t, pbjson.plain(r.metadata), r.image

        def box(x0, y0, z0, x1, y1, z1):
            return common_pb2.Box(min=common_pb2.Vec3(x=x0, y=y0, z=z0), max=common_pb2.Vec3(x=x1, y=y1, z=z1))

        cases = {
            "64^3": (box(-32, 56, -32, 31, 119, 31), camera_pb2.Pose(x=-40, y=82, z=-40, yaw=-45, pitch=25)),
            "128^3": (box(-64, 56, -64, 63, 183, 63), camera_pb2.Pose(x=-70, y=100, z=-70, yaw=-45, pitch=30)),
        }
        results = {}
        for name, (region, pose) in cases.items():
            req = camera_pb2.CaptureRequest(pose=pose, region=region)
            cold, cmeta, _ = shoot(req)
            warm, wmetas = [], []
            for _ in range(args.runs):
                t, m, img = shoot(req)
                warm.append(t)
                wmetas.append(m)
            results[name] = {
                "positions": (region.max.x - region.min.x + 1)
                * (region.max.y - region.min.y + 1)
                * (region.max.z - region.min.z + 1),
                "faces": cmeta["faces"],
                "sections": cmeta["sections"],
                "cold_s": round(cold, 3),
                "cold_worker_ms": cmeta["timings_ms"],
                "warm_s": {
                    "median": round(statistics.median(warm), 3),
                    "min": round(min(warm), 3),
                    "max": round(max(warm), 3),
                },
                "warm_worker_ms_last": wmetas[-1]["timingsMs"],
                "warm_cache": wmetas[-1]["cache"],
                "png_bytes": len(img),
            }
            print(name, json.dumps(results[name]), flush=True)
        if args.pictures:
            args.pictures.mkdir(parents=True, exist_ok=True)
            _, m1, p1 = shoot(
                camera_pb2.CaptureRequest(
                    pose=camera_pb2.Pose(x=-30, y=74, z=26, yaw=-135, pitch=18), region=cases["64^3"][0]
                )
            )
            (args.pictures / "camera-builtin-perspective.png").write_bytes(p1)
            _, m2, p2 = shoot(
                camera_pb2.CaptureRequest(
                    region=cases["64^3"][0], view="top", pose=camera_pb2.Pose(width=1280, height=720)
                )
            )
            (args.pictures / "camera-builtin-top.png").write_bytes(p2)
            _, _, p3 = shoot(camera_pb2.CaptureRequest(region=box(-10, 64, -10, 2, 82, 2), view="diagonal"))
            (args.pictures / "camera-builtin-auto-diagonal.png").write_bytes(p3)
        health = httpx.get(f"http://127.0.0.1:{hport}/health", timeout=5).json()
        out = {
            "resolution": "1280x720",
            "runs": args.runs,
            "results": results,
            "renderer": health.get("renderer"),
            "note": "2 shared CPU cores, Mesa llvmpipe (no GPU)",
        }
        dest = ROOT / "bench" / "out" / "camera_capture.json"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {dest}")
    finally:
        for p in reversed(procs):
            p.stop()
        redis_proc.stop()


if __name__ == "__main__":
    main()
