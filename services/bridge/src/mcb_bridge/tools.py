"""The agent's tools: names, argument names, JSON Schemas and descriptions (the agent's manual).

Names and argument names are the user's contract (seed 000/003, ARCHITECTURE §4); keep them.
No tool takes ``project_id``, ``player_id`` or a world: the bridge adds them from its trusted
configuration, and every schema says ``additionalProperties: false`` so a model cannot smuggle
them in.

Arguments are validated here against the same schemas the client sees (JSON Schema 2020-12,
``jsonschema``); a failure is an ``invalid_request`` error listing each problem with its path.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import mcp_types as types
from jsonschema import Draft202012Validator
from mcb_common.errors import ErrorCode, McbError

log = logging.getLogger("mcb.bridge")

# Java edition's world border is ±29,999,984; heights are checked by the journal per world.
_COORD = {"type": "integer", "minimum": -30_000_000, "maximum": 30_000_000}
MAX_DEPENDENCIES = 4096
MAX_ID_LENGTH = 200


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
        return Draft202012Validator(self.input_schema)

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
detail="summary": palette of canonical block states with counts (most frequent first), \
non_air count, positions. Use it first for any size of area within the summary limit.
detail="blocks": the exact state of every position, one page of at most 4096 positions at a \
time. The answer has a `legend` (short symbol -> canonical state; "." is air, " " is a position \
not in this page) and `layers`: one entry per y, each with `rows`, one string per z \
(from z_min upward), one character per x (from x_min upward). If `next_cursor` is present the \
answer is partial: call again with the same min/max/detail and cursor=next_cursor.
detail="heightmap" is not available yet (invalid_request).
Keep regions small (e.g. 16x16x16 = 4096 positions per blocks page); use summary for large areas. \
""" + _ERRORS_NOTE

BUILD_PREPARE = """\
Compile a recipe into an immutable plan without changing the world. Returns plan_id, \
plan_hash, changed_blocks, already_blocks (already in the desired state), region, expires_at, \
materials, conflicts known now (with positions and the part they hit) and warnings.
recipe: {"version": 1, "operations": [...]} with operations box(min,max,block,hollow?), \
line(from,to,block), cylinder(center,radius,height,block,hollow?), \
repeat(count,offset,operations). Coordinates are absolute and inclusive; later operations win \
where they overlap. Example: {"version":1,"operations":[{"type":"box","min":{"x":0,"y":64,"z":0},\
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
                        "enum": ["summary", "blocks"],
                        "description": "summary: palette with counts; blocks: exact states (paged)",
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
    for s in specs:
        Draft202012Validator.check_schema(s.input_schema)
    return {s.name: s for s in specs}


def _path(err: Any) -> str:
    out = ""
    for p in err.absolute_path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(arguments)"


def validate_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> None:
    """Raise invalid_request listing every schema violation (bounded) with its path."""
    errors = sorted(spec.validator.iter_errors(arguments), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
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
