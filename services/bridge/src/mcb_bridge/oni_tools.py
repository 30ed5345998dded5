"""Oxygen Not Included tools (issue 18): the same agents play ONI through the agent mod's API.

Three tools, listed only when an ONI endpoint is configured (so a Minecraft-only bridge shows
nothing more): ``MCB_ONI_URL`` (e.g. http://127.0.0.1:23876), else the runtime config.json's
``"oni": {"modHost", "modPort", "timeout"}`` (seed 004's config.json keys).

Conventions as the Minecraft tools: snake_case arguments validated by JSON Schema; the mod's
``{"error": type, "details"}`` mapped once here to McbError codes (so the model gets code,
message, retryable, hint); long work is stepwise with a ``phase`` and ``next`` (blueprint apply,
like build_apply + operation_status). The HTTP calls run in a worker thread.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any

from mcb_common.errors import ErrorCode, McbError
from oni_agent import analysis, blueprints
from oni_agent.client import ACTIONS, ModClient, ModError
from oni_agent.config import ConfigError, OniConfig

from .render import snake_keys
from .tools import ToolSpec

LISTS = ("resources", "duplicants", "buildings", "geysers", "alert", "critters", "actions", "schedules", "reports")
STATES = ("game", "research", *LISTS, "map", "analysis")
PAGE = 50
MAP_LEGEND = {
    "rows": "rows[i] is row y+i (y grows upward), character j is cell x+j",
    "#": "diggable solid",
    "N": "not diggable (neutronium)",
    "~": "liquid",
    ".": "gas or vacuum",
}

_MOD_ERRORS = {
    "invalid_request": ErrorCode.INVALID_REQUEST,
    "unknown_building": ErrorCode.INVALID_REQUEST,
    "unknown_tech": ErrorCode.INVALID_REQUEST,
    "not_implemented": ErrorCode.INVALID_REQUEST,
    "not_found": ErrorCode.NOT_FOUND,
    "queue_full": ErrorCode.BUSY,
    "not_ready": ErrorCode.UNAVAILABLE,
    "unreachable": ErrorCode.UNAVAILABLE,
    "invalid_response": ErrorCode.UNAVAILABLE,
    "internal_error": ErrorCode.INTERNAL,
    "busy": ErrorCode.BUSY,
    "request_timeout": ErrorCode.UNAVAILABLE,
    "forbidden": ErrorCode.INVALID_REQUEST,
    "unknown_world": ErrorCode.INVALID_REQUEST,
}


def oni_config() -> OniConfig | None:
    """The configured ONI endpoint, or None (then no ONI tools are listed)."""
    url = os.environ.get("MCB_ONI_URL", "").strip()
    if url:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ConfigError(f"MCB_ONI_URL must look like http://127.0.0.1:23876, not {url!r}")
        return OniConfig.from_dict({"modHost": parts.hostname, "modPort": parts.port or 23876}, "MCB_ONI_URL")
    try:
        from mcb_rpc.settings import Settings

        cfg = Settings.from_env().load_config()
    except (OSError, ValueError):
        return None
    oni = cfg.get("oni") if isinstance(cfg, dict) else None
    return OniConfig.from_dict(oni, "config.json oni") if oni is not None else None


def _configured() -> OniConfig | None:
    try:
        return oni_config()
    except ConfigError:
        return None  # listed nowhere; `mcb doctor`-style checks can call oni_config() to see why


_CELL = {"type": "integer", "minimum": 0}
GUIDE_URI = "mcb://guides/oni"

# Short texts: tools/list stays within its budget (issue 19, bench/tools_list_bytes.py --oni);
# the long form (answers, legends, the loop, errors) is the resource mcb://guides/oni.
ONI_STATE = (
    """\
Read the ONI colony (what, world_id?). Lists are pages: offset, limit <= 200, \
next_offset. map: x,y,width,height <= 64. analysis: findings. Cells: y up, x,y = \
bottom-left. Guide: """
    + GUIDE_URI
)

ONI_ACTION = (
    """\
Queue one ONI action (-> <action>_queued, action_id; outcome: what=actions). Arguments of \
each action (orders: priority 1-9, world_id): """
    + GUIDE_URI
)

ONI_BLUEPRINT = """\
ONI rooms. list; plan name,x,y (row below solid): problems, actions, queues nothing; apply: one \
step per call, repeat until phase is done."""


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def _unbounded(node: Any) -> Any:
    """The listed form of a schema: without numeric/length bounds (enums kept; the descriptions
    and the guide state the ranges, and arguments are validated against the bounded schema)."""
    if isinstance(node, list):
        return [_unbounded(v) for v in node]
    if not isinstance(node, dict):
        return node
    drop = ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")
    return {k: _unbounded(v) for k, v in node.items() if k not in drop}


def _spec(name: str, title: str, description: str, schema: dict[str, Any], read_only: bool) -> ToolSpec:
    return ToolSpec(name, title, description, schema, read_only, read_only, listed_schema=_unbounded(schema))


def oni_specs() -> list[ToolSpec]:
    if _configured() is None:
        return []
    side64 = {"type": "integer", "minimum": 1, "maximum": 64}
    side128 = {"type": "integer", "minimum": 1, "maximum": 128}
    text = {"type": "string", "minLength": 1, "maxLength": 64}
    world = {"type": "integer", "minimum": 0, "maximum": 65535}
    cell = {"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "integer", "minimum": 0, "maximum": 4095}}
    return [
        _spec(
            "oni_state",
            "ONI colony state",
            ONI_STATE,
            _obj(
                {
                    "what": {"enum": list(STATES)},
                    "offset": {"type": "integer", "minimum": 0},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 200},
                    "x": _CELL,
                    "y": _CELL,
                    "width": side64,
                    "height": side64,
                    "world_id": world,
                },
                ["what"],
            ),
            True,
        ),
        _spec(
            "oni_action",
            "ONI action",
            ONI_ACTION,
            _obj(
                {
                    "action": {"enum": list(ACTIONS)},
                    "x": _CELL,
                    "y": _CELL,
                    "width": side128,
                    "height": side128,
                    "priority": {"type": "integer", "minimum": 1, "maximum": 9},
                    "building_id": text,
                    "rotation": {"enum": [0, 90, 180, 270]},
                    "flip": {"type": "boolean"},
                    "kind": {"enum": ["wire", "gas", "liquid", "logic"]},
                    "path": {"type": "array", "minItems": 1, "maxItems": 256, "items": cell},
                    "seed": text,
                    "paused": {"type": "boolean"},
                    "speed": {"type": "integer", "minimum": 1, "maximum": 3},
                    "schedule": text,
                    "world_id": world,
                    "tech_id": text,
                    "duplicant": text,
                    "blocks": {
                        "type": "array",
                        "minItems": 24,
                        "maxItems": 24,
                        "items": {"enum": ["work", "sleep", "downtime", "bathtime"]},
                    },
                    "item": {"enum": ["None", "AtmoSuit", "JetSuit", "LeadSuit", "OxygenMask"]},
                },
                ["action"],
            ),
            False,
        ),
        _spec(
            "oni_blueprint",
            "ONI blueprint",
            ONI_BLUEPRINT,
            _obj(
                {
                    "action": {"enum": ["list", "plan", "apply"]},
                    "name": {"enum": list(blueprints.BLUEPRINTS)},
                    "x": _CELL,
                    "y": _CELL,
                },
                ["action"],
            ),
            False,
        ),
    ]


# which arguments each action needs, and their name in the mod's API
_ORDER = ("priority", "world_id")  # every order takes a priority and a world
_AREA = ("width", "height", *_ORDER)
_ACTION_ARGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "dig": (("x", "y", "width", "height"), _ORDER),
    "build": (("building_id", "x", "y"), ("rotation", "flip", *_ORDER)),
    "deconstruct": (("x", "y"), _AREA),
    "cancel": (("x", "y"), ("width", "height", "world_id")),
    "mop": (("x", "y"), _AREA),
    "sweep": (("x", "y"), _AREA),
    "harvest": (("x", "y"), _AREA),
    "prioritize": (("x", "y", "priority"), ("width", "height", "world_id")),
    "plant": (("x", "y", "seed"), _ORDER),
    "utility": (("kind", "path"), _ORDER),
    "research": (("tech_id",), ()),
    "schedule": ((), ("duplicant", "schedule", "blocks")),
    "speed": ((), ("paused", "speed")),
    "wardrobe": (("duplicant", "item"), ()),
}
# the forms an action takes beyond its needed arguments: (the set given must be one of these)
_FORMS: dict[str, tuple[frozenset[str], ...]] = {
    "schedule": (
        frozenset({"duplicant", "blocks"}),
        frozenset({"schedule", "blocks"}),
        frozenset({"duplicant", "schedule"}),
    ),
    "speed": (frozenset({"paused"}), frozenset({"speed"}), frozenset({"paused", "speed"})),
}
_FORM_HELP = {
    "schedule": "schedule takes duplicant + blocks (the schedule it is on, shared), schedule + blocks "
    "(a named one, added when new) or duplicant + schedule (assign it)",
    "speed": "speed takes paused (true/false), speed (1-3) or both",
}
_API_NAMES = {"building_id": "buildingId", "tech_id": "techId", "world_id": "worldId"}


def _require(args: dict[str, Any], what: str, needed: tuple[str, ...], allowed: tuple[str, ...]) -> None:
    missing = [k for k in needed if k not in args]
    extra = sorted(set(args) - {"action", "what", *needed, *allowed})
    if missing or extra:
        parts = ([f"needs {', '.join(missing)}"] if missing else []) + (
            [f"does not take {', '.join(extra)}"] if extra else []
        )
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{what} {' and '.join(parts)}",
            details={"missing": missing, "unexpected": extra},
        )


def _mod_error(err: ModError, url: str) -> McbError:
    code = _MOD_ERRORS.get(err.error, ErrorCode.UNAVAILABLE)
    if err.error == "unreachable":
        msg = (
            f"no ONI mod answers at {url}: is the game running with the agent mod enabled, and "
            "MCB_ONI_URL / config.json oni.modPort right?"
        )
    elif err.error == "not_ready":
        msg = "the ONI mod answers but no colony is loaded yet: load a save, then retry"
    else:
        msg = f"the ONI mod refused it: {err.error}: {err.details}"
    details = {"oni_error": err.error, **{k: v for k, v in err.payload.items() if k not in ("error", "details")}}
    if isinstance(details.get("field"), str):  # the argument to fix, by the tool's name for it
        details["field"] = {v: k for k, v in _API_NAMES.items()}.get(details["field"], details["field"])
    return McbError(code, msg, details=details)


class OniTools:
    def __init__(self, config: OniConfig | None = None) -> None:
        self._config = config

    def client(self) -> ModClient:
        cfg = self._config or oni_config()
        if cfg is None:
            raise McbError(
                ErrorCode.UNAVAILABLE,
                'no ONI endpoint configured: set MCB_ONI_URL or "oni": {"modPort": 23876} in config.json',
            )
        return ModClient.from_config(cfg)

    async def _run(self, fn: Callable[[ModClient], Any]) -> Any:
        client = self.client()
        try:
            return await asyncio.to_thread(fn, client)
        except ModError as err:
            raise _mod_error(err, client.base_url) from None

    async def state(self, args: dict[str, Any]) -> dict[str, Any]:
        what = args["what"]
        if what == "map":
            _require(args, "map", ("x", "y", "width", "height"), ("world_id",))
            got = await self._run(
                lambda c: c.map(args["x"], args["y"], args["width"], args["height"], args.get("world_id"))
            )
            return {**got, "legend": MAP_LEGEND}  # the answer explains itself (tools/list stays short)
        if what == "analysis":
            _require(args, "analysis", (), ())
            return await self._run(lambda c: analysis.analyze(analysis.fetch_view(c)))
        world = args.get("world_id")
        if what not in LISTS:
            _require(args, what, (), ("world_id",))
            return {what: await self._run(lambda c: c.state(what, worldId=world))}
        _require(args, what, (), ("offset", "limit", "world_id"))
        offset, limit = int(args.get("offset") or 0), int(args.get("limit") or PAGE)

        def page(c: ModClient) -> dict[str, Any]:
            items, total, nxt = c.state_page(what, offset, limit, world)
            out: dict[str, Any] = {what: items, "total": total}
            if nxt is not None:
                out["next_offset"] = nxt
            return out

        return await self._run(page)

    async def action(self, args: dict[str, Any]) -> dict[str, Any]:
        what = args["action"]
        needed, optional = _ACTION_ARGS[what]
        _require(args, what, needed, optional)
        forms = _FORMS.get(what)
        given = frozenset(k for k in optional if k in args)
        if forms and given not in forms:
            raise McbError(ErrorCode.INVALID_REQUEST, _FORM_HELP[what], details={"given": sorted(given)})
        body = {_API_NAMES.get(k, k): v for k, v in args.items() if k != "action"}
        return await self._run(lambda c: c.action(what, body))

    async def blueprint(self, args: dict[str, Any]) -> dict[str, Any]:
        what = args["action"]
        if what == "list":
            _require(args, "list", (), ())
            return {
                "blueprints": [
                    {"name": k, "description": v["description"], "research": blueprints.required_techs(v)}
                    for k, v in blueprints.BLUEPRINTS.items()
                ]
            }
        _require(args, what, ("name", "x", "y"), ())
        name, x, y = args["name"], args["x"], args["y"]
        if what == "plan":
            return await self._run(lambda c: blueprints.plan(name, x, y, blueprints.world_view(c, name, x, y)))
        return await self._run(lambda c: blueprints.apply_step(c, name, x, y))

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]]:
        return {
            "oni_state": _snake_case(self.state),
            "oni_action": _snake_case(self.action),
            "oni_blueprint": _snake_case(self.blueprint),
        }


def _snake_case(
    handler: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """The mod's answers carry its own (camelCase) names; the model gets snake_case keys like
    every other tool's (render.snake_keys; the map legend's symbol keys are data, kept)."""

    async def run(args: dict[str, Any]) -> dict[str, Any]:
        return snake_keys(await handler(args))

    return run


def oni_handlers() -> dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]]:
    """The handlers for the bridge, when an ONI endpoint is configured (else none)."""
    cfg = _configured()
    return OniTools(cfg).handlers() if cfg is not None else {}
