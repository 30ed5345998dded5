"""Immutable plans: what a recipe will write, against which base states, until when.

A plan is the write set (position -> desired state) plus the base state B of every position
read at prepare time, plus the declared dependencies (read set). It is stored once as a
content-addressed blob; ``plan_hash`` is the sha256 of that blob, so the same recipe on the
same world state gives the same hash. Plans never change after prepare: neither the blob nor
the plan's row — its metadata (``PlanMeta``, the row's ``summary_json``) and what it was made
from (``PlanOrigin``, the ``plan_origins`` table) are written once with it (planstore.py).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from mcb_common.geometry import Box, Vec3

from .columns import delta_column, read_columns

PLAN_FORMAT = "mcb.plan.v2"
PLAN_FORMAT_V1 = "mcb.plan.v1"  # one JSON document: read, never written (plans stored before v2)
_COLUMNS = ("x", "y", "z", "desired", "base")


@dataclass(frozen=True)
class PlanMeta:
    """What prepare knew besides the plan's blocks, stored as the row's ``summary_json``."""

    conflicts: int = 0  # conflicts found at prepare (a regeneration's or an undo's)
    observed_oid: int = 0  # the last observed event at prepare: later changes are someone else's
    replaced: Mapping[str, Any] = field(default_factory=dict)  # consent.count_sources: who placed what it replaces

    def to_json(self) -> str:
        return json.dumps(
            {"conflicts": self.conflicts, "observed_oid": self.observed_oid, "replaced": dict(self.replaced)}
        )

    @classmethod
    def from_json(cls, raw: str | None) -> PlanMeta:
        """A ``plans.summary_json`` (keys this version does not know are left out)."""
        doc: dict[str, Any] = json.loads(raw or "{}")
        return cls(
            conflicts=int(doc.get("conflicts", 0)),
            observed_oid=int(doc.get("observed_oid", 0)),
            replaced=doc.get("replaced") or {},
        )


@dataclass(frozen=True)
class RollbackOf:
    """Whose changes a rollback plan undoes (rollback.py): one player or one environment cause, since when."""

    player: str
    cause: str
    since_millis: int


@dataclass(frozen=True)
class PlanOrigin:
    """What a plan was made from when it is not a recipe or a schematic: the operation it undoes,
    the part it regenerates and the new design's blob (the part's mask once it is applied), or the
    changes it rolls back."""

    undo_of: str | None = None
    regenerates: str | None = None
    design_sha: str | None = None
    rollback_of: RollbackOf | None = None


@dataclass
class Plan:
    palette: list[str]
    xyz: list[int]  # 3 ints per entry, sorted by (y, z, x)
    desired: list[int]  # palette index per entry
    base: list[int]  # palette index per entry
    dependencies: list[tuple[int, int, int, str]]
    world_uuid: str
    world_epoch: int
    recipe_hash: str

    def __len__(self) -> int:
        return len(self.desired)

    def encode(self) -> bytes:
        """The plan's bytes (``plan_hash`` is their sha256): a line of key-sorted compact JSON (the
        format, the palette, the dependencies, the world and recipe, ``n`` and the columns' types),
        then five integer columns of ``n`` values as deltas (columns.py): x, y, z, desired, base.
        A 100k-block plan encodes in a few ms (its JSON form took ~24 ms, and ~16 ms to decode)."""
        n = len(self)
        xyz = np.asarray(self.xyz, dtype=np.int64).reshape(n, 3)
        cols: list[list[str]] = []
        parts: list[bytes] = []
        for name, vals in zip(_COLUMNS, (xyz[:, 0], xyz[:, 1], xyz[:, 2], self.desired, self.base), strict=True):
            dt, data = delta_column(vals)
            cols.append([name, dt])
            parts.append(data)
        head = {
            "format": PLAN_FORMAT,
            "n": n,
            "cols": cols,
            "palette": self.palette,
            "dependencies": [list(d) for d in self.dependencies],
            "world_uuid": self.world_uuid,
            "world_epoch": self.world_epoch,
            "recipe_hash": self.recipe_hash,
        }
        return b"\n".join([json.dumps(head, separators=(",", ":"), sort_keys=True).encode(), b"".join(parts)])

    @classmethod
    def decode(cls, raw: bytes) -> Plan:
        """A plan's bytes, in this format or ``mcb.plan.v1`` (one JSON document). ValueError when
        they are neither, or their columns do not add up."""
        head_raw, nl, body = raw.partition(b"\n")
        doc: dict[str, Any] = json.loads(head_raw)
        fmt = doc.get("format")
        if fmt == PLAN_FORMAT and nl:
            if [c for c, _ in doc["cols"]] != list(_COLUMNS):
                raise ValueError(f"plan columns {[c for c, _ in doc['cols']]}, not {list(_COLUMNS)}")
            n = int(doc["n"])
            cols = read_columns(body, doc["cols"], n, _COLUMNS)
            xyz = np.empty((n, 3), dtype=np.int64)
            xyz[:, 0], xyz[:, 1], xyz[:, 2] = cols["x"], cols["y"], cols["z"]
            xyz_list, desired, base = xyz.ravel().tolist(), cols["desired"].tolist(), cols["base"].tolist()
        elif fmt == PLAN_FORMAT_V1 and not nl:
            xyz_list, desired, base = doc["xyz"], doc["desired"], doc["base"]
        else:
            raise ValueError(f"unknown plan format {fmt!r}")
        return cls(
            palette=doc["palette"],
            xyz=xyz_list,
            desired=desired,
            base=base,
            dependencies=[tuple(d) for d in doc["dependencies"]],
            world_uuid=doc["world_uuid"],
            world_epoch=doc["world_epoch"],
            recipe_hash=doc["recipe_hash"],
        )

    @classmethod
    def from_entries(
        cls, entries: list[tuple[tuple[int, int, int], str, str]], world_uuid: str, world_epoch: int, recipe_hash: str
    ) -> Plan:
        """A plan from (position, base, desired) triples, in the given order (no dependencies)."""
        palette: list[str] = []
        index: dict[str, int] = {}

        def idx(state: str) -> int:
            if state not in index:
                index[state] = len(palette)
                palette.append(state)
            return index[state]

        desired = [idx(d) for _, _, d in entries]
        base = [idx(b) for _, b, _ in entries]
        return cls(
            palette=palette,
            xyz=[c for p, _, _ in entries for c in p],
            desired=desired,
            base=base,
            dependencies=[],
            world_uuid=world_uuid,
            world_epoch=world_epoch,
            recipe_hash=recipe_hash,
        )

    def entries(self, start: int, stop: int) -> list[tuple[int, int, int, str, str]]:
        """(x, y, z, expected=B, desired=D) for entries [start, stop) (built from slices: the executor
        takes 512 a batch)."""
        stop = min(stop, len(self))
        if start >= stop:
            return []
        name, xyz = self.palette.__getitem__, self.xyz
        return list(
            zip(
                xyz[3 * start : 3 * stop : 3],
                xyz[3 * start + 1 : 3 * stop : 3],
                xyz[3 * start + 2 : 3 * stop : 3],
                map(name, self.base[start:stop]),
                map(name, self.desired[start:stop]),
                strict=True,
            )
        )

    @functools.cached_property
    def bounds(self) -> Box | None:
        """The box around every entry's position (None without entries), computed once (a plan
        never changes): the operation's Before picture frames it (before.py), and the executor
        checks it against the project's area before every batch (policy.batch_refusal)."""
        if not len(self):
            return None
        xyz = np.fromiter(self.xyz, dtype=np.int64, count=3 * len(self)).reshape(len(self), 3)
        lo, hi = xyz.min(axis=0), xyz.max(axis=0)
        return Box(Vec3(*map(int, lo)), Vec3(*map(int, hi)))

    def changed_count(self) -> int:
        return int(self.changes()[1].sum())

    def changes(self) -> tuple[np.ndarray, np.ndarray]:
        """(desired indices, mask of the entries whose desired index differs from the base's)."""
        if len(self.base) != len(self.desired):
            raise ValueError("plan base and desired differ in length")
        desired = np.asarray(self.desired, dtype=np.int64).reshape(len(self.desired))
        return desired, desired != np.asarray(self.base, dtype=np.int64).reshape(len(self.base))
