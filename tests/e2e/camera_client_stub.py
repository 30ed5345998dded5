"""A SCRIPTED STAND-IN for the Fabric camera mod (not the mod): it speaks the camera link
protocol of docs/camera-link.md so the worker's side can be tested with a real process.

    python camera_client_stub.py ws://127.0.0.1:PORT KEY MODE
MODE: ok      answer every capture with a PNG (a gradient that encodes the pose's yaw)
      drop    close the connection as soon as a capture request arrives
      notready answer every capture with failed/capture_not_ready
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys

import numpy as np
from mcb_camera import png
from websockets.asyncio.client import connect


async def main(url: str, key: str, mode: str) -> None:
    async with connect(url, additional_headers={"Authorization": f"Bearer {key}"}) as ws:
        await ws.send(
            json.dumps(
                {
                    "type": "hello",
                    "protocol": "mcb.camera-link.v1",
                    "client": "scripted-stub",
                    "minecraftVersion": "1.21.11",
                }
            )
        )
        welcome = json.loads(await ws.recv())
        assert welcome["type"] == "welcome", welcome
        print("CONNECTED", flush=True)
        async for raw in ws:
            msg = json.loads(raw)
            if msg.get("type") != "capture":
                continue
            cid, pose = msg["id"], msg["pose"]
            if mode == "drop":
                print("DROPPING", flush=True)
                return
            if mode == "notready":
                await ws.send(
                    json.dumps(
                        {
                            "type": "failed",
                            "id": cid,
                            "code": "capture_not_ready",
                            "message": "chunks still loading after the timeout",
                            "details": {"chunksPending": 3},
                        }
                    )
                )
                continue
            await ws.send(json.dumps({"type": "progress", "id": cid, "stage": "loading_chunks"}))
            w, h = int(pose["width"]), int(pose["height"])
            img = np.zeros((h, w, 3), np.uint8)
            img[:, :, 0] = int(pose["yaw"]) % 256
            img[:, :, 1] = np.linspace(0, 255, w, dtype=np.uint8)[None, :]
            data = png.encode(img)
            await ws.send(
                json.dumps(
                    {
                        "type": "captured",
                        "id": cid,
                        "mimeType": "image/png",
                        "bytes": len(data),
                        "sha256": hashlib.sha256(data).hexdigest(),
                        "metadata": {
                            "chunksLoaded": 49,
                            "chunksPending": 0,
                            "stableFrames": 3,
                            "hudHidden": True,
                            "serverRevisionVerified": False,
                        },
                    }
                )
            )
            await ws.send(data)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
