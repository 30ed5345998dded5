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
import difflib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import mcp_types as types
from jsonschema import Draft202012Validator, validators
from mcb_common.errors import ErrorCode, McbError
from mcb_common.recipe_schema import MAX_RECIPE_BYTES, RECIPE_SCHEMA, check_shape

from . import recipe_docs

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
_DeadlineValidator = validators.extend(
    Draft202012Validator,
    {k: _with_deadline(Draft202012Validator.VALIDATORS[k]) for k in ("$ref", "items", "properties")},
)


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
        name = ref[len("#/$defs/") :] if isinstance(ref, str) and ref.startswith("#/$defs/") else None
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


def _without_border_bounds(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_border_bounds(v) for v in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "object" and node.get("required") == []:
        node = {k: v for k, v in node.items() if k != "required"}
    border = node.get("minimum") == _COORD["minimum"] and node.get("maximum") == _COORD["maximum"]
    # string lengths are sanity limits a model never needs to plan around (refusals name them)
    text = node.get("type") == "string"
    # an enum says the type already
    typed_enum = isinstance(node.get("enum"), list) and node.get("type") in ("string", "integer")
    return {
        k: _without_border_bounds(v)
        for k, v in node.items()
        if not (border and k in ("minimum", "maximum"))
        and not (text and k in ("minLength", "maxLength"))
        and not (typed_enum and k == "type")
    }


def _vec3(description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "properties": {"x": _COORD, "y": _COORD, "z": _COORD},
        "required": ["x", "y", "z"],
        "additionalProperties": False,
    }


def _id(description: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH}
    return {**out, "description": description} if description else out


def recipe_schema() -> dict[str, Any]:
    """The recipe's JSON Schema (mcb_common, the one grammar), a copy the caller may change."""
    return copy.deepcopy(RECIPE_SCHEMA)


_VEC3_BODY = {
    "type": "object",
    "properties": {a: {"type": "integer"} for a in "xyz"},
    "required": ["x", "y", "z"],
    "additionalProperties": False,
}


def _shared_vec3(schema: dict[str, Any]) -> dict[str, Any]:
    """Every integer {x,y,z} object of a shown schema as one root ``$defs/vec3`` (when there
    are two or more): the same contract in fewer bytes."""
    found = 0

    def walk(node: Any, top: bool) -> Any:
        nonlocal found
        if isinstance(node, list):
            return [walk(v, False) for v in node]
        if not isinstance(node, dict):
            return node
        if not top and {k: v for k, v in node.items() if k != "description"} == _VEC3_BODY:
            found += 1
            # "inclusive lower/upper corner" is said by the tool's description (boxes [min, max])
            note = node.get("description", "")
            keep = note and not note.startswith("inclusive ")
            return {"$ref": "#/$defs/vec3", **({"description": note} if keep else {})}
        return {k: walk(v, False) for k, v in node.items()}

    out = walk(schema, True)
    if found < 2 or "$defs" in schema:
        return schema
    out["$defs"] = {"vec3": copy.deepcopy(_VEC3_BODY)}
    return out


def operation_types(recipe: dict[str, Any]) -> list[str]:
    """The recipe operation types a schema accepts (the ``type`` consts of its operation union)."""
    return [name for name, _ in recipe_docs.operation_defs(recipe)]


def short_recipe_schema(recipe: dict[str, Any]) -> dict[str, Any]:
    """The recipe as tools/list shows it: the top-level keys; every operation type with its
    arguments is in build_prepare's description (generated from the same schema, recipe_docs),
    so the types are not listed a second time here; the full schema is a resource. Arguments
    are still validated against the full schema (an unknown type names the valid ones)."""
    op: dict[str, Any] = {"type": "object", "properties": {"type": {"type": "string"}}, "required": ["type"]}
    return {
        "type": "object",
        # the keys and every operation's signature are in build_prepare's description
        "description": "full JSON Schema: resource mcb://guides/recipe-schema",
        "properties": {
            "version": {"const": 1},
            "params": {"type": "object"},
            "palette": {"type": "object"},
            "seed": {"type": "integer", "minimum": 0},
            "operations": {"type": "array", "minItems": 1, "items": op},
        },
        "required": ["version", "operations"],
    }


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
            if isinstance(ref, str) and (
                ref == "#" or (ref.startswith("#/") and not ref.startswith(("#/$defs/", "#/definitions/")))
            ):
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
    # What tools/list shows when it differs from the schema arguments are validated against
    # (build_prepare: a short recipe schema; the full one is the resource mcb://guides/recipe-schema).
    listed_schema: dict[str, Any] | None = None

    @cached_property
    def shown_schema(self) -> dict[str, Any]:
        """The schema tools/list shows: ``listed_schema`` or the validated one, without the
        world-border bounds of every coordinate (the journal names an out-of-world position)."""
        return _shared_vec3(_without_border_bounds(self.listed_schema or self.input_schema))

    @cached_property
    def validator(self) -> Draft202012Validator:
        return _DeadlineValidator(_inline_leaf_refs(self.input_schema))

    def to_mcp(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description.strip(),
            input_schema=self.shown_schema,
            # Only what differs from the MCP defaults (readOnly false, destructive true,
            # idempotent false); destructive/idempotent mean nothing when read-only.
            annotations=types.ToolAnnotations(
                read_only_hint=True if self.read_only else None,
                idempotent_hint=True if self.idempotent and not self.read_only else None,
            )
            if self.read_only or self.idempotent
            else None,  # none when all are the defaults
        )


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


# Said once, in project_context's description and the server's instructions (not per tool:
# tools/list stays lean, bench/tools_list_bytes.py).
ERRORS_SENTENCE = (
    'Errors of every tool come back as a tool error whose JSON is {"error": {code, message, retryable, '
    "hint}}; follow the hint."
)
_ERRORS_NOTE = ""

PROJECT_CONTEXT = (
    """\
Start here. Returns the project (id, name, build area as an inclusive box, its ground height), \
the world (id, epoch, version, min_y..max_y, loaded_area in blocks, paused?), limits, every tool \
(capabilities), the recipe operations, operations that need attention and recent ones. Call \
it first, after resync_required/version_mismatch, and when a build_apply answer \
was lost. Guides (MCP resources): mcb://guides/recipes, block-states, coordinates, examples, \
recipe-schema. """
    + ERRORS_SENTENCE
)

REGION_INSPECT = """\
Read blocks in an inclusive box [min, max] (y up). Never generates chunks: missing ones are \
listed as unknown_chunks.
detail="summary" (up to 2,000,000 positions; use it first): palette of states with counts \
(top 32), non_air, occupied (at most 32 boxes holding every non-air block), a coarse heightmap.
detail="blocks": exact states, pages of at most 4096 positions: `legend` (symbol -> state; "." \
air, " " not in this page), `layers` (one per y; `rows`: a string per z from z_from, a character \
per x from min.x). Then cursor=next_cursor.
detail="heightmap": highest non-air y per column every `step` blocks (automatic: at most \
32x32) as `rows` (per z) of numbers (per x); null = only air, "?" = chunk never generated.\
"""

# {operations}: every operation's signature, generated from the recipe schema (recipe_docs)
BUILD_PREPARE = """\
Compile a recipe into an immutable plan; writes nothing. Returns plan_id, plan_hash, \
changed_blocks, already_blocks, region, expires_at, materials, conflicts (positions, part hit), \
warnings and replaced (every non-air block it would replace by who placed it: player, \
environment, ours, unknown; counts, at most 20 positions each).
recipe {{version: 1, params?, palette?, seed?, operations}}, e.g. {{"version":1,"operations":[{{"type":\
"box","min":{{"x":0,"y":64,"z":0}},"max":{{"x":4,"y":70,"z":4}},"block":"stone_bricks","hollow":true}}]}}; \
operations: {operations}. What each does: mcb://guides/recipes; one example each: \
mcb://guides/examples. transform turns block states with it (rotate clockwise from above). \
replace.from: "*" (non-air), a block id or state, "!..." excludes. Expressions, "$palette" \
names, furniture (box.block_entity) and what is refused: mcb://guides/recipes. Absolute \
coordinates, inclusive boxes, later operations win.
dependencies: positions the build relies on; with state the block must hold it, else keep what \
it holds now; apply stops before writing if one changed.
A plan expires (expires_at): then prepare again.\
"""

BUILD_APPLY = (
    """\
Apply a prepared plan: plan_id and plan_hash exactly as build_prepare returned them, and a \
new idempotency_key you choose (e.g. "tower-roof-1").
Returns operation_id, its state and counters; writing goes on after the answer: poll \
operation_status until applied, conflict, cancelled or failed. With an MCP progress token it \
sends progress per batch and answers when the operation ends (at most ~50 s).
A block is written only if it still holds what the plan saw; one someone changed is a conflict, \
never overwritten.
Consent: a plan whose replaced lists player blocks (also imports, regenerations, undos) is \
refused (player_blocks_would_be_replaced, with positions) unless replace_player_blocks is true: \
set it only after the player agreed.
Same key, same call: the same operation (replayed=true), nothing written twice; answer lost: \
repeat with the SAME key. A new plan needs a new key. Errors: mcb://guides/recipes. """
    + _ERRORS_NOTE
)

OPERATION_STATUS = """\
State of a build_apply operation (queued, waiting_for_resume, applying, applied, conflict, \
cancelled, failed, recovery_required), counters, batches, samples of conflicts and written positions, \
any error (states: mcb://guides/recipes). Poll every second or two while queued/applying.\
"""


OPERATION_CANCEL = (
    """\
Stop an operation: no new batch starts after this call. Blocks already written stay written \
and journaled; the answer is shaped like operation_status's. """
    + _ERRORS_NOTE
)

OPERATION_UNDO_PREPARE = """\
Prepare the undo of a finished operation as an ordinary plan (apply with build_apply). Only \
blocks nothing touched since are restored; the others are listed as conflicts and left.\
"""

ROLLBACK_PREPARE = """\
Prepare a plan that restores a box to how it was before one player's (or environment cause's) \
changes since since_millis (apply with build_apply and the player's consent). Later changes by \
others are left and listed as conflicts. mcb://guides/history.\
"""

PART_DEFINE = (
    """\
Name the blocks a finished operation actually wrote as a part (e.g. "walls", "roof"). The \
part's mask is exactly those blocks; build_prepare with part_id then refuses writes outside \
that mask. A part extension needs a new part. """
    + _ERRORS_NOTE
)

PART_GET = (
    """\
A part's name, bounds, block count, protection, and how many of its blocks changed since it \
was defined by someone else (by source; complete=false when observation was interrupted). \
"""
    + _ERRORS_NOTE
)

REGION_CHANGES = (
    """\
What changed in a box since a cursor (empty: start now): the range's totals, then a page of \
events, people first; remaining > 0: call again with next_cursor. resync_required: re-read \
region_inspect, start again. Pages, filters, history: mcb://guides/history. """
    + _ERRORS_NOTE
)

REGION_HISTORY = """\
Who or what changed each block of a box and when, newest first: a player (name), the \
environment (cause) or an operation (id, who asked). More: cursor=next_cursor. \
mcb://guides/history says when to use it.\
"""


def safe_write_specs() -> list[ToolSpec]:
    op = _obj({"operation_id": _id("operation_id from build_apply")}, ["operation_id"])
    return [
        ToolSpec("operation_cancel", "Cancel an operation", OPERATION_CANCEL, op, False, True),
        ToolSpec("operation_undo_prepare", "Prepare an undo", OPERATION_UNDO_PREPARE, op, True, False),
        ToolSpec(
            "part_define",
            "Define a part",
            PART_DEFINE,
            _obj(
                {
                    "name": {"type": "string", "minLength": 1, "maxLength": 64, "description": "the part's name"},
                    "operation_id": _id("a finished operation whose written blocks form the part"),
                },
                ["name", "operation_id"],
            ),
            False,
            False,
        ),
        ToolSpec(
            "part_get",
            "Get a part",
            PART_GET,
            _obj({"part_id": _id("part_id from part_define")}, ["part_id"]),
            True,
            True,
        ),
        ToolSpec(
            "region_changes",
            "Changes in a region",
            REGION_CHANGES,
            _obj(
                {
                    "region": _obj(
                        {"min": _vec3("inclusive lower corner"), "max": _vec3("inclusive upper corner")}, ["min", "max"]
                    ),
                    "since_cursor": {"type": "string", "maxLength": 256},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                    "source": {"type": "string", "enum": ["player", "environment", "ours", "foreign"]},
                    "max_bytes": {"type": "integer", "minimum": 1024, "maximum": 32768},
                },
                ["region"],
            ),
            True,
            True,
        ),
        _who_spec(
            "rollback_prepare",
            "Prepare a rollback",
            ROLLBACK_PREPARE,
            {"since_millis": {"type": "integer", "minimum": 1}},
            ["since_millis"],
            False,
        ),
        _who_spec(
            "region_history",
            "History of a region",
            REGION_HISTORY,
            {"cursor": {"type": "string", "maxLength": 256}, "since_millis": {"type": "integer", "minimum": 0}},
            [],
            True,
        ),
    ]


def _who_spec(
    name: str, title: str, description: str, extra: dict[str, Any], required: list[str], idempotent: bool
) -> ToolSpec:
    """region_history and rollback_prepare (issue 32): a region, a player or a cause (the words:
    mcb://guides/history), and their own arguments. tools/list shows the region as one line (the
    arguments are validated against the full schema), which keeps the list within its budget."""
    props = {"player": {"type": "string", "maxLength": 64}, "cause": {"type": "string", "maxLength": 16}} | extra
    region = _obj({"min": _vec3("inclusive lower corner"), "max": _vec3("inclusive upper corner")}, ["min", "max"])
    listed = {"type": "object", "description": "{min:{x,y,z},max:{x,y,z}}, inclusive"}
    return ToolSpec(
        name,
        title,
        description,
        _obj({"region": region} | props, ["region", *required]),
        True,
        idempotent,
        _obj({"region": listed} | props, ["region", *required]),
    )


ASSET_LIST = """\
List the schematic library (.schem, and read-only vanilla structure .nbt), 20 per page \
(cursor=next_cursor); query: part of the asset id. Each asset: asset_id (for \
schematic_import_prepare and paste), sizes, block_count, offset (its corner relative to its \
anchor), format, read_only; an unusable file has valid=false and its reason.\
"""

SCHEMATIC_EXPORT = """\
Save an inclusive box [min, max] of the world, air included, as a new Sponge v3 .schem in the \
library (within the project area and the plan limit). origin (default min) is the anchor: \
importing at target T puts origin's block at T. name becomes the asset_id; an existing name is \
refused. Block entities are saved with their contents (chest items, sign text, banner patterns, \
heads); one holding data beyond that (loot table, enchanted item...) and entities are refused with \
their list.\
"""

SCHEMATIC_IMPORT_PREPARE = """\
Prepare placing a library schematic as an ordinary plan (apply with build_apply). target: where \
its anchor goes (stored offset honoured); rotation clockwise from above about target (block \
states turn). Its air replaces what stands there (see replaced). Block entities come with their \
contents (chests, signs, banners, heads, beds). Refused with reasons: entities, block entities \
holding what the tool cannot carry (unless allow_drop_block_entities: then left out and listed in \
left_out), biomes, unknown blocks, a newer Minecraft version, over the plan limit, outside the \
project area.\
"""


def schematic_specs() -> list[ToolSpec]:
    return [
        ToolSpec(
            "asset_list",
            "List schematics",
            ASSET_LIST,
            _obj(
                {
                    "query": {"type": "string", "maxLength": 64, "description": "part of the asset id"},
                    "cursor": {"type": "string", "maxLength": 64, "description": "next_cursor of the previous page"},
                },
                [],
            ),
            True,
            True,
        ),
        ToolSpec(
            "schematic_export",
            "Export a schematic",
            SCHEMATIC_EXPORT,
            _obj(
                {
                    "name": {
                        "type": "string",
                        "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$",
                        "description": "the new asset's name (= asset_id)",
                    },
                    "min": _vec3("inclusive lower corner"),
                    "max": _vec3("inclusive upper corner (>= min on every axis)"),
                    "origin": _vec3("the anchor (default: min)"),
                },
                ["name", "min", "max"],
            ),
            False,
            False,
        ),
        ToolSpec(
            "schematic_import_prepare",
            "Prepare a schematic import",
            SCHEMATIC_IMPORT_PREPARE,
            _obj(
                {
                    "asset_id": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 80,
                        "description": "asset_id from asset_list",
                    },
                    "target": _vec3("where the schematic's anchor goes"),
                    "rotation": {
                        "type": "integer",
                        "enum": [0, 90, 180, 270],
                        "description": "degrees clockwise seen from above (default 0)",
                    },
                    "allow_drop_block_entities": {
                        "type": "boolean",
                        "description": "leave out the block entities that cannot be imported (spawners, "
                        "loot tables...): listed in left_out",
                    },
                },
                ["asset_id", "target"],
            ),
            True,
            False,
        ),
    ]


CAMERA_LIST = """\
Saved cameras of the project (camera_id, name, pose) and the worker's state: worker_state ready \
/ busy / no_driver / link_lost, driver builtin or fabric (a real Minecraft client).\
"""

CAMERA_CAPTURE = """\
A real picture of the world plus metadata. Give one of: camera_id (saved); pose {x,y,z (feet), \
yaw, pitch, fov? (30-110, default 70)} (yaw/pitch: mcb://guides/coordinates); region alone: an \
automatic `view` (diagonal by default; views: mcb://guides/camera); or capture_id to poll. \
An eye inside a solid block is refused with suggestedPose. region with a pose limits what is drawn. \
width/height 16-3840 x 16-2160 (default 1280x720), format: any kind. after_operation_id: wait \
for it first. plan_id: the world after that plan, nothing written (mcb://guides/camera).
Answer: status "completed" with the image, or "pending" with capture_id (call again in a \
second). stale=true: blocks changed while drawing. capture_not_ready: scene not read in time; \
camera_unavailable: no driver or link down.\
"""


CAMERA_SAVE = """\
Save a camera of the project (create or replace by camera_id) for camera_capture {camera_id}: \
its pose with width/height (e.g. the pose in the metadata of a capture you liked). Returns it.\
"""

CAPTURE_FORMATS = ("png", "jpeg")


def camera_specs() -> list[ToolSpec]:
    num = {"type": "number", "minimum": -30_000_000, "maximum": 30_000_000}
    pose: dict[str, Any] = {
        "type": "object",
        "description": "feet position, look direction",
        "properties": {
            "x": num,
            "y": {"type": "number", "minimum": -2048, "maximum": 2048},
            "z": num,
            "yaw": {"type": "number", "minimum": -360, "maximum": 360},
            "pitch": {"type": "number", "minimum": -90, "maximum": 90},
            # the Minecraft client's FOV option range (camera worker MIN_FOV/MAX_FOV; tests/cross_package/test_fov_rules.py)
            "fov": {"type": "number", "minimum": 30, "maximum": 110},
        },
        "required": ["x", "y", "z", "yaw", "pitch"],
        "additionalProperties": False,
    }
    region = _obj({"min": _vec3("inclusive lower corner"), "max": _vec3("inclusive upper corner")}, ["min", "max"])
    size = {
        "width": {"type": "integer", "minimum": 16, "maximum": 3840},
        "height": {"type": "integer", "minimum": 16, "maximum": 2160},
    }
    capture = _obj(
        {
            "camera_id": _id(),
            "pose": pose,
            "region": region,
            "view": {"type": "string", "enum": ["entrance", "opposite", "diagonal", "top", "side"]},
            **size,
            "format": {"type": "string", "enum": list(CAPTURE_FORMATS)},
            "after_operation_id": _id(),
            "plan_id": _id(),
            "compare": {"type": "boolean", "description": "with plan_id: before|after"},
            "capture_id": _id(),
        },
        [],
    )
    save = _obj(
        {
            "camera_id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"},
            "name": {"type": "string", "maxLength": 64},
            # with width/height (the picture size): a capture's metadata pose as it is
            "pose": {**pose, "properties": {**pose["properties"], **size}},
        },
        ["camera_id", "pose"],
    )
    return [
        ToolSpec("camera_list", "List cameras", CAMERA_LIST, _obj({}, []), True, True),
        # shown without the numeric bounds of pose and size (the descriptions state the
        # conventions; the worker names a refused value); validated with them
        ToolSpec(
            "camera_capture",
            "Capture a picture",
            CAMERA_CAPTURE,
            capture,
            True,
            False,
            _without_bounds(capture, ("pose", "width", "height")),
        ),
        ToolSpec("camera_save", "Save a camera", CAMERA_SAVE, save, False, True, _without_bounds(save, ("pose",))),
    ]


def _without_bounds(schema: dict[str, Any], props: tuple[str, ...]) -> dict[str, Any]:
    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in ("minimum", "maximum")}
        return node

    out = copy.deepcopy(schema)
    for p in props:
        out["properties"][p] = strip(out["properties"][p])
    return out


def build_specs(recipe: dict[str, Any] | None = None) -> dict[str, ToolSpec]:
    recipe = recipe if recipe is not None else recipe_schema()
    dependency = {
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "x": _COORD,
                    "y": _COORD,
                    "z": _COORD,
                    "state": {
                        "type": "string",
                        "maxLength": 256,
                        "description": "required state; omit to require the current one",
                    },
                },
                "required": ["x", "y", "z"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "pos": _vec3("the position"),
                    "state": {
                        "type": "string",
                        "maxLength": 256,
                        "description": "required state; omit to require the current one",
                    },
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
                "regenerate this part by three-way merge: manual edits survive where the design is "
                "unchanged; changed by both = conflict"
            ),
        },
        ["recipe"],
    )
    listed = copy.deepcopy(prepare_schema)
    listed["properties"]["recipe"] = short_recipe_schema(recipe)
    listed["properties"]["dependencies"] = {
        "type": "array",
        "maxItems": MAX_DEPENDENCIES,
        "items": {"type": "object", "description": "{x,y,z,state?} or {pos:{x,y,z},state?}"},
    }
    _embed(prepare_schema, "recipe", recipe)
    specs = [
        ToolSpec(
            "project_context",
            "Project context",
            PROJECT_CONTEXT,
            _obj(
                {
                    "include_old_worlds": {
                        "type": "boolean",
                        "description": "also earlier worlds' operations (marked old_world)",
                    }
                },
                [],
            ),
            True,
            True,
        ),
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
        ToolSpec(
            "build_prepare",
            "Prepare a build plan",
            BUILD_PREPARE.format(operations=recipe_docs.signatures(recipe)),
            prepare_schema,
            True,
            True,
            listed,
        ),
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
                    "replace_player_blocks": {
                        "type": "boolean",
                        "description": "consent to replace the player blocks listed in replaced (ask first)",
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
        if s.listed_schema is not None:
            Draft202012Validator.check_schema(s.listed_schema)
    return {s.name: s for s in specs}


def _path(err: Any) -> str:
    out = ""
    for p in err.absolute_path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(arguments)"


def _type_refusals(err: Any) -> list[Any]:
    """Sub-errors of a oneOf where an alternative refused the instance's ``type`` const."""
    if err.validator != "oneOf" or not err.context:
        return []
    return [c for c in err.context if c.validator == "const" and list(c.relative_path) == ["type"]]


def _unknown_discriminator(err: Any) -> dict[str, str] | None:
    """A oneOf whose every alternative refused its ``type`` const (e.g. an unknown recipe
    operation): one problem listing the valid types, not "'arch' was expected"."""
    consts = _type_refusals(err)
    if not consts or len({c.relative_schema_path[0] for c in consts}) < len(err.validator_value or ()):
        return None
    got = err.instance.get("type") if isinstance(err.instance, dict) else None
    valid = [str(c.validator_value) for c in consts]
    near = difflib.get_close_matches(str(got), valid, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return {"path": _path(err) + ".type", "message": f"unknown type {got!r}{hint}; valid types: {', '.join(valid)}"}


def check_limits(spec: ToolSpec, arguments: dict[str, Any]) -> None:
    """The structural limits (cheap, before schema validation): ``budget_exceeded`` naming one."""
    check_shape(arguments, f"arguments of {spec.name}", max_bytes=MAX_ARGUMENT_BYTES)
    recipe = arguments.get("recipe") if spec.name == "build_prepare" else None
    if recipe is not None:
        check_shape(recipe, "recipe")


def validate_arguments(spec: ToolSpec, arguments: dict[str, Any], seconds: float | None = VALIDATION_SECONDS) -> None:
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
            details={"limit": "validation_seconds", "max": seconds},
        ) from None
    finally:
        _DEADLINE.reset(token)
    errors = sorted(found, key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if not errors:
        return
    problems = []
    for e in errors[:8]:
        unknown = _unknown_discriminator(e)
        if unknown is not None:
            problems.append(unknown)
            continue
        # oneOf/anyOf failures: name the closest sub-error instead of the whole alternative list
        best = e
        if e.context:
            # a known `type`: only the errors of the alternative of that type
            refused = {c.relative_schema_path[0] for c in _type_refusals(e)}
            pool = [c for c in e.context if c.relative_schema_path[0] not in refused] or e.context
            best = min(pool, key=lambda c: (-len(c.absolute_path), str(c.message)))
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
