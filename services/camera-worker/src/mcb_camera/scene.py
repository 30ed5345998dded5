"""Reading the blocks a capture needs from the world host, with proof of which revision was read.

The world protocol's ``region_read`` answers a box's blocks *and* the revision of every section
(16³) in it, read under the host's world lock: one call is one consistent snapshot. The scene
keeps the last snapshot per box; the next capture of the same box first asks for the current
revisions (cheap: one 1-block-thick ``region_read`` per section layer), re-reads only the
bounding box of the sections that changed, and checks the revisions again: the scene is
*ready* when every needed section is held at the revision the host reports now. A box with
missing (never generated) chunks is not ready; the caller retries until its readiness timeout
and then answers ``capture_not_ready``.

After drawing, ``changed_since`` asks for the revisions once more: any difference means the
world changed during the capture, and the picture is marked stale.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.worldclient import WorldClient

Box = tuple[int, int, int, int, int, int]  # x0, y0, z0, x1, y1, z1 inclusive
Key = tuple[int, int, int]  # (cx, sy, cz)


def _params(x0: int, y0: int, z0: int, x1: int, y1: int, z1: int) -> dict:
    return {"min": {"x": x0, "y": y0, "z": z0}, "max": {"x": x1, "y": y1, "z": z1}}


@dataclass
class Snapshot:
    box: Box
    host_instance: str
    palette: list[str]
    indices: np.ndarray  # (sy, sz, sx) uint16
    revisions: dict[Key, int]
    index_of: dict[str, int] = field(default_factory=dict)
    mesh: Any = None  # the faces built from exactly these blocks (rebuilt after any patch)

    def digest(self) -> str:
        h = hashlib.sha256()
        for k in sorted(self.revisions):
            h.update(f"{k[0]},{k[1]},{k[2]}:{self.revisions[k]};".encode())
        return h.hexdigest()


class NotReady(Exception):
    def __init__(self, reason: str, details: dict):
        super().__init__(reason)
        self.reason = reason
        self.details = details


class SceneReader:
    def __init__(self, world: WorldClient, cache_boxes: int = 4):
        self.world = world
        self.cache: dict[Box, Snapshot] = {}
        self.cache_boxes = cache_boxes
        self.stats = {"full_reads": 0, "patch_reads": 0, "revision_checks": 0}

    async def _read(self, box: Box) -> tuple[list[str], np.ndarray, dict[Key, int]]:
        x0, y0, z0, x1, y1, z1 = box
        try:
            res = await self.world.call("region_read", _params(*box), world_pb2.RegionReadResult)
        except McbError as err:
            if err.code == ErrorCode.NOT_FOUND and err.details and "missingChunks" in err.details:
                raise NotReady(
                    "chunks of the scene are not generated/loaded",
                    {
                        "missingChunks": err.details.get("missingChunks"),
                        "missingCount": err.details.get("missingCount"),
                    },
                ) from err
            raise
        arr = np.frombuffer(res.indices, dtype="<u2").reshape(y1 - y0 + 1, z1 - z0 + 1, x1 - x0 + 1)
        return list(res.palette), arr, {(r.cx, r.sy, r.cz): int(r.revision) for r in res.revisions}

    async def revisions(self, box: Box) -> dict[Key, int]:
        """Current revision of every section of ``box``: one thin read per section layer."""
        x0, y0, z0, x1, y1, z1 = box
        self.stats["revision_checks"] += 1
        layers = [max(y0, sy * 16) for sy in range(y0 >> 4, (y1 >> 4) + 1)]
        out: dict[Key, int] = {}
        results = await asyncio.gather(
            *(
                self.world.call("region_read", _params(x0, y, z0, x1, y, z1), world_pb2.RegionReadResult)
                for y in layers
            ),
            return_exceptions=True,
        )
        for r in results:
            if isinstance(r, McbError) and r.code == ErrorCode.NOT_FOUND and r.details and "missingChunks" in r.details:
                raise NotReady(
                    "chunks of the scene are not generated/loaded",
                    {"missingChunks": r.details.get("missingChunks"), "missingCount": r.details.get("missingCount")},
                )
            if isinstance(r, BaseException):
                raise r
            for s in r.revisions:
                out[(s.cx, s.sy, s.cz)] = int(s.revision)
        return out

    def _merge(self, snap: Snapshot, palette: list[str], arr: np.ndarray, box: Box) -> None:
        if not snap.index_of:
            snap.index_of = {s: i for i, s in enumerate(snap.palette)}
        lut = np.empty(len(palette), np.uint16)
        for i, s in enumerate(palette):
            g = snap.index_of.get(s)
            if g is None:
                g = len(snap.palette)
                snap.palette.append(s)
                snap.index_of[s] = g
            lut[i] = g
        bx0, by0, bz0 = snap.box[0], snap.box[1], snap.box[2]
        x0, y0, z0, x1, y1, z1 = box
        snap.indices[y0 - by0 : y1 - by0 + 1, z0 - bz0 : z1 - bz0 + 1, x0 - bx0 : x1 - bx0 + 1] = lut[arr]
        snap.mesh = None

    async def snapshot(self, box: Box, host_instance: str) -> tuple[Snapshot, bool]:
        """A consistent snapshot of ``box`` -> (snapshot, reused_from_cache).

        Raises ``NotReady`` when it cannot be proven consistent in this attempt.
        """
        snap = self.cache.get(box)
        if snap is None or snap.host_instance != host_instance:
            palette, arr, revs = await self._read(box)  # one call = one consistent read
            self.stats["full_reads"] += 1
            snap = Snapshot(box, host_instance, palette, arr.copy(), revs)
            self._remember(snap)
            return snap, False
        now = await self.revisions(box)
        changed = [k for k, v in now.items() if snap.revisions.get(k) != v]
        if not changed:
            return snap, True
        # re-read the bounding box of the changed sections, clipped to the scene box
        cx0 = min(k[0] for k in changed) * 16
        cx1 = max(k[0] for k in changed) * 16 + 15
        sy0 = min(k[1] for k in changed) * 16
        sy1 = max(k[1] for k in changed) * 16 + 15
        cz0 = min(k[2] for k in changed) * 16
        cz1 = max(k[2] for k in changed) * 16 + 15
        x0, y0, z0, x1, y1, z1 = box
        sub = (max(x0, cx0), max(y0, sy0), max(z0, cz0), min(x1, cx1), min(y1, sy1), min(z1, cz1))
        palette, arr, revs = await self._read(sub)
        self.stats["patch_reads"] += 1
        self._merge(snap, palette, arr, sub)
        snap.revisions.update(revs)
        # ready only if what we hold now is what the host reports now
        after = await self.revisions(box)
        if after != snap.revisions:
            snap.revisions = {k: -1 for k in after}  # force a re-read of everything next time
            self.cache.pop(box, None)
            raise NotReady(
                "the scene changed while it was being read",
                {"changedSections": len([k for k in after if after[k] != revs.get(k, now.get(k))])},
            )
        return snap, False

    async def changed_since(self, snap: Snapshot) -> list[Key]:
        now = await self.revisions(snap.box)
        return sorted(k for k, v in now.items() if snap.revisions.get(k) != v)

    def _remember(self, snap: Snapshot) -> None:
        self.cache[snap.box] = snap
        while len(self.cache) > self.cache_boxes:
            self.cache.pop(next(iter(self.cache)))
