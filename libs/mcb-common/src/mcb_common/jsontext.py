"""A JSON object already encoded: a transport sends its bytes as they are, instead of encoding a
dict again (the journal's batch requests, issue 29: ``json.dumps`` of 4,096 entry objects a
request was ~3 ms of the journal's CPU).

Read as a mapping (a test double of the world host indexes its params), it is decoded once, so
``JsonText(b'{"a":1}') == {"a": 1}``. ``json.dumps`` refuses it (it is not a dict): a transport
that does not know it fails loudly instead of sending something else.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any


class JsonText(Mapping[str, Any]):
    __slots__ = ("_doc", "text")

    def __init__(self, text: bytes):
        self.text = text  # UTF-8 JSON of one object
        self._doc: dict[str, Any] | None = None

    def _decoded(self) -> dict[str, Any]:
        if self._doc is None:
            doc = json.loads(self.text)
            if not isinstance(doc, dict):
                raise ValueError("JsonText holds a JSON object, not " + type(doc).__name__)
            self._doc = doc
        return self._doc

    def __getitem__(self, key: str) -> Any:
        return self._decoded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    def __repr__(self) -> str:
        return f"JsonText({self.text[:80]!r}{'...' if len(self.text) > 80 else ''})"
