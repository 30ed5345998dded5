"""Blocks with block entities in recipes ("furniture") and the states the planner fixes itself.

A box's ``block_entity`` field (chest contents, sign text, banner patterns, a player head's
profile) is carried as the *full state* text ``state{data}`` of ``mcb_common.blockentity``:
``attach`` joins the recipe's raw object to the block text while parsing; ``canonical``
checks both against the registry when the compiler resolves block texts (bad data is
``invalid_request`` naming the recipe path, a refused kind — spawner, command block … —
``unsupported_block`` with the reason). The data never changes under rotation or mirroring
(only the state part turns: ``turn``).

Leaves are always written ``persistent=true`` (``persist``): non-persistent leaves placed away
from logs decay within minutes, which no recipe means.
"""

from __future__ import annotations

from typing import Any

from mcb_common import blockentity as be
from mcb_common.blockinfo import BlockInfo
from mcb_common.errors import ErrorCode, McbError
from mcb_common.registry import Registry
from mcb_common.transforms import transform as transform_state

MAX_DATA_TEXT = 16_384


def attach(block: str, data: Any, path: str) -> str:
    if block.startswith("$"):
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{path}: block_entity needs a plain block (e.g. minecraft:chest[facing=north]), "
            f"not the palette reference {block!r}",
            details={"path": path},
        )
    if not isinstance(data, dict):
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f'{path}: must be an object like {{"items": [...]}}, '
            f'{{"text": {{...}}}}, {{"patterns": [...]}} or '
            f'{{"profile": "Name"}}',
            details={"path": path},
        )
    text = be.dumps(data)
    if len(text) > MAX_DATA_TEXT:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{path}: is {len(text)} characters of JSON; at most {MAX_DATA_TEXT}",
            details={"path": path},
        )
    return be.split(block)[0] + (text if data else "")


def canonical(registry: Registry, text: str, path: str) -> str:
    """Canonical full state of a block text (with or without ``{data}``)."""
    state_text, data_text = be.split(text)
    state = registry.canonical(state_text)
    name = state.split("[", 1)[0]
    be_id = BlockInfo.load(registry.version).block_entity(state)
    why = be.refusal(be_id) if be_id else None
    if why is not None:
        raise McbError(
            ErrorCode.UNSUPPORTED_BLOCK,
            f"{name} cannot be placed: {why}",
            details={"reason": "unsupported_block_entity", "block_entity": be_id},
        )
    if not data_text:
        return persist(state)
    where = path[: -len(".block")] + ".block_entity" if path.endswith(".block") else path
    if be_id is None:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{where}: {name} has no block entity; only blocks like "
            "chests, signs, banners and player heads take block_entity",
            details={"path": where},
        )
    import json

    try:
        raw = json.loads(data_text)
    except ValueError as e:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{path}: the block-entity data after the state is not JSON ({e}); use the box's block_entity field",
            details={"path": path},
        ) from None
    data = be.normalise(be_id, name, raw, where, registry.version)
    return be.join(state, data)


def turn(state: str, registry: Registry, mirror_axis: str | None, quarter_turns: int) -> str:
    """Rotate/mirror the state part of a full state; the data stays as it is."""
    s, data = be.split(state)
    return transform_state(s, registry, mirror_axis=mirror_axis, quarter_turns=quarter_turns) + data


def persist(state: str) -> str:
    if "persistent=false" in state and state.split("[", 1)[0].endswith("_leaves"):
        return state.replace("persistent=false", "persistent=true")
    return state
