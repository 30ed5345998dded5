"""A Minecraft Java world save owned by this process: chunks, reads, atomic batch writes.

``World`` is the only writer of its folder. Layout it uses::

    <world>/level.dat            vanilla (level.py)
    <world>/region/r.X.Z.mca     vanilla Anvil regions (region.py, chunk.py)
    <world>/entities/r.X.Z.mca   vanilla entity regions (1.17+): read only, never written
    <world>/mcb/world.json       ours: {"worldUuid", "epoch", ...} (not in level.dat)
    <world>/mcb/host.sqlite      ours: the write-ahead batch log (hoststate.py)

Reads never generate chunks: a missing chunk is ``not_found`` with ``missingChunks``.
Writes go only into existing ``minecraft:full`` chunks (a proto-chunk would be regenerated
over by the game). A batch (``apply`` + ``log_batch`` + ``wait_durable``) changes its blocks in
the decoded chunks, which stay in memory, and is durable once its record (every block's before and
after) is committed to the write-ahead log; batches arriving together share that commit. A
checkpoint (``checkpoint``: every few seconds, after so many MB of log, at pause, at stop) encodes
each changed chunk once, writes it copy-on-write into its region file (one fsync pair per region)
and then cuts the log. Opening the world replays the log's batches that a checkpoint may not have
written (``redo``) before anything is served, so a crash loses no answered batch.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from mcb_common import blockentity, nbt
from mcb_common.blockinfo import BlockInfo
from mcb_common.diskfull import disk_full_error, is_disk_full
from mcb_common.errors import ErrorCode, McbError
from mcb_common.files import atomic_write, make_dirs
from mcb_common.registry import AIR, AIR_NAMES, Registry

from . import level as levelmod
from .chunk import Chunk, flat_chunk
from .hoststate import HostState, Ticket, Undo
from .region import REGION_NAME, RegionFile, region_coords, region_name

log = logging.getLogger("mcb.world")

MAX_CACHED_CHUNKS = 4096
CHECKPOINT_EVERY_S = 5.0  # a checkpoint this often while there is something to write
CHECKPOINT_LOG_MB = 64.0  # ... and as soon as the log holds this much


@dataclass
class Change:
    x: int
    y: int
    z: int
    before: str
    after: str


def _undo(writes: list[Change] | Undo) -> Undo:
    """Writes as (x, y, z, before, after) tuples (a batch's own writes are tuples already: no
    object per block on its path)."""
    out: Undo = []
    for w in writes:
        if not isinstance(w, Change):
            return writes  # type: ignore[return-value]  # tuples (one kind per list)
        out.append((w.x, w.y, w.z, w.before, w.after))
    return out


@dataclass(frozen=True)
class EntityRecord:
    id: str
    x: float
    y: float
    z: float
    uuid: str


def _entity_uuid(e: dict) -> str:
    """``UUID`` is 4 ints (most significant first); older data has
    ``UUIDMost``/``UUIDLeast`` longs. Empty when neither is present."""
    u = e.get("UUID")
    if u is not None and len(u) == 4:
        n = 0
        for part in u:
            n = (n << 32) | (int(part) & 0xFFFFFFFF)
        return str(uuid.UUID(int=n))
    if "UUIDMost" in e and "UUIDLeast" in e:
        return str(uuid.UUID(int=((int(e["UUIDMost"]) & (2**64 - 1)) << 64) | (int(e["UUIDLeast"]) & (2**64 - 1))))
    return ""


@dataclass
class WorldMeta:
    world_uuid: str
    epoch: int
    created_at_millis: int
    extra: dict = field(default_factory=dict)


def _atomic_write_json(path: Path, data: dict) -> None:
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


class World:
    def __init__(self, path: Path, registry: Registry, min_y: int = levelmod.MIN_Y, max_y: int = levelmod.MAX_Y):
        self.path = Path(path)
        self.registry = registry
        self.blockinfo = BlockInfo.load(registry.version)
        self.min_y, self.max_y = min_y, max_y
        self.min_section, self.max_section = min_y >> 4, max_y >> 4
        self.lock = threading.RLock()
        self._regions: dict[tuple[int, int], RegionFile | None] = {}
        self._chunks: OrderedDict[tuple[int, int], Chunk] = OrderedDict()
        self._missing: set[tuple[int, int]] = set()
        self.revisions: dict[tuple[int, int, int], int] = {}
        self._canonical: dict[str, str] = {}  # canonical_desired's answers (pure per registry)
        self.level = levelmod.read_level(self.path / "level.dat")
        info = levelmod.level_info(self.level)
        self.name = info["name"]
        self.data_version = info["dataVersion"]
        self.minecraft_version = info["minecraftVersion"]
        self.meta = self._load_meta()
        self.host_state = HostState(self.path / "mcb" / "host.sqlite")
        # Set when a failed batch could not even be rolled back (disk full): every later write is
        # refused with this message until a restart rolls the batch back (``_recover``).
        self.write_blocked = ""
        self._unsaved: set[tuple[int, int]] = set()  # chunks changed since the last checkpoint's snapshot
        self._saving: set[tuple[int, int]] = set()  # chunks the running checkpoint is writing
        self._checkpoint_lock = threading.Lock()
        self._checkpoint_now = threading.Event()
        self._closing = threading.Event()
        self._checkpointer: threading.Thread | None = None
        self._last_checkpoint = time.monotonic()
        self.checkpoints = 0
        self.crash_hook: Callable[[str], None] | None = None  # tests: crash points (kill the process)
        # called (under the lock) with the reverse changes of batches the log could not take
        self.on_undone: Callable[[list[tuple[int, int, int, str, str]], str], None] | None = None
        self.recovered = self._recover()
        self.replayed = self._replay()

    # -- creation ------------------------------------------------------------------------------
    @classmethod
    def create_flat(
        cls,
        path: Path,
        registry: Registry,
        name: str = "mcb flat world",
        pregen: tuple[int, int, int, int] | None = None,
    ) -> World:
        path = Path(path)
        if (path / "level.dat").exists():
            raise McbError(ErrorCode.INVALID_REQUEST, f"a world already exists at {path}")
        make_dirs(path / "region")
        levelmod.write_level(path / "level.dat", levelmod.new_flat_level(name))
        world = cls(path, registry)
        if pregen is not None:
            world.pregenerate_flat(*pregen)
        return world

    @classmethod
    def open_or_create(
        cls, path: Path, registry: Registry, create: str | None, pregen: tuple[int, int, int, int] | None
    ) -> World:
        if (Path(path) / "level.dat").exists():
            world = cls(path, registry)
            if pregen is not None and world.is_flat():
                world.pregenerate_flat(*pregen)
            return world
        if create == "flat":
            return cls.create_flat(path, registry, pregen=pregen)
        raise McbError(
            ErrorCode.NOT_FOUND,
            f"no world at {path} (no level.dat); set MCB_WORLD_CREATE=flat to create a new flat world there",
        )

    def is_flat(self) -> bool:
        try:
            gen = self.level["Data"]["WorldGenSettings"]["dimensions"]["minecraft:overworld"]["generator"]
            return str(gen["type"]) == "minecraft:flat"
        except (KeyError, TypeError):
            return False

    def pregenerate_flat(self, min_x: int, min_z: int, max_x: int, max_z: int) -> int:
        """Write full flat chunks covering the block area where no chunk exists yet."""
        made = 0
        with self.lock:
            for cx in range(min(min_x, max_x) >> 4, (max(min_x, max_x) >> 4) + 1):
                for cz in range(min(min_z, max_z) >> 4, (max(min_z, max_z) >> 4) + 1):
                    region = self._region(cx, cz, create=True)
                    assert region is not None
                    if region.has_chunk(cx, cz):
                        continue
                    root = flat_chunk(
                        cx,
                        cz,
                        self.data_version or levelmod.DATA_VERSION,
                        levelmod.FLAT_LAYERS,
                        self.min_y,
                        self.max_y,
                        levelmod.FLAT_BIOME,
                    )
                    region.write_chunk(cx, cz, nbt.write(root))
                    self._missing.discard((cx, cz))
                    made += 1
        if made:
            log.info("pre-generated %d flat chunks", made)
        return made

    # -- our metadata ----------------------------------------------------------------------------
    def _load_meta(self) -> WorldMeta:
        p = self.path / "mcb" / "world.json"
        try:
            d = json.loads(p.read_text())
            return WorldMeta(str(d["worldUuid"]), int(d["epoch"]), int(d.get("createdAtMillis", 0)), d)
        except FileNotFoundError:
            meta = WorldMeta(str(uuid.uuid4()), 1, int(time.time() * 1000))
            _atomic_write_json(
                p,
                {
                    "worldUuid": meta.world_uuid,
                    "epoch": meta.epoch,
                    "createdAtMillis": meta.created_at_millis,
                    "note": "minecraft-builder-mcp world identity; bump epoch when the world is replaced",
                },
            )
            return meta
        except (ValueError, KeyError) as exc:
            raise McbError(ErrorCode.INTERNAL, f"{p} is unreadable ({exc}); fix or remove it") from None

    # -- regions and chunks ------------------------------------------------------------------------
    def _region(self, cx: int, cz: int, create: bool = False) -> RegionFile | None:
        key = region_coords(cx, cz)
        r = self._regions.get(key)
        if r is not None:
            return r
        p = self.path / "region" / region_name(*key)
        if not p.exists() and not create:
            return None
        r = RegionFile(p, create=create)
        self._regions[key] = r
        return r

    def chunk(self, cx: int, cz: int) -> Chunk | None:
        with self.lock:
            c = self._chunks.get((cx, cz))
            if c is not None:
                self._chunks.move_to_end((cx, cz))
                return c
            region = self._region(cx, cz)
            data = region.read_chunk(cx, cz) if region is not None else None
            if data is None:
                return None
            try:
                root = nbt.read(data)
            except nbt.NbtError as exc:
                raise McbError(ErrorCode.INTERNAL, f"chunk ({cx},{cz}) is not valid NBT: {exc}") from None
            c = Chunk(cx, cz, root, self.registry, self.min_section, self.max_section)
            self._chunks[(cx, cz)] = c
            while len(self._chunks) > MAX_CACHED_CHUNKS:
                k, old = next(iter(self._chunks.items()))
                if old.dirty or k in self._unsaved or k in self._saving:
                    break
                self._chunks.popitem(last=False)
            return c

    def chunks_exist(self, cx0: int, cz0: int, cx1: int, cz1: int) -> tuple[bytes, int]:
        """Which chunks of the inclusive range are stored (region file headers only: no chunk is
        read, loaded or generated). Bit i of the bitmap (LSB first) is chunk
        (cx0 + i % width, cz0 + i // width); also the number that exist."""
        width = cx1 - cx0 + 1
        bits = bytearray((width * (cz1 - cz0 + 1) + 7) // 8)
        count = 0
        with self.lock:
            for rz in range(cz0 >> 5, (cz1 >> 5) + 1):
                for rx in range(cx0 >> 5, (cx1 >> 5) + 1):
                    region = self._region(rx * 32, rz * 32)
                    if region is None:
                        continue  # no region file: none of its chunks exist
                    for cz in range(max(cz0, rz * 32), min(cz1, rz * 32 + 31) + 1):
                        row = (cz - cz0) * width - cx0
                        for cx in range(max(cx0, rx * 32), min(cx1, rx * 32 + 31) + 1):
                            if region.has_chunk(cx, cz):
                                i = row + cx
                                bits[i >> 3] |= 1 << (i & 7)
                                count += 1
        return bytes(bits), count

    def existing_chunks(self) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        rdir = self.path / "region"
        if not rdir.is_dir():
            return out
        with self.lock:
            for p in rdir.iterdir():
                m = REGION_NAME.match(p.name)
                if not m:
                    continue
                rx, rz = int(m.group(1)), int(m.group(2))
                r = self._region(rx * 32, rz * 32)
                if r is not None:
                    out.extend(r.chunk_positions(rx, rz))
        return out

    # -- checks ------------------------------------------------------------------------------------
    def check_height(self, y0: int, y1: int) -> None:
        if y0 < self.min_y or y1 > self.max_y:
            raise McbError(
                ErrorCode.OUT_OF_BOUNDS,
                f"y {y0}..{y1} is outside the world's height {self.min_y}..{self.max_y}",
                details={"minY": self.min_y, "maxY": self.max_y},
            )

    def require_chunks(self, positions: Iterable[tuple[int, int, int]], for_write: bool) -> None:
        """The chunks holding these block positions exist (and, for writing, are complete), or
        the structured ``not_found`` naming the missing or unfinished ones (the host never
        generates chunks). Loads them; the caller holds ``lock``."""
        self._chunks_for(((x >> 4, z >> 4) for x, _, z in positions), for_write)

    def block_entities_in(self, lo: tuple[int, int, int], hi: tuple[int, int, int]) -> list[tuple[int, int, int, str]]:
        """(x, y, z, id) of the block entities (chests, signs, ...) inside the box ``lo..hi``
        (inclusive), in (y, z, x) order; ``not_found`` if a chunk of the box does not exist."""
        keys = [(cx, cz) for cx in range(lo[0] >> 4, (hi[0] >> 4) + 1) for cz in range(lo[2] >> 4, (hi[2] >> 4) + 1)]
        found = []
        with self.lock:
            for c in self._chunks_for(keys, False).values():
                for be in c.root.get("block_entities") or ():
                    if not isinstance(be, dict) or not {"x", "y", "z"} <= be.keys():
                        continue
                    x, y, z = int(be["x"]), int(be["y"]), int(be["z"])
                    if lo[0] <= x <= hi[0] and lo[1] <= y <= hi[1] and lo[2] <= z <= hi[2]:
                        found.append((y, z, x, str(be.get("id", "?"))))
        return [(x, y, z, i) for y, z, x, i in sorted(found)]

    def _chunks_for(self, keys: Iterable[tuple[int, int]], for_write: bool) -> dict[tuple[int, int], Chunk]:
        found: dict[tuple[int, int], Chunk] = {}
        missing: list[list[int]] = []
        proto: list[list[int]] = []
        for key in sorted(set(keys)):
            c = self.chunk(*key)
            if c is None:
                missing.append(list(key))
            else:
                if for_write and not c.is_full:
                    proto.append(list(key))
                found[key] = c
        if missing:
            shown = missing[:64]
            raise McbError(
                ErrorCode.NOT_FOUND,
                f"{len(missing)} chunk(s) do not exist in the world (never generated), e.g. "
                f"{', '.join(f'({a},{b})' for a, b in shown[:5])}; the host never generates chunks. "
                "Load the area in the game (or pre-generate it) first.",
                details={"missingChunks": shown, "missingCount": len(missing)},
            )
        if proto:
            raise McbError(
                ErrorCode.NOT_FOUND,
                f"{len(proto)} chunk(s) are unfinished proto-chunks (e.g. ({proto[0][0]},{proto[0][1]})); "
                "the game would generate over anything written there. Load the area in the game until "
                "the chunks are complete, then retry.",
                details={"protoChunks": proto[:64]},
            )
        return found

    # -- reads -------------------------------------------------------------------------------------
    def get_block(self, x: int, y: int, z: int) -> str:
        """The full state: block state plus block-entity data (mcb_common.blockentity)."""
        self.check_height(y, y)
        with self.lock:
            c = self._chunks_for([(x >> 4, z >> 4)], False)[(x >> 4, z >> 4)]
            return c.get_full(x, y, z, self.blockinfo)

    def get_blocks(self, positions: list[tuple[int, int, int]]) -> list[str]:
        if not positions:
            return []
        ys = [p[1] for p in positions]
        self.check_height(min(ys), max(ys))
        info = self.blockinfo
        plain: dict[str, bool] = {}  # state -> carries no block entity (a batch meets few states)
        # (cx, sy, cz) -> the section's (palette states, indices), None if absent (all air): what
        # Chunk.get_block reads, looked up once per section rather than once per position
        views: dict[tuple[int, int, int], tuple[list[str], np.ndarray] | None] = {}
        out = []
        with self.lock:
            chunks = self._chunks_for(((x >> 4, z >> 4) for x, _, z in positions), False)
            for x, y, z in positions:
                key = (x >> 4, y >> 4, z >> 4)
                if key in views:
                    view = views[key]
                else:
                    view = views[key] = chunks[(key[0], key[2])].section_view(key[1])
                state = AIR if view is None else view[0][view[1].item(((y & 15) << 8) | ((z & 15) << 4) | (x & 15))]
                bare = plain.get(state)
                if bare is None:
                    bare = plain[state] = info.block_entity(state) is None
                out.append(state if bare else chunks[(key[0], key[2])].get_full(x, y, z, info))
        return out

    def region_read(
        self, lo: tuple[int, int, int], hi: tuple[int, int, int]
    ) -> tuple[list[str], np.ndarray, list[tuple[int, int, int, int]]]:
        """(palette, uint16 indices shaped (sy, sz, sx) in YZX order, section revisions)."""
        (x0, y0, z0), (x1, y1, z1) = lo, hi
        self.check_height(y0, y1)
        sx, sy, sz = x1 - x0 + 1, y1 - y0 + 1, z1 - z0 + 1
        palette: list[str] = [AIR]
        index_of: dict[str, int] = {AIR: 0}
        out = np.zeros((sy, sz, sx), dtype=np.uint16)
        revs: list[tuple[int, int, int, int]] = []
        with self.lock:
            keys = [(cx, cz) for cx in range(x0 >> 4, (x1 >> 4) + 1) for cz in range(z0 >> 4, (z1 >> 4) + 1)]
            chunks = self._chunks_for(keys, False)
            for (cx, cz), c in chunks.items():
                bx0, bx1 = max(x0, cx * 16), min(x1, cx * 16 + 15)
                bz0, bz1 = max(z0, cz * 16), min(z1, cz * 16 + 15)
                for sec_y in range(y0 >> 4, (y1 >> 4) + 1):
                    revs.append((cx, sec_y, cz, self.revisions.get((cx, sec_y, cz), 0)))
                    view = c.section_view(sec_y)
                    if view is None:
                        continue  # absent section: air (already 0)
                    states, idx = view
                    lut = np.empty(len(states), dtype=np.uint16)
                    for i, s in enumerate(states):
                        g = index_of.get(s)
                        if g is None:
                            g = len(palette)
                            palette.append(s)
                            index_of[s] = g
                        lut[i] = g
                    by0, by1 = max(y0, sec_y * 16), min(y1, sec_y * 16 + 15)
                    cube = idx.reshape(16, 16, 16)
                    sub = cube[
                        by0 - sec_y * 16 : by1 - sec_y * 16 + 1,
                        bz0 - cz * 16 : bz1 - cz * 16 + 1,
                        bx0 - cx * 16 : bx1 - cx * 16 + 1,
                    ]
                    out[by0 - y0 : by1 - y0 + 1, bz0 - z0 : bz1 - z0 + 1, bx0 - x0 : bx1 - x0 + 1] = lut[sub]
        return palette, out, revs

    def entities_in(self, lo: tuple[int, int, int], hi: tuple[int, int, int]) -> list[EntityRecord]:
        """Entities whose position lies inside the block box ``lo..hi`` (inclusive), read from
        ``<world>/entities/r.X.Z.mca`` (1.17+ layout: one compound per chunk with ``DataVersion``,
        ``Position [I; cx, cz]`` and ``Entities``; riders nested in ``Passengers``). Read only: the
        files are opened read-only and closed again (the game owns them). A missing folder,
        file or chunk means no entities. Players are not stored there (``playerdata/``), so none
        can appear. Sorted by (y, z, x, id)."""
        (x0, y0, z0), (x1, y1, z1) = lo, hi
        edir = self.path / "entities"
        if not edir.is_dir():
            return []
        found: list[EntityRecord] = []
        by_region: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for cx in range(x0 >> 4, (x1 >> 4) + 1):
            for cz in range(z0 >> 4, (z1 >> 4) + 1):
                by_region.setdefault(region_coords(cx, cz), []).append((cx, cz))
        for (rx, rz), keys in sorted(by_region.items()):
            path = edir / region_name(rx, rz)
            if not path.is_file():
                continue
            region = RegionFile(path, readonly=True)
            try:
                for cx, cz in keys:
                    data = region.read_chunk(cx, cz)
                    if data is None:
                        continue
                    try:
                        root = nbt.read(data)
                    except nbt.NbtError as exc:
                        raise McbError(
                            ErrorCode.INTERNAL, f"entity chunk ({cx},{cz}) in {path.name} is not valid NBT: {exc}"
                        ) from None
                    stack = list(root.get("Entities") or ())
                    while stack:
                        e = stack.pop()
                        if not isinstance(e, dict):
                            continue
                        stack.extend(e.get("Passengers") or ())
                        pos = e.get("Pos")
                        if not isinstance(pos, list) or len(pos) != 3:
                            continue
                        x, y, z = (float(v) for v in pos)
                        if x0 <= x < x1 + 1 and y0 <= y < y1 + 1 and z0 <= z < z1 + 1:
                            found.append(EntityRecord(str(e.get("id", "?")), x, y, z, _entity_uuid(e)))
            finally:
                region.close()
        found.sort(key=lambda r: (r.y, r.z, r.x, r.id))
        return found

    # -- writes ------------------------------------------------------------------------------------
    def canonical_desired(self, state: str) -> str:
        """Canonical full state; block-entity data checked (``unsupported_block`` if refused).
        Pure for a given registry: remembered per input string (a batch names few states)."""
        hit = self._canonical.get(state)
        if hit is not None:
            return hit
        out = self._canonical_desired(state)
        if len(self._canonical) >= 65_536:
            self._canonical.clear()
        self._canonical[state] = out
        return out

    def _canonical_desired(self, state: str) -> str:
        text, data = blockentity.split(state)
        s = self.registry.canonical(text)
        if s.split("[", 1)[0] in AIR_NAMES:
            s = AIR
        be_id = self.blockinfo.block_entity(s)
        why = blockentity.refusal(be_id) if be_id else None
        if why is not None:
            raise McbError(
                ErrorCode.UNSUPPORTED_BLOCK,
                f"{s} cannot be written: {why}",
                details={"reason": "unsupported_block_entity"},
            )
        return blockentity.canonical_full(s + data, be_id, self.registry.version)

    def canonical_expected(self, state: str) -> str:
        """Expected states may name blocks the registry does not know (read from the world)."""
        try:
            return self.canonical_desired(state)
        except McbError:
            return state.strip()

    def apply(self, writes: list[Change] | Undo) -> list[tuple[int, int, int, int]]:
        """Write ``writes`` (``Change``s or (x, y, z, before, after) tuples, their ``before``
        checked by the caller under ``self.lock``) into the decoded chunks, all-or-nothing; returns
        the bumped section revisions. Nothing is durable until the batch's record is logged
        (``log_batch``, ``wait_durable``). The caller holds ``self.lock``."""
        writes = _undo(writes)
        if self.write_blocked:
            raise McbError(ErrorCode.UNAVAILABLE, self.write_blocked)
        self.settle_failed()
        try:
            self._write_states([(x, y, z, after) for x, y, z, _, after in writes])
        except BaseException as exc:
            self._write_states([(x, y, z, before) for x, y, z, before, _ in reversed(writes)])
            if isinstance(exc, McbError):
                raise
            raise McbError(
                ErrorCode.INTERNAL, f"writing the batch failed ({exc.__class__.__name__}: {exc}); nothing was changed"
            ) from exc
        return self._bump([(x, y, z) for x, y, z, _, _ in writes])

    def write_batch(
        self,
        changes: list[Change],
        batch_id: str,
        content_hash: str,
        operation_id: str = "",
        result: dict | None = None,
    ) -> list[tuple[int, int, int, int]]:
        """``apply`` + ``log_batch`` + ``wait_durable``: durable when this returns."""
        with self.lock:
            revs = self.apply(changes)
            t = self.log_batch(batch_id, content_hash, operation_id, changes, result or {})
        self.wait_durable(t)
        return revs

    def _bump(self, positions: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int, int]]:
        """Each position's section revision +1 (a section with n positions: +n); -> the sections'
        new revisions, sorted."""
        counts = Counter([(x >> 4, y >> 4, z >> 4) for x, y, z in positions])
        revisions = self.revisions
        for key, n in counts.items():
            revisions[key] = revisions.get(key, 0) + n
        return [(cx, sy, cz, revisions[(cx, sy, cz)]) for cx, sy, cz in sorted(counts)]

    def log_batch(
        self, batch_id: str, content_hash: str, operation_id: str, writes: list[Change] | Undo, result: dict
    ) -> Ticket:
        """Queue the batch's record (``writes``: ``Change``s or (x, y, z, before, after) tuples)
        for the write-ahead log (caller holds ``self.lock``; then ``wait_durable`` without it, so
        batches arriving together share one fsync)."""
        return self.host_state.submit_batch(batch_id, content_hash, operation_id, _undo(writes), result)

    def wait_durable(self, ticket: Ticket) -> None:
        """Return once the record is in the log and fsynced. If the log could not take it (disk
        full), its writes (and those of every batch logged after it) are undone in memory and
        this raises: nothing was changed."""
        self.host_state.wait(ticket)
        if ticket.error is None:
            return
        with self.lock:
            self.settle_failed()
        ticket.undone.wait()
        exc = ticket.error
        if is_disk_full(exc):
            raise disk_full_error("the world host", "nothing was changed") from exc
        raise McbError(
            ErrorCode.INTERNAL,
            f"the write-ahead log could not take the batch ({exc.__class__.__name__}: {exc}); nothing was changed",
        ) from exc

    def settle_failed(self) -> None:
        """Undo, newest first, the writes of batches whose log commit failed (caller holds
        ``self.lock``: no batch validates against them any more once this returns)."""
        if not self.host_state.has_failed():
            return
        for t in self.host_state.take_failed():
            if t.batch is not None and t.batch.undo:
                undo = t.batch.undo
                log.error(
                    "batch %s was not logged (%s): undoing its %d writes in memory",
                    t.batch.batch_id,
                    t.error,
                    len(undo),
                )
                self._write_states([(x, y, z, before) for x, y, z, before, _ in reversed(undo)])
                self._bump((x, y, z) for x, y, z, _, _ in undo)
                if self.on_undone is not None:
                    self.on_undone(
                        [(x, y, z, after, before) for x, y, z, before, after in reversed(undo)], t.batch.operation_id
                    )
            t.undone.set()

    def _write_states(self, items: list[tuple[int, int, int, str]]) -> None:
        """Set blocks (and their block entities) in the decoded chunks; the chunks are kept in
        memory (never evicted) until a checkpoint has written them into their region files."""
        touched: dict[tuple[int, int], Chunk] = {}
        parsed: dict[str, tuple[str, str, str | None]] = {}  # a batch names few states
        for x, y, z, state in items:
            key = (x >> 4, z >> 4)
            c = touched.get(key)
            first = c is None
            if c is None:
                c = self.chunk(*key)
                if c is None:
                    raise McbError(ErrorCode.NOT_FOUND, f"chunk {key} vanished during the write")
            hit = parsed.get(state)
            if hit is None:
                s, data = blockentity.split(state)
                hit = parsed[state] = (s, data, self.blockinfo.block_entity(s))
            s, data, be_id = hit
            c.set_block(x, y, z, s)
            if be_id is not None or not isinstance(bes := c.root.get("block_entities"), list) or bes:
                c.set_block_entity(x, y, z, be_id, json.loads(data) if data else None)
            # (else: no block entity in the chunk and none to put: set_block_entity would do nothing)
            if first:  # once the chunk's first block is set, as every later one
                touched[key] = c
                self._unsaved.add(key)

    # -- checkpoints -------------------------------------------------------------------------------
    def checkpoint(self, why: str = "") -> int:
        """Write every chunk changed by logged batches into its region file (each chunk encoded
        once; one fsync pair per region), then cut the log. Off the answer path: the world lock is
        held only while the chunks are encoded. Returns the number of chunks written."""
        with self._checkpoint_lock:
            for _ in range(1000):
                self.host_state.flush()  # every queued record committed (no world lock: see wait_durable)
                with self.lock:
                    self.settle_failed()
                    if self.host_state.in_flight():
                        continue  # a batch was queued meanwhile; commit it first
                    lsn = self.host_state.last_lsn
                    keys, self._unsaved = self._unsaved, set()
                    self._saving = keys
                    by_region: dict[tuple[int, int], list[tuple[int, int, bytes]]] = {}
                    regions: dict[tuple[int, int], RegionFile] = {}
                    try:
                        for cx, cz in sorted(keys):
                            c = self._chunks[(cx, cz)]
                            rk = region_coords(cx, cz)
                            if rk not in regions:
                                r = self._region(cx, cz, create=True)
                                assert r is not None
                                regions[rk] = r
                            by_region.setdefault(rk, []).append((cx, cz, c.encode()))
                    except BaseException:
                        self._unsaved |= keys
                        self._saving = set()
                        raise
                    break
            else:
                raise McbError(ErrorCode.BUSY, "the checkpoint could not find a moment without a batch in flight")
            try:
                if self.crash_hook is not None and by_region:
                    self.crash_hook("checkpoint_start")
                for n, (rk, chunks) in enumerate(sorted(by_region.items())):
                    regions[rk].write_chunks(chunks)
                    if self.crash_hook is not None and n == 0 and len(by_region) > 1:
                        self.crash_hook("checkpoint_mid")  # one region written, the others not
                if self.crash_hook is not None and by_region:
                    self.crash_hook("checkpoint_before_cut")
                self.host_state.cut(lsn)
            except BaseException as exc:
                with self.lock:
                    self._unsaved |= keys  # the log still holds them: written by the next checkpoint
                log.error(
                    "checkpoint%s failed (%s); the write-ahead log keeps every batch", f" ({why})" if why else "", exc
                )
                if is_disk_full(exc):
                    raise disk_full_error(
                        "the world host", "every answered batch is kept in its write-ahead log"
                    ) from exc
                raise
            finally:
                self._saving = set()
            self.checkpoints += 1
            return len(keys)

    def request_checkpoint(self) -> None:
        """Ask the background checkpointer for a checkpoint now (pause does)."""
        self._checkpoint_now.set()

    def start_checkpointer(self, every_s: float = CHECKPOINT_EVERY_S, log_mb: float = CHECKPOINT_LOG_MB) -> None:
        """Checkpoint every ``every_s`` seconds while there is something to write, as soon as the
        log holds ``log_mb`` MB, or when asked (``request_checkpoint``)."""
        if self._checkpointer is not None:
            return

        def loop() -> None:
            while not self._closing.is_set():
                if self._checkpoint_now.wait(min(every_s, 0.25)):
                    self._checkpoint_now.clear()
                elif not (
                    self.host_state.logged_bytes >= log_mb * 1_000_000
                    or time.monotonic() - self._last_checkpoint >= every_s
                ):
                    continue
                if self._closing.is_set():
                    break
                self._last_checkpoint = time.monotonic()
                if not self._unsaved:
                    continue
                try:
                    self.checkpoint("periodic")
                except Exception:  # noqa: BLE001 - logged by checkpoint; retried next time
                    pass

        self._checkpointer = threading.Thread(target=loop, name="world-checkpoint", daemon=True)
        self._checkpointer.start()

    def undo_batch(self, log_id: str, undo: Undo) -> None:
        """Put a batch's ``before`` states back (newest first) and log that as its own record."""
        back = [Change(x, y, z, after, before) for x, y, z, before, after in reversed(undo)]
        self.write_batch(back, f"undo-of-{log_id}-{uuid.uuid4().hex[:8]}", "undo", "", {"undo": log_id})

    def _replay(self) -> int:
        """Start-up: write every logged batch the region files may lack (``redo``) again, in log
        order, then checkpoint and cut the log. Redo sets ``after`` states only, so running it
        again (a crash during this) ends the same."""
        rows = self.host_state.redo_rows()
        with self.lock:
            for row in rows:
                self._write_states([(x, y, z, after) for x, y, z, _, after in row.undo])
        if rows:
            log.warning("replayed %d logged batch(es) onto the region files", len(rows))
        self.checkpoint("replay")
        return len(rows)

    def _recover(self) -> list[str]:
        """Batches ``begun`` in a log of a host before the write-ahead design: rolled back."""
        done = []
        for row in self.host_state.pending():
            log.warning(
                "rolling back batch %s: it was begun but never completed (%d blocks)", row.batch_id, len(row.undo)
            )
            with self.lock:
                for k in {(x >> 4, z >> 4) for x, _, z, _, _ in row.undo}:
                    self._chunks.pop(k, None)  # the region files are the truth for these
                self._write_states([(x, y, z, before) for x, y, z, before, _ in row.undo])
            self.checkpoint("rollback")
            self.host_state.mark_rolled_back(row.batch_id)
            done.append(row.batch_id)
        return done

    def set_blocks_direct(
        self,
        items: list[tuple[int, int, int, str]],
        log_id: str,
        on_applied: Callable[[list[Change]], None] | None = None,
    ) -> list[Change]:
        """Automation writes (not a caller's batch): same durability, no compare-and-set.
        ``on_applied`` runs under the world lock once the blocks are written in memory."""
        with self.lock:
            self.settle_failed()
            ys = [y for _, y, _ in ((i[0], i[1], i[2]) for i in items)]
            if ys:
                self.check_height(min(ys), max(ys))
            self._chunks_for(((x >> 4, z >> 4) for x, _, z, _ in items), True)
            changes: list[Change] = []
            seen: dict[tuple[int, int, int], int] = {}
            for x, y, z, state in items:
                seen[(x, y, z)] = len(changes)
                changes.append(Change(x, y, z, "", state))
            # last write wins for duplicate positions
            uniq = [changes[i] for i in sorted(set(seen.values()))]
            for ch in uniq:
                ch.before = self.get_block(ch.x, ch.y, ch.z)
            real = [ch for ch in uniq if ch.before != ch.after]
            if not real:
                return real
            self.apply(real)
            ticket = self.log_batch(log_id, "automation", "", real, {"changed": len(real)})
            if on_applied is not None:
                on_applied(real)
        self.wait_durable(ticket)
        return real

    def close(self) -> None:
        """Stop: checkpoint (the region files then hold every logged block), cut the log, close."""
        self._closing.set()
        if self._checkpointer is not None:
            self._checkpointer.join(30)
        try:
            if not self.write_blocked:
                self.checkpoint("stop")
        except Exception as exc:  # noqa: BLE001 - the log keeps the batches: the next start replays them
            log.error("the checkpoint at stop failed (%s); the next start replays the write-ahead log", exc)
        with self.lock:
            for r in self._regions.values():
                if r is not None:
                    r.close()
            self._regions.clear()
            self._chunks.clear()
            self.host_state.close()
