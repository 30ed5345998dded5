"""Parts a recipe pastes: found in the recipe JSON and attached to the planner's request.

The planner is stateless and never sees the journal's database, so before ``Compile`` the
journal lists the parts the recipe pastes (``{"type": "paste", "part": "<part_id>"}`` at any
nesting depth) with the recipe's syntax walk the planner's parser is built on
(``mcb_common.recipe_syntax.walk``: operation types, child operations and paste sources as the
recipe schema defines them), checks each part belongs to the caller's project, and attaches its
generated states (the part blob's ``generated``: "x,y,z" → state) as ``CompileRequest.parts``.
Leniently: a recipe that is not valid JSON, and whatever is not an operation, attach nothing —
the planner reports the error with its path.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mcb.common.v1 import common_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_common.recipe_syntax import walk

if TYPE_CHECKING:
    from .context import JournalContext

MAX_PARTS_PER_RECIPE = 64


def part_ids(recipe_json: str) -> list[str]:
    try:
        doc = json.loads(recipe_json)
    except (ValueError, RecursionError):
        return []
    found = {part for node in walk(doc) if isinstance(part := node.sources().get("part"), str)}
    return sorted(found)


def parts_for_recipe(core: JournalContext, project_id: str, recipe_json: str) -> dict[str, common_pb2.BlockList]:
    ids = part_ids(recipe_json)
    if len(ids) > MAX_PARTS_PER_RECIPE:
        raise McbError(
            ErrorCode.BUDGET_EXCEEDED,
            f"the recipe pastes {len(ids)} different parts; the limit is {MAX_PARTS_PER_RECIPE}",
            details={"limit": "parts", "value": len(ids), "max": MAX_PARTS_PER_RECIPE},
        )
    out: dict[str, common_pb2.BlockList] = {}
    total = 0
    for part_id in ids:
        row = core.db.one("SELECT mask_sha256 FROM parts WHERE part_id=? AND project_id=?", part_id, project_id)
        if row is None:
            raise McbError(
                ErrorCode.NOT_FOUND,
                f"paste names part {part_id!r}, which is not a part of project {project_id!r}; "
                "see part_get / the part ids part_define returned",
                details={"part_id": part_id},
            )
        doc = json.loads(core.blobs.get(row["mask_sha256"]))
        gen = doc.get("generated") or {}
        total += len(gen)
        if total > core.limits.max_changed_blocks:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED,
                f"the pasted parts hold {total:,} blocks; a plan is limited to {core.limits.max_changed_blocks:,}",
                details={"limit": "max_changed_blocks", "value": total, "max": core.limits.max_changed_blocks},
            )
        bl = common_pb2.BlockList()
        index: dict[str, int] = {}
        for key in sorted(gen, key=lambda k: tuple(int(v) for v in k.split(","))):
            st = gen[key]
            if st not in index:
                index[st] = len(index)
                bl.palette.append(st)
            bl.xyz.extend(int(v) for v in key.split(","))
            bl.state.append(index[st])
        out[part_id] = bl
    return out
