"""What the agent can read besides the tools: MCP resources (guides) and prompts (common jobs).

The guides are Markdown files in this package (``guides/*.md``, shipped with the wheel, so the
container image has them too); the operations table of ``recipes`` and the example per operation
of ``examples`` are generated from the recipe schema when read (``recipe_docs``); ``mcb://guides/recipe-schema`` is the full recipe JSON Schema
(``tools/list`` carries a short form of it); ``mcb://project/context`` is the live answer of
``project_context``; ``mcb://guides/oni`` (the oni_* tools in full) is listed, like those tools,
only when an ONI endpoint is configured. Prompts are text templates that name the tools and resources to use; their
arguments are strings (MCP prompts take only strings).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources as importlib_resources
from typing import Any

import mcp_types as types
from mcb_common.errors import ErrorCode, McbError

from . import recipe_docs
from .tools import recipe_schema

GUIDE_PREFIX = "mcb://guides/"
PROJECT_CONTEXT_URI = "mcb://project/context"
RECIPE_SCHEMA_URI = GUIDE_PREFIX + "recipe-schema"


@dataclass(frozen=True)
class Guide:
    name: str
    title: str
    description: str
    file: str = ""  # guides/<file>; empty for generated resources

    @property
    def uri(self) -> str:
        return GUIDE_PREFIX + self.name

    @property
    def mime_type(self) -> str:
        return "text/markdown" if self.file else "application/schema+json"


GUIDES = [
    Guide(
        "recipes",
        "Recipe guide",
        "How to write a recipe for build_prepare: operations, expressions, palettes, the workflow.",
        "recipes.md",
    ),
    Guide(
        "block-states",
        "Block states",
        "How block states are written; facing conventions (a door placed "
        "from outside faces inward), stairs, connections of panes/fences, two-part blocks.",
        "block-states.md",
    ),
    Guide(
        "coordinates",
        "Coordinates",
        "Axes, inclusive boxes, heights, ground, chunks, camera yaw/pitch.",
        "coordinates.md",
    ),
    Guide(
        "examples",
        "Worked examples",
        "Recipes that build: a house with door and windows, a stair roof, "
        "windows by rotation, a wall with arches, and one example of every operation.",
        "examples.md",
    ),
    Guide(
        "camera",
        "Pictures and previews",
        "camera_capture: when to take a picture, plan previews before build_apply (plan_id, compare), their refusals.",
        "camera.md",
    ),
    Guide(
        "history",
        "Changes and history",
        "region_changes and region_history: what changed since a "
        "cursor, who or what changed each block (player, environment cause, operation) and when.",
        "history.md",
    ),
    Guide(
        "recipe-schema",
        "Recipe JSON Schema",
        "The full JSON Schema (draft 2020-12) of build_prepare's recipe argument.",
    ),
    # listed (and readable) only with an ONI endpoint, like the oni_* tools (issue 18)
    Guide(
        "oni",
        "Oxygen Not Included",
        "The oni_* tools in full: cells, every state and its answer, "
        "actions and their arguments, blueprints step by step, a play loop, errors.",
        "oni.md",
    ),
]
ONI_GUIDES = {"oni"}


def _guides() -> list[Guide]:
    """The guides this bridge serves: the ONI guide only when an ONI endpoint is configured."""
    from .oni_tools import oni_specs

    oni = bool(oni_specs())
    return [g for g in GUIDES if oni or g.name not in ONI_GUIDES]


@cache
def guide_text(name: str) -> str:
    for g in GUIDES:
        if g.name == name:
            if not g.file:
                return json.dumps(recipe_schema(), ensure_ascii=False, indent=1)
            text = (importlib_resources.files(__package__) / "guides" / g.file).read_text(encoding="utf-8")
            # the operations table and the example per operation come from the recipe schema
            return recipe_docs.fill(text, recipe_schema())
    raise KeyError(name)


def list_resources() -> list[types.Resource]:
    out = [
        types.Resource(
            uri=g.uri,
            name=g.name,
            title=g.title,
            description=g.description,
            mime_type=g.mime_type,
            size=len(guide_text(g.name).encode()),
        )
        for g in _guides()
    ]
    out.append(
        types.Resource(
            uri=PROJECT_CONTEXT_URI,
            name="project-context",
            title="Project context",
            description="The project you build for, live: the same JSON as the project_context tool.",
            mime_type="application/json",
        )
    )
    return out


async def read_resource(uri: str, project_context: Callable[[], Awaitable[dict[str, Any]]]) -> types.ReadResourceResult:
    """A resource's contents; an unknown URI is ``not_found`` naming the known ones."""
    if uri == PROJECT_CONTEXT_URI:
        text = json.dumps(await project_context(), ensure_ascii=False, separators=(",", ":"))
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )
    for g in _guides():
        if g.uri == uri:
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type=g.mime_type, text=guide_text(g.name))]
            )
    known = ", ".join(r.uri for r in list_resources())
    raise McbError(ErrorCode.NOT_FOUND, f"no resource {uri!r}; resources: {known}", details={"uri": uri})


# ---------------------------------------------------------------- prompts


@dataclass(frozen=True)
class PromptSpec:
    name: str
    title: str
    description: str
    arguments: tuple[tuple[str, str, bool], ...]  # (name, description, required)
    template: str


PROMPTS = [
    PromptSpec(
        "survey_area",
        "Survey an area",
        "Look at an area before building: ground height, what stands there, what is free.",
        (
            ("min", "lower corner 'x,y,z' (default: the project's build area)", False),
            ("max", "upper corner 'x,y,z'", False),
        ),
        "Survey the area {area} in the Minecraft world before we build there.\n"
        "1. Call project_context (build area, world height limits, limits of a plan).\n"
        '2. Call region_inspect with detail "heightmap" over the area to find the ground, then '
        'detail "summary" to see which blocks stand there (palette, occupied boxes).\n'
        '3. For anything built, region_inspect detail "blocks" on small boxes (≤ 4096 positions).\n'
        '4. Optionally camera_capture {{"region": …, "view": "diagonal"}} for one picture.\n'
        "Report: the ground height range, what is there (with coordinates), and free space for a "
        "build. Write nothing. Conventions: mcb://guides/coordinates.",
    ),
    PromptSpec(
        "build_house",
        "Build a house",
        "Plan, check and build a small house with a door, windows and a roof, safely.",
        (
            ("position", "the house's north-west floor corner 'x,y,z' (default: find flat ground)", False),
            ("size", "'width x depth' in blocks, e.g. '9x7'", False),
            ("style", "materials or style, e.g. 'spruce and stone'", False),
        ),
        "Build a house at {position}, size {size}, style {style}.\n"
        "Read mcb://guides/examples (house and roof) and mcb://guides/block-states (a door placed from "
        "outside faces inward; stairs face the way you walk up; pane connections).\n"
        "1. project_context; region_inspect heightmap around the site: build on flat ground inside the "
        "build area, first block one above the ground.\n"
        "2. build_prepare the walls, floor, door and windows as one recipe; check changed_blocks, "
        "materials, conflicts and warnings; then build_apply with a new idempotency_key and poll "
        'operation_status until applied. part_define it as "house".\n'
        '3. The roof as a second recipe, its own operation and part "roof".\n'
        '4. camera_capture {{"region": <the house\'s box>, "view": "entrance"}} to check the front.\n'
        "Never overwrite what a person built: conflicts are reported, not forced.",
    ),
    PromptSpec(
        "furnish_room",
        "Furnish a room",
        "Put furniture into an existing room without breaking its walls.",
        (
            ("min", "the room's inner lower corner 'x,y,z'", True),
            ("max", "the room's inner upper corner 'x,y,z'", True),
            ("style", "e.g. 'cosy bedroom', 'library'", False),
        ),
        "Furnish the room with inner box {min} .. {max} as: {style}.\n"
        '1. region_inspect detail "blocks" over the room (and its walls, one block larger) to see the '
        "floor, walls, door and windows.\n"
        "2. Plan furniture from ordinary blocks (stairs and slabs as seats and tables, trapdoors, "
        "carpets, lanterns, beds with both halves, bookshelves); keep the door's swing and the path "
        "from it free. Facing and two-part rules: mcb://guides/block-states.\n"
        "3. build_prepare with dependencies on the walls you rely on; a chest, barrel, sign, banner or "
        "head may carry its contents (a box's block_entity field: mcb://guides/recipes); spawners and command "
        "blocks are refused — the error says which. Read warnings; build_apply, poll operation_status.\n"
        "4. Check with region_inspect or one camera_capture.",
    ),
    PromptSpec(
        "undo_safely",
        "Undo safely",
        "Undo an operation of ours without destroying anything a person changed since.",
        (("operation_id", "the operation to undo (from build_apply / project_context.recent_operations)", True),),
        "Undo operation {operation_id} safely.\n"
        '1. operation_status {{"operation_id": "{operation_id}"}}: it must be finished (applied, '
        "conflict, cancelled or failed). If it is still applying, operation_cancel first.\n"
        '2. operation_undo_prepare {{"operation_id": "{operation_id}"}}: only blocks it wrote and '
        "nobody touched since are restored; the others are listed as conflicts and stay as they are.\n"
        "3. Tell the user what will be restored (changed_blocks) and which blocks are kept because a "
        "person or something else changed them; only then build_apply with a new idempotency_key.\n"
        "4. Poll operation_status until applied and report what remains.",
    ),
    PromptSpec(
        "rework_part",
        "Rework a part",
        "Rebuild a defined part in another main material, keeping what a person changed in it.",
        (
            ("part", "the part's name (part_define); completion lists the project's parts", True),
            ("block", "the new main block id, e.g. 'minecraft:spruce_planks'; completion lists the registry", True),
            ("camera", "a saved camera to check the result from (camera_list); default: a view of the part", False),
        ),
        "Rework the part {part} in {block}.\n"
        "1. Read mcb://parts/{part} (or part_get with its part_id): its operation, bounds and the changes "
        "others made in it since; mcb://blocks/{block} lists the block's properties.\n"
        '2. region_inspect detail "blocks" over its bounds; write a recipe of the same shape in {block} '
        "(keep doors, windows and stairs as they are).\n"
        "3. build_prepare with that recipe and regenerate_part_id set to the part's part_id: blocks a person "
        "changed are kept and listed as conflicts. Tell the user what changes; then build_apply with a new "
        "idempotency_key and follow operation_status (or subscribe to mcb://operations/{{operation_id}}).\n"
        "4. camera_capture {camera} to check the result.",
    ),
]


def list_prompts() -> list[types.Prompt]:
    return [
        types.Prompt(
            name=p.name,
            title=p.title,
            description=p.description,
            arguments=[types.PromptArgument(name=n, description=d, required=r) for n, d, r in p.arguments],
        )
        for p in PROMPTS
    ]


def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    spec = next((p for p in PROMPTS if p.name == name), None)
    if spec is None:
        raise McbError(ErrorCode.NOT_FOUND, f"no prompt {name!r}; prompts: {', '.join(p.name for p in PROMPTS)}")
    args = {k: str(v) for k, v in (arguments or {}).items()}
    known = {n for n, _, _ in spec.arguments}
    unknown = sorted(set(args) - known)
    missing = [n for n, _, r in spec.arguments if r and not args.get(n)]
    if unknown or missing:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"prompt {name}: "
            + "; ".join(
                ([f"unknown arguments {unknown}"] if unknown else []) + ([f"missing {missing}"] if missing else [])
            )
            + f"; arguments: {', '.join(sorted(known))}",
        )
    values = {n: args.get(n) or "" for n in known}
    if spec.name == "survey_area":
        values["area"] = (
            f"{values['min']} .. {values['max']}"
            if values["min"] and values["max"]
            else "of the project's build area (project_context.project.area)"
        )
    if spec.name == "rework_part":
        values["camera"] = (
            f'{{"camera_id": "{values["camera"]}"}}'
            if values["camera"]
            else '{"region": <the part\'s bounds>, "view": "diagonal"}'
        )
    defaults = {
        "position": "a flat spot inside the build area",
        "size": "about 9x7",
        "style": "your choice, fitting the surroundings",
    }
    for k, v in defaults.items():
        if k in values and not values[k]:
            values[k] = v
    text = spec.template.format(**values)
    return types.GetPromptResult(
        description=spec.description, messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))]
    )
