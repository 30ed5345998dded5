"""Resource templates and ``completion/complete`` (issue 31 item 12), from the real data.

Templates (``resources/templates/list``; read with ``resources/read``):

* ``mcb://operations/{operation_id}`` — an operation's status (``operation_status``'s JSON);
  subscribable: ``notifications/resources/updated`` when its state, batches or blocks change;
* ``mcb://parts/{part}`` — a part by name or id (``part_get``'s JSON);
* ``mcb://cameras/{camera_id}`` — a saved camera (its ``camera_list`` entry);
* ``mcb://blocks/{block_id}`` — a block of the world's registry: its properties, their values and
  its default state.

Completions, for the templates' variables and the prompts' arguments of the same kind
(``operation_id``, ``part``, ``camera``/``camera_id``, ``block``/``block_id``): operation ids from the
journal (the project's operations, newest first), part names from the journal's parts of the
project, camera ids from the camera worker's list, block ids from the block registry
(``mcb_common.registry``, the world's Minecraft version). Matching: the typed text is a
case-insensitive prefix (of the id, or of a block's name without ``minecraft:``, or of a camera's
name), then anything containing it; at most 100 values (the spec's cap) with ``total`` and
``has_more``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import mcp_types as types
from mcb_common.errors import ErrorCode, McbError
from mcb_common.registry import Registry

from . import render

MAX_VALUES = 100  # completion/complete: "MUST NOT exceed 100 items"

TEMPLATES = [
    types.ResourceTemplate(
        uri_template="mcb://operations/{operation_id}",
        name="operation",
        title="Operation status",
        description="An operation's status, the same JSON as operation_status; subscribe to "
        "be told when its state, batches or blocks change.",
        mime_type="application/json",
    ),
    types.ResourceTemplate(
        uri_template="mcb://parts/{part}",
        name="part",
        title="Part",
        description="A part of the project by name or part_id, the same JSON as part_get.",
        mime_type="application/json",
    ),
    types.ResourceTemplate(
        uri_template="mcb://cameras/{camera_id}",
        name="camera",
        title="Saved camera",
        description="A saved camera (its camera_list entry): pose and picture size.",
        mime_type="application/json",
    ),
    types.ResourceTemplate(
        uri_template="mcb://blocks/{block_id}",
        name="block",
        title="Block",
        description="A block of the world's registry: its properties with their values and its default state.",
        mime_type="application/json",
    ),
]
_PREFIXES = {t.uri_template.split("{")[0]: t.uri_template for t in TEMPLATES}
# argument / template variable -> kind of value
KINDS = {
    "operation_id": "operation",
    "part": "part",
    "part_id": "part",
    "camera": "camera",
    "camera_id": "camera",
    "block": "block",
    "block_id": "block",
}


def template_for(uri: str) -> tuple[str, str] | None:
    """``(template, value)`` when ``uri`` is one of the templates' URIs, else None."""
    for prefix, template in _PREFIXES.items():
        if uri.startswith(prefix) and len(uri) > len(prefix) and "/" not in uri[len(prefix) :]:
            return template, uri[len(prefix) :]
    return None


def rank(values: Iterable[str], typed: str, aliases: dict[str, list[str]] | None = None) -> list[str]:
    """Prefix matches (of the value or one of its aliases) first, then values containing the text."""
    needle = typed.lower()
    first: list[str] = []
    then: list[str] = []
    for v in values:
        keys = [v.lower(), *(a.lower() for a in (aliases or {}).get(v, []))]
        if any(k.startswith(needle) for k in keys):
            first.append(v)
        elif any(needle in k for k in keys):
            then.append(v)
    return sorted(set(first)) + sorted(set(then) - set(first))


def completion(values: list[str]) -> types.CompleteResult:
    return types.CompleteResult(
        completion=types.Completion(values=values[:MAX_VALUES], total=len(values), has_more=len(values) > MAX_VALUES)
    )


class Catalog:
    """The templates' reads and the completions, bound to the bridge's journal and camera clients."""

    def __init__(
        self, journal: Any, cameras: Callable[[], Awaitable[Any]], registry: Callable[[], Registry] = Registry.load
    ) -> None:
        self.journal = journal
        self._cameras = cameras
        self._registry = registry

    # ---- completion ----

    async def complete(self, params: types.CompleteRequestParams) -> types.CompleteResult:
        ref, arg = params.ref, params.argument
        if isinstance(ref, types.PromptReference):
            from .resources import PROMPTS

            spec = next((p for p in PROMPTS if p.name == ref.name), None)
            if spec is None:
                raise McbError(
                    ErrorCode.NOT_FOUND, f"no prompt {ref.name!r}; prompts: {', '.join(p.name for p in PROMPTS)}"
                )
            names = [n for n, _, _ in spec.arguments]
            if arg.name not in names:
                raise McbError(
                    ErrorCode.INVALID_REQUEST,
                    f"prompt {ref.name} has no argument {arg.name!r}; arguments: {', '.join(names)}",
                )
        else:
            template = ref.uri
            if template not in _PREFIXES.values():
                raise McbError(
                    ErrorCode.NOT_FOUND,
                    f"no resource template {template!r}; templates: {', '.join(_PREFIXES.values())}",
                )
            if "{" + arg.name + "}" not in template:
                raise McbError(ErrorCode.INVALID_REQUEST, f"{template} has no variable {arg.name!r}")
        kind = KINDS.get(arg.name)
        if kind is None:  # free text (sizes, styles, coordinates): nothing to offer
            return completion([])
        return completion(await self.values(kind, arg.value))

    async def values(self, kind: str, typed: str) -> list[str]:
        if kind == "block":
            reg = self._registry()
            return rank(reg.names(), typed, {n: [n.split(":", 1)[1]] for n in reg.names()})
        if kind == "camera":
            cams = (await self._cameras()).cameras
            return rank([c.camera_id for c in cams], typed, {c.camera_id: [c.name] for c in cams if c.name})
        index = await self.journal.project_index()
        if kind == "part":
            return rank([p.name for p in index.parts], typed)
        ops = [o.operation_id for o in index.operations]  # newest first: keep that order among equals
        ranked = rank(ops, typed)
        return sorted(ranked, key=lambda v: (not v.lower().startswith(typed.lower()), ops.index(v)))

    # ---- reads ----

    async def read(self, uri: str) -> types.ReadResourceResult | None:
        """The resource behind a template URI; None when ``uri`` is no template's."""
        found = template_for(uri)
        if found is None:
            return None
        template, value = found
        if template.startswith("mcb://operations/"):
            data = render.operation_report(await self.journal.operation_status(value))
        elif template.startswith("mcb://parts/"):
            data = render.part(await self.journal.part_get(await self._part_id(value)))
        elif template.startswith("mcb://cameras/"):
            data = await self._camera(value)
        else:
            data = self._block(value)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=uri,
                    mime_type="application/json",
                    text=json.dumps(data, ensure_ascii=False, separators=(",", ":")),
                )
            ]
        )

    async def _part_id(self, name_or_id: str) -> str:
        parts = (await self.journal.project_index(limit=1)).parts
        for p in parts:
            if name_or_id in (p.name, p.part_id):
                return p.part_id
        raise McbError(
            ErrorCode.NOT_FOUND,
            f"no part {name_or_id!r} in this project; parts: "
            f"{', '.join(p.name for p in parts) or '(none yet: part_define names one)'}",
            details={"part": name_or_id},
        )

    async def _camera(self, camera_id: str) -> dict[str, Any]:
        cams = (await self._cameras()).cameras
        for c in cams:
            if c.camera_id == camera_id:
                return render.camera_info(c)
        raise McbError(
            ErrorCode.NOT_FOUND,
            f"no saved camera {camera_id!r}; cameras: "
            f"{', '.join(c.camera_id for c in cams) or '(none yet: camera_save makes one)'}",
            details={"camera_id": camera_id},
        )

    def _block(self, block_id: str) -> dict[str, Any]:
        reg = self._registry()
        name = block_id if ":" in block_id else f"minecraft:{block_id}"
        bt = reg.blocks.get(name)
        if bt is None:
            reg.canonical(name)  # raises unsupported_block with the nearest names
            raise AssertionError(name)  # pragma: no cover - canonical accepted an unknown name
        return {
            "block_id": bt.name,
            "minecraft_version": reg.version,
            "properties": {k: list(v) for k, v in bt.properties},
            "default_state": str(bt.default_state),
        }
