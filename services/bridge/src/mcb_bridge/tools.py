"""The agent's tools: names, argument names, JSON Schemas and descriptions (the agent's manual).

Names and argument names are the user's contract (seed 000/003, ARCHITECTURE §4); keep them.
No tool takes ``project_id``, ``player_id`` or a world: the bridge adds them from its trusted
configuration, and every schema says ``additionalProperties: false`` so a model cannot smuggle
them in.

Arguments are validated here against the same schemas the client sees (JSON Schema 2020-12,
``jsonschema``); a failure is an ``invalid_request`` error listing each problem with its path.
Before any schema validation the arguments pass cheap structural limits
(``mcb_common.recipe_schema.check_shape``: bytes, nesting depth, number of values and of
recipe operations), and validation itself stops at a deadline; both refusals are
``budget_exceeded`` naming the limit. ``Bridge.call`` runs all of it off the event loop.
"""

from __future__ import annotations

import contextvars
import copy
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import mcp_types as types
from jsonschema import Draft202012Validator, validators
from mcb_common.errors import ErrorCode, McbError
from mcb_common.recipe_schema import MAX_RECIPE_BYTES, check_shape

log = logging.getLogger("mcb.bridge")

# Java edition's world border is ±29,999,984; heights are checked by the journal per world.
_COORD = {"type": "integer", "minimum": -30_000_000, "maximum": 30_000_000}
MAX_DEPENDENCIES = 4096
MAX_ID_LENGTH = 200
# Validating one call's arguments may take at most this long (seconds of wall time).
VALIDATION_SECONDS = 2.0
# Arguments of a tool without a recipe are small; a recipe call may carry up to
# MAX_RECIPE_BYTES plus its dependencies.
MAX_ARGUMENT_BYTES = MAX_RECIPE_BYTES + 512 * 1024
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("mcb_validation_deadline", default=None)


class _ValidationTimeout(Exception):
    pass


def _with_deadline(keyword: Any) -> Any:
    def check(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        deadline = _DEADLINE.get()
        if deadline is not None and time.monotonic() > deadline:
            raise _ValidationTimeout
        yield from keyword(validator, value, instance, schema)

    return check


# Draft 2020-12 that checks the deadline at every $ref and array (the places where a large
# document's work multiplies), so a validation can be stopped part-way.
_DeadlineValidator = validators.extend(Draft202012Validator, {
    k: _with_deadline(Draft202012Validator.VALIDATORS[k]) for k in ("$ref", "items", "properties")})


def _inline_leaf_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace ``$ref``s to definitions that hold no ``$ref`` themselves by their bodies
    (repeatedly, so vec3 → coord → expression all inline); the recursive ones stay. Resolving a
    reference costs far more than checking what it points to. Siblings of ``$ref`` are kept
    (merged, or beside it in an ``allOf`` when a keyword would clash)."""
    defs = schema.get("$defs") or {}

    def has_ref(node: Any) -> bool:
        if isinstance(node, dict):
            return "$ref" in node or any(has_ref(v) for v in node.values())
        if isinstance(node, list):
            return any(has_ref(v) for v in node)
        return False

    def inline(node: Any, leaves: dict[str, Any]) -> Any:
        if isinstance(node, list):
            return [inline(v, leaves) for v in node]
        if not isinstance(node, dict):
            return node
        node = {k: inline(v, leaves) for k, v in node.items()}
        ref = node.get("$ref")
        name = ref[len("#/$defs/"):] if isinstance(ref, str) and ref.startswith("#/$defs/") else None
        if name in leaves:
            rest = {k: v for k, v in node.items() if k != "$ref"}
            body = copy.deepcopy(leaves[name])
            if set(rest) & set(body):
                return {"allOf": [body], **rest}
            return {**body, **rest}
        return node

    for _ in range(len(defs)):
        leaves = {k: v for k, v in defs.items() if not has_ref(v)}
        changed = {k: inline(v, leaves) for k, v in defs.items()}
        if changed == defs:
            break
        defs = changed
    leaves = {k: v for k, v in defs.items() if not has_ref(v)}
    out = {k: inline(v, leaves) for k, v in schema.items() if k != "$defs"}
    out["$defs"] = defs
    return out


def _vec3(description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "properties": {"x": _COORD, "y": _COORD, "z": _COORD},
        "required": ["x", "y", "z"],
        "additionalProperties": False,
    }


def _id(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH, "description": description}


# A permissive recipe schema for the case where mcb_common.recipe_schema cannot be imported
# (an older mcb-common without it). The journal's planner validates every recipe in full
# anyway, so this only loses the early, client-side check; nothing unsafe gets through.
_FALLBACK_RECIPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A recipe {version: 1, operations: [...]}; the planner validates it in full.",
    "properties": {
        "version": {"type": "integer"},
        "operations": {"type": "array", "minItems": 1, "items": {"type": "object"}},
    },
    "required": ["version", "operations"],
}


def recipe_schema() -> dict[str, Any]:
    """The recipe's schema from mcb_common (imported lazily), else the permissive fallback."""
    try:
        from mcb_common.recipe_schema import RECIPE_SCHEMA
    except ImportError:
        log.warning("mcb_common.recipe_schema is not installed; build_prepare uses a permissive recipe schema")
        return copy.deepcopy(_FALLBACK_RECIPE_SCHEMA)
    return copy.deepcopy(RECIPE_SCHEMA)


def _embed(root: dict[str, Any], prop: str, schema: dict[str, Any]) -> None:
    """Place a standalone schema under ``root.properties[prop]``.

    A standalone schema's ``$ref``s point into its own root (``#/$defs/...``). Many MCP clients
    and model providers resolve ``$ref`` only against the tool schema's root and ignore nested
    ``$id``s, so the definitions are hoisted to the root, ``$id``/``$schema`` are dropped, and
    any reference to the embedded root itself is rewritten to its new place.
    """
    schema = copy.deepcopy(schema)
    schema.pop("$schema", None)
    schema.pop("$id", None)
    for key in ("$defs", "definitions"):
        defs = schema.pop(key, None)
        if defs:
            target = root.setdefault(key, {})
            clash = set(target) & set(defs)
            if clash:
                raise ValueError(f"schema definitions clash while embedding {prop}: {sorted(clash)}")
            target.update(defs)
    here = f"#/properties/{prop}"

    def fix(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and (ref == "#" or (
                ref.startswith("#/") and not ref.startswith(("#/$defs/", "#/definitions/"))
            )):
                node["$ref"] = here + ref[1:]
            for v in node.values():
                fix(v)
        elif isinstance(node, list):
            for v in node:
                fix(v)

    fix(root)
    fix(schema)
    root["properties"][prop] = schema


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    idempotent: bool

    @cached_property
    def validator(self) -> Draft202012Validator:
        return _DeadlineValidator(_inline_leaf_refs(self.input_schema))

    def to_mcp(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            annotations=types.ToolAnnotations(
                title=self.title,
                read_only_hint=self.read_only,
                destructive_hint=False if self.read_only else True,
                idempotent_hint=self.idempotent,
                open_world_hint=False,
            ),
        )


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


_ERRORS_NOTE = (
    "Errors come back as a tool error whose JSON is {\"error\": {code, message, retryable, hint}}; "
    "follow the hint."
)

PROJECT_CONTEXT = """\
Start here. Returns the project you build for (id, name, build area as an inclusive box), the \
world (id, epoch, Minecraft version, height limits min_y..max_y, paused?), the limits \
(max changed blocks per plan, positions per region_inspect page, plan lifetime), the recipe \
operations supported, how block states are written, and operations that need attention \
(e.g. recovery_required, conflict) plus recent ones.
Takes no arguments: the project, player and world come from the bridge's configuration.
Call it at the start of a task, after resync_required/version_mismatch errors, and when a \
build_apply answer was lost. """ + _ERRORS_NOTE

REGION_INSPECT = """\
Read blocks in an inclusive box [min, max] (integer block coordinates, y is up). Never \
generates chunks: missing chunks are a not_found error naming them.
detail="summary": palette of canonical block states with counts (most frequent first, at \
most 32 listed), non_air count, positions. Use it first for any size of area up to 2,000,000 \
positions.
detail="blocks": the exact state of every position, one page of at most 4096 positions at a \
time. The answer has a `legend` (short symbol -> canonical state; "." is air, " " is a position \
not in this page) and `layers`: one entry per y, each with `rows`, one string per z \
(from z_min upward), one character per x (from x_min upward). If `next_cursor` is present the \
answer is partial: call again with the same min/max/detail and cursor=next_cursor.
detail="heightmap": surface heights (highest non-air y inside the box) sampled every `step` blocks (default: automatic; a grid of at most 32x32), as `rows` (one per sampled z, from z_min) of numbers per sampled x (from x_min); null = only air in that column, "?" = the chunk does not exist (never generated; it is never created by reading).
summary also has `occupied` (at most 32 boxes that together hold every non-air block), a coarse heightmap (16x16 at most) and `unknown_chunks` when part of the box was never generated.
Keep regions small (e.g. 16x16x16 = 4096 positions per blocks page); use summary for large areas. \
""" + _ERRORS_NOTE

BUILD_PREPARE = """\
Compile a recipe into an immutable plan without changing the world. Returns plan_id, \
plan_hash, changed_blocks, already_blocks (already in the desired state), region, expires_at, \
materials, conflicts known now (with positions and the part they hit) and warnings.
recipe: {"version": 1, "params"?, "palette"?, "seed"?, "operations": [...]} with operations \
box(min,max,block,hollow?), line(from,to,block), cylinder(center,radius,height,block,hollow?), \
arch(center,radius,axis,block,width?,depth?,filled?), repeat(count,offset,operations), \
transform(operations, rotate? 0/90/180/270 clockwise seen from above, mirror? x/z, anchor, \
translate?) — block states (stairs, doors, rails, fences…) turn with the transform, \
replace(min,max,from,to): positions in the box whose current state matches `from` ("*" = any \
non-air, a block id = all its states, "oak_stairs[facing=east]", "!…" excludes) become `to` (written \
without [properties] it keeps the source's: oak_stairs → spruce_stairs keeps facing), \
paste(at, asset (asset_list id) or part (part id), rotation? 0/90/180/270 about at). Any integer \
may be an expression over params, e.g. "base_y + floors * 4"; any block may be "$name" from the \
palette, whose entries may be weighted lists [{"block":..,"weight":3},..] chosen per position \
reproducibly from seed. Coordinates are absolute and inclusive; later operations win \
where they overlap. Plans that would place or overwrite block entities (chests, signs…), \
touch fluids, or leave gravity blocks (sand, gravel…) unsupported are refused before writing. Example: {"version":1,"operations":[{"type":"box","min":{"x":0,"y":64,"z":0},\
"max":{"x":4,"y":70,"z":4},"block":"minecraft:stone_bricks","hollow":true}]}.
dependencies (optional): positions the build relies on (supports, clear passages); each is \
{x,y,z,state?} or {pos:{x,y,z}, state?}. With state, the block must hold that state; without, \
it must keep what it holds now. Applying stops before writing if one changed.
part_id (optional): limit writes to the exact block mask of that part.
Nothing is written until build_apply. A plan expires (expires_at); then prepare again. \
Errors: invalid_request/unsupported_block/out_of_bounds/budget_exceeded mean change the recipe. \
""" + _ERRORS_NOTE

BUILD_APPLY = """\
Apply a prepared plan: pass plan_id and plan_hash exactly as build_prepare returned them, and \
a fresh idempotency_key that you choose for this apply (e.g. "tower-roof-1") and keep.
Returns operation_id and its state (queued/applying/applied/...) with counters. Writing \
continues after the answer: poll operation_status until the state is applied, conflict, \
cancelled or failed.
Each block is written only if it still holds what the plan saw; a block someone changed is \
reported as a conflict and never overwritten.
Idempotency: repeating the same call with the same key returns the same operation \
(replayed=true) and writes nothing twice. If the answer was lost or timed out, repeat it with \
the SAME key or call operation_status - never invent a new key for the same plan. A new plan \
needs a new key; reusing a key for another plan is an error.
stale_snapshot means the plan expired or the world moved on: prepare again. paused/busy/\
recovery_required: wait or tell the user. """ + _ERRORS_NOTE

OPERATION_STATUS = """\
State of an operation started by build_apply: state (queued, applying, applied, conflict, \
cancelled, failed, recovery_required), counters planned/written/already/conflicts, batches \
done/total, a bounded sample of conflicts with positions (expected, current, desired, source: \
player/environment/external, and the part they hit) and of written positions, and any error.
Even cancelled or failed operations may have written some blocks (see written). Poll every \
second or two while queued/applying. """ + _ERRORS_NOTE


OPERATION_CANCEL = """\
Stop an operation: no new batch starts after this call (the flag is read before every \
batch). Blocks already written stay written and journaled; the answer has the same shape as \
operation_status, with the counts written so far. """ + _ERRORS_NOTE

OPERATION_UNDO_PREPARE = """\
Prepare the undo of a finished operation as an ordinary plan (apply it with build_apply and a \
new idempotency_key). Only blocks the operation actually wrote are restored, and only where \
they still hold what we wrote and nothing later touched them: a person's edit (even one \
changed back), another operation of ours, or the environment make that block a conflict that \
is listed and left as it is. Never restores a whole area blindly. """ + _ERRORS_NOTE

PART_DEFINE = """\
Name the blocks a finished operation actually wrote as a part (e.g. "walls", "roof"). The \
part's mask is exactly those blocks; build_prepare with part_id then refuses writes outside \
that mask. A part extension needs a new part. """ + _ERRORS_NOTE

PART_GET = """\
A part's name, bounds, block count, protection, and how many of its blocks changed since it \
was defined by someone else (by source; complete=false when observation was interrupted). \
""" + _ERRORS_NOTE

REGION_CHANGES = """\
Block changes observed in a region since a cursor: count, by source (player, environment, \
ours), bounding box, affected parts, and a page of at most 100 events. Start with an empty \
since_cursor to get a fresh cursor. A resync_required error means history was lost (world \
host restart, trimmed log, new world/epoch): read a fresh region_inspect summary and start \
again with an empty cursor. Changes that emit no event (external edits) are not listed; \
region_inspect shows them. """ + _ERRORS_NOTE


def safe_write_specs() -> list[ToolSpec]:
    op = _obj({"operation_id": _id("operation_id from build_apply")}, ["operation_id"])
    return [
        ToolSpec("operation_cancel", "Cancel an operation", OPERATION_CANCEL, op, False, True),
        ToolSpec("operation_undo_prepare", "Prepare an undo", OPERATION_UNDO_PREPARE, op, True, False),
        ToolSpec("part_define", "Define a part", PART_DEFINE,
                 _obj({"name": {"type": "string", "minLength": 1, "maxLength": 64, "description": "the part's name"},
                       "operation_id": _id("a finished operation whose written blocks form the part")},
                      ["name", "operation_id"]), False, False),
        ToolSpec("part_get", "Get a part", PART_GET, _obj({"part_id": _id("part_id from part_define")}, ["part_id"]),
                 True, True),
        ToolSpec("region_changes", "Changes in a region", REGION_CHANGES,
                 _obj({"region": _obj({"min": _vec3("inclusive lower corner"),
                                       "max": _vec3("inclusive upper corner")}, ["min", "max"]),
                       "since_cursor": {"type": "string", "maxLength": 256,
                                        "description": "next_cursor of the previous call; empty to start"},
                       "limit": {"type": "integer", "minimum": 1, "maximum": 100}},
                      ["region"]), True, True),
    ]


ASSET_LIST = """\
List the schematic library (one folder of .schem files, and read-only vanilla structure .nbt \
files). query (optional): case-insensitive part of the asset id. Pages of 20; pass \
next_cursor as cursor for more. Each asset: assetId (use it in schematic_import_prepare), \
name, width, height, length, blockCount (non-air blocks), dataVersion, offset {x,y,z} (where \
the schematic's corner sits relative to its anchor), sha256, bytes, format, readOnly. A file \
that cannot be used is listed with valid=false and its reason. """ + _ERRORS_NOTE

SCHEMATIC_EXPORT = """\
Save an inclusive box [min, max] of the world as a new Sponge v3 .schem in the library, air \
included, within the project area and the plan limit. origin (optional, default min) is the \
anchor: importing with target T puts origin's block at T. name: letters, digits, '_' and '-' \
(1-64), it becomes the assetId; an existing name is refused (never overwritten). Players and \
other entities are never saved; a box with block entities (chests, signs, ...) is refused \
with their list. Returns the asset's metadata. """ + _ERRORS_NOTE

SCHEMATIC_IMPORT_PREPARE = """\
Prepare placing a library schematic as an ordinary plan (apply with build_apply). target \
{x,y,z}: where the schematic's anchor goes (its stored offset is honoured); rotation 0, 90, \
180 or 270 degrees clockwise seen from above around target (stairs, logs, doors, fences turn \
with it). The schematic's air is part of the plan and replaces what stands there (see \
warnings). Refused with reasons: entities, block entities (unless \
allow_drop_block_entities=true: those positions are then left out and listed in left_out), \
biomes, unknown blocks (with suggestions), a newer Minecraft version, over the plan limit, \
outside the project area. """ + _ERRORS_NOTE


def schematic_specs() -> list[ToolSpec]:
    return [
        ToolSpec("asset_list", "List schematics", ASSET_LIST,
                 _obj({"query": {"type": "string", "maxLength": 64, "description": "part of the asset id"},
                       "cursor": {"type": "string", "maxLength": 64, "description": "next_cursor of the previous page"}},
                      []), True, True),
        ToolSpec("schematic_export", "Export a schematic", SCHEMATIC_EXPORT,
                 _obj({"name": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$",
                                "description": "the new asset's name (= assetId)"},
                       "min": _vec3("inclusive lower corner"),
                       "max": _vec3("inclusive upper corner (>= min on every axis)"),
                       "origin": _vec3("the anchor (default: min)")},
                      ["name", "min", "max"]), False, False),
        ToolSpec("schematic_import_prepare", "Prepare a schematic import", SCHEMATIC_IMPORT_PREPARE,
                 _obj({"asset_id": {"type": "string", "minLength": 1, "maxLength": 80,
                                    "description": "assetId from asset_list"},
                       "target": _vec3("where the schematic's anchor goes"),
                       "rotation": {"type": "integer", "enum": [0, 90, 180, 270],
                                    "description": "degrees clockwise seen from above (default 0)"},
                       "allow_drop_block_entities": {
                           "type": "boolean",
                           "description": "import without block entities (chests, signs...): left out and listed"}},
                      ["asset_id", "target"]), True, False),
    ]


CAMERA_LIST = """\
Saved cameras of the project (camera_id, name, pose) and the camera worker's state: \
worker_state ready / busy / no_driver / link_lost and driver builtin (draws the world's real \
blocks) or fabric (a real Minecraft client). """ + _ERRORS_NOTE

CAMERA_CAPTURE = """\
Take a real picture of the world, returned as an image with a metadata text.
Give exactly one of: camera_id (a saved camera); pose {x,y,z (feet position), yaw, pitch, \
fov? (vertical degrees, default 70), width?/height? (default 1280x720)} - Minecraft \
convention: yaw 0 looks south (+z), 90 west (-x), 180 north, 270 east; pitch 90 looks straight \
down; region {min,max} alone - an automatic viewpoint of that box chosen by view \
(entrance, opposite, diagonal [default], or top/side for orthographic views); or capture_id \
to poll a capture that answered status "pending".
region with a pose limits what is drawn to that box (default: what the pose sees, up to 64 \
blocks). after_operation_id: wait until that operation is finished first, so the picture \
shows its result.
The answer is status "completed" with the image, or "pending" with capture_id: call again \
with capture_id in a second or two. Metadata: stale=true means blocks in view changed while \
the picture was taken (capture again); serverRevisionVerified says whether the picture is \
proven to show the server's current blocks. capture_not_ready: the scene could not be read \
in time (missing chunks, still changing); camera_unavailable: no camera driver or its link \
is down. An old picture is never returned for a new request. Use pictures sparingly (2 \
views per check). """ + _ERRORS_NOTE


def camera_specs() -> list[ToolSpec]:
    num = {"type": "number", "minimum": -30_000_000, "maximum": 30_000_000}
    pose = {
        "type": "object",
        "description": "feet position and look direction (Minecraft convention)",
        "properties": {
            "x": num, "y": {"type": "number", "minimum": -2048, "maximum": 2048}, "z": num,
            "yaw": {"type": "number", "minimum": -360, "maximum": 360},
            "pitch": {"type": "number", "minimum": -90, "maximum": 90},
            "fov": {"type": "number", "minimum": 1, "maximum": 170},
            "width": {"type": "integer", "minimum": 16, "maximum": 3840},
            "height": {"type": "integer", "minimum": 16, "maximum": 2160},
        },
        "required": ["x", "y", "z", "yaw", "pitch"],
        "additionalProperties": False,
    }
    return [
        ToolSpec("camera_list", "List cameras", CAMERA_LIST, _obj({}, []), True, True),
        ToolSpec("camera_capture", "Capture a picture", CAMERA_CAPTURE,
                 _obj({"camera_id": _id("a saved camera from camera_list"),
                       "pose": pose,
                       "region": _obj({"min": _vec3("inclusive lower corner"),
                                       "max": _vec3("inclusive upper corner")}, ["min", "max"]),
                       "view": {"type": "string", "enum": ["entrance", "opposite", "diagonal", "top", "side"],
                                "description": "automatic viewpoint of region (without pose/camera_id)"},
                       "after_operation_id": _id("wait until this operation is finished"),
                       "capture_id": _id("poll a pending capture")},
                      []), True, False),
    ]


def build_specs(recipe: dict[str, Any] | None = None) -> dict[str, ToolSpec]:
    recipe = recipe if recipe is not None else recipe_schema()
    dependency = {
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "x": _COORD, "y": _COORD, "z": _COORD,
                    "state": {"type": "string", "maxLength": 256,
                              "description": "required state; omit to require the current one"},
                },
                "required": ["x", "y", "z"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "pos": _vec3("the position"),
                    "state": {"type": "string", "maxLength": 256,
                              "description": "required state; omit to require the current one"},
                },
                "required": ["pos"],
                "additionalProperties": False,
            },
        ]
    }
    prepare_schema = _obj(
        {
            "recipe": {},
            "dependencies": {
                "type": "array",
                "maxItems": MAX_DEPENDENCIES,
                "items": dependency,
                "description": "positions the build relies on: {x,y,z,state?} or {pos:{x,y,z}, state?}",
            },
            "part_id": _id("restrict writes to the exact mask of this part"),
            "regenerate_part_id": _id(
                "regenerate this part with the recipe by a three-way merge: where the new design equals "
                "the old one the world keeps whatever it holds (manual edits survive); blocks untouched "
                "since we built them take the new design; blocks changed by both are conflicts"),
        },
        ["recipe"],
    )
    _embed(prepare_schema, "recipe", recipe)
    specs = [
        ToolSpec("project_context", "Project context", PROJECT_CONTEXT, _obj({}, []), True, True),
        ToolSpec(
            "region_inspect",
            "Inspect a region",
            REGION_INSPECT,
            _obj(
                {
                    "min": _vec3("inclusive lower corner"),
                    "max": _vec3("inclusive upper corner (>= min on every axis)"),
                    "detail": {
                        "type": "string",
                        "enum": ["summary", "blocks", "heightmap"],
                        "description": "summary: palette with counts, occupied boxes, coarse heights; "
                                       "blocks: exact states (paged); heightmap: surface heights",
                    },
                    "step": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 4096,
                        "description": "heightmap/summary: sample every `step` blocks (raised if the "
                                       "grid would exceed its size)",
                    },
                    "cursor": {
                        "type": "string",
                        "maxLength": 2048,
                        "description": "next_cursor from the previous blocks page of the same region",
                    },
                },
                ["min", "max", "detail"],
            ),
            True,
            True,
        ),
        ToolSpec("build_prepare", "Prepare a build plan", BUILD_PREPARE, prepare_schema, True, True),
        ToolSpec(
            "build_apply",
            "Apply a build plan",
            BUILD_APPLY,
            _obj(
                {
                    "plan_id": _id("plan_id from build_prepare"),
                    "plan_hash": _id("plan_hash from build_prepare"),
                    "idempotency_key": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 128,
                        "description": "your key for this apply; repeat it unchanged on retries",
                    },
                },
                ["plan_id", "plan_hash", "idempotency_key"],
            ),
            False,
            True,
        ),
        ToolSpec(
            "operation_status",
            "Operation status",
            OPERATION_STATUS,
            _obj({"operation_id": _id("operation_id from build_apply")}, ["operation_id"]),
            True,
            True,
        ),
    ]
    specs += safe_write_specs()
    specs += schematic_specs()
    specs += camera_specs()
    from .oni_tools import oni_specs  # Oxygen Not Included (issue 18): only with an ONI endpoint
    specs += oni_specs()
    for s in specs:
        Draft202012Validator.check_schema(s.input_schema)
    return {s.name: s for s in specs}


def _path(err: Any) -> str:
    out = ""
    for p in err.absolute_path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(arguments)"


def check_limits(spec: ToolSpec, arguments: dict[str, Any]) -> None:
    """The structural limits (cheap, before schema validation): ``budget_exceeded`` naming one."""
    check_shape(arguments, f"arguments of {spec.name}", max_bytes=MAX_ARGUMENT_BYTES)
    recipe = arguments.get("recipe") if spec.name == "build_prepare" else None
    if recipe is not None:
        check_shape(recipe, "recipe")


def validate_arguments(spec: ToolSpec, arguments: dict[str, Any],
                       seconds: float | None = VALIDATION_SECONDS) -> None:
    """Check the structural limits, then raise invalid_request listing every schema violation
    (bounded) with its path; past ``seconds`` the validation stops with budget_exceeded."""
    check_limits(spec, arguments)
    token = _DEADLINE.set(None if seconds is None else time.monotonic() + seconds)
    try:
        found = list(spec.validator.iter_errors(arguments))
    except _ValidationTimeout:
        raise McbError(
            ErrorCode.BUDGET_EXCEEDED,
            f"validating the arguments of {spec.name} took over {seconds:g} s; send a smaller request "
            "(fewer operations or dependencies)",
            details={"limit": "validation_seconds", "max": seconds}) from None
    finally:
        _DEADLINE.reset(token)
    errors = sorted(found, key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if not errors:
        return
    problems = []
    for e in errors[:8]:
        # oneOf/anyOf failures: name the closest sub-error instead of the whole alternative list
        best = e
        if e.context:
            best = min(e.context, key=lambda c: (-len(c.absolute_path), str(c.message)))
        msg = best.message
        if len(msg) > 300:
            msg = msg[:300] + "…"
        problems.append({"path": _path(best), "message": msg})
    text = "; ".join(f"{p['path']}: {p['message']}" for p in problems)
    raise McbError(
        ErrorCode.INVALID_REQUEST,
        f"invalid arguments for {spec.name}: {text}",
        details={"problems": problems, "more": max(0, len(errors) - len(problems))},
    )
