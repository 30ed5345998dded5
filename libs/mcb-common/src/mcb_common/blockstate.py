"""Block states: parsing and the canonical form.

Canonical form: ``minecraft:oak_stairs[facing=east,half=bottom,shape=straight,waterlogged=false]``
— namespaced id, *every* property of the block, sorted by name, defaults filled in; a block
without properties has no brackets (``minecraft:stone``). Two states are equal iff their
canonical strings are equal, so the rest of the system compares and hashes strings.

``parse_state_text`` only splits text; ``Registry.canonical`` (registry.py) validates it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ErrorCode, McbError

_NAME = re.compile(r"^(?:([a-z0-9_.\-]+):)?([a-z0-9_./\-]+)$")
_PROP = re.compile(r"^[a-z0-9_]+$")


@dataclass(frozen=True, slots=True)
class BlockState:
    name: str  # namespaced, e.g. "minecraft:oak_stairs"
    properties: tuple[tuple[str, str], ...]  # sorted by property name

    def __str__(self) -> str:
        if not self.properties:
            return self.name
        inner = ",".join(f"{k}={v}" for k, v in self.properties)
        return f"{self.name}[{inner}]"

    @property
    def props(self) -> dict[str, str]:
        return dict(self.properties)

    def with_props(self, **changes: str) -> BlockState:
        merged = dict(self.properties)
        merged.update(changes)
        return BlockState(self.name, tuple(sorted(merged.items())))


def parse_state_text(text: str) -> tuple[str, dict[str, str]]:
    """Split ``[ns:]name[k=v,...]`` into a namespaced name and a property dict.

    Raises ``unsupported_block`` for text that is not a block state at all.
    """
    if not isinstance(text, str):
        raise McbError(ErrorCode.UNSUPPORTED_BLOCK, f"a block state must be a string, got {text!r}")
    s = text.strip().lower()
    props: dict[str, str] = {}
    if "[" in s:
        if not s.endswith("]"):
            raise McbError(
                ErrorCode.UNSUPPORTED_BLOCK,
                f"block state {text!r} opens '[' but does not end with ']'",
            )
        s, inner = s[:-1].split("[", 1)
        inner = inner.strip()
        if inner:
            for part in inner.split(","):
                if "=" not in part:
                    raise McbError(
                        ErrorCode.UNSUPPORTED_BLOCK,
                        f"block state {text!r}: property {part.strip()!r} needs the form name=value",
                    )
                k, v = (p.strip() for p in part.split("=", 1))
                if not _PROP.match(k) or not _PROP.match(v):
                    raise McbError(
                        ErrorCode.UNSUPPORTED_BLOCK,
                        f"block state {text!r}: {k}={v} is not a valid property assignment",
                    )
                if k in props and props[k] != v:
                    raise McbError(
                        ErrorCode.UNSUPPORTED_BLOCK,
                        f"block state {text!r} sets {k} twice ({props[k]} and {v})",
                    )
                props[k] = v
    m = _NAME.match(s.strip())
    if not m:
        raise McbError(ErrorCode.UNSUPPORTED_BLOCK, f"{text!r} is not a block id like minecraft:stone")
    ns = m.group(1) or "minecraft"
    return f"{ns}:{m.group(2)}", props
