"""The history map (issue 32 item 3): a top-down picture of a project's area, each column coloured by
who last changed it (the journal's HistoryMap: a player, an environment cause, an operation).

* **Stable colours**: a colour is a function of the legend entry alone (a player's id or name, the
  cause, the operation id), never of its place in a list, so the same player keeps one colour on
  every map, at every time and after a restart. Environment causes have fixed colours (earthy,
  dark, low saturation); players are saturated (lightness 40..56 %), operations pale (70..82 %) —
  so entries of different kinds never share a colour. Two players (or two operations) get hue and
  lightness from a hash: they can come out close, rarely; the legend names every entry.
* **The window**: at most ``MAX_SIDE`` x ``MAX_SIDE`` columns (the journal's bound); a larger area
  is looked at one window at a time. North (-z) is up, east (+x) right, ``scale`` pixels a column.
* **The picture**: a PNG written here with zlib (flat colours compress to a few KB); no imaging
  library, no request outside the dashboard.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass
from typing import Any

MAX_SIDE = 256  # mcb_journal.histmap.MAX_SIDE
MAP_PIXELS = 768  # the picture's longer side, at most (a column is at least 1 pixel)
UNCHANGED = (236, 236, 228)  # a column nobody changed (as far as the journal saw)
CAUSE_COLOURS: dict[str, tuple[int, int, int]] = {  # mcb_common.causes.CAUSES
    "explosion": (120, 30, 20),
    "fire": (200, 80, 0),
    "fade": (110, 110, 90),
    "decay": (95, 70, 30),
    "flow": (20, 60, 120),
    "growth": (40, 100, 30),
    "form": (80, 120, 130),
    "piston": (70, 70, 70),
    "other": (50, 40, 50),
}


@dataclass(frozen=True)
class Window:
    """The columns x0..x1, z0..z1 (inclusive) of the map, and the area's y range."""

    x0: int
    z0: int
    x1: int
    z1: int
    y0: int
    y1: int

    @property
    def width(self) -> int:
        return self.x1 - self.x0 + 1

    @property
    def depth(self) -> int:
        return self.z1 - self.z0 + 1

    @property
    def scale(self) -> int:
        return max(1, MAP_PIXELS // max(self.width, self.depth))

    def box(self) -> dict[str, Any]:
        return {"min": {"x": self.x0, "y": self.y0, "z": self.z0}, "max": {"x": self.x1, "y": self.y1, "z": self.z1}}

    def column_at(self, px: int, py: int) -> tuple[int, int] | None:
        """The column under pixel (px, py) of the picture, or None off the map."""
        x, z = self.x0 + px // self.scale, self.z0 + py // self.scale
        return (x, z) if self.x0 <= x <= self.x1 and self.z0 <= z <= self.z1 and px >= 0 and py >= 0 else None


def window(area: dict[str, Any], x0: int | None = None, z0: int | None = None) -> Window:
    """The window of ``area`` ({min, max}) whose north-west column is (x0, z0) (default: the
    area's), moved inside the area and at most MAX_SIDE a side."""
    lo, hi = area["min"], area["max"]
    x = min(max(lo["x"] if x0 is None else x0, lo["x"]), max(lo["x"], hi["x"] - MAX_SIDE + 1))
    z = min(max(lo["z"] if z0 is None else z0, lo["z"]), max(lo["z"], hi["z"] - MAX_SIDE + 1))
    return Window(x, z, min(hi["x"], x + MAX_SIDE - 1), min(hi["z"], z + MAX_SIDE - 1), lo["y"], hi["y"])


def key(who: dict[str, Any]) -> str:
    """A legend entry's identity: ``player:<id or name>``, ``environment:<cause>``, ``ours:<op id>``."""
    src = who.get("source", "")
    if src == "player":
        return f"player:{who.get('player_id') or who.get('player_name', '')}"
    if src == "environment":
        return f"environment:{who.get('cause') or 'other'}"
    return f"ours:{who.get('operation_id', '')}"


def label(who: dict[str, Any]) -> str:
    src = who.get("source", "")
    if src == "player":
        return f"player {who.get('player_name') or who.get('player_id') or '(unknown)'}"
    if src == "environment":
        return f"environment: {who.get('cause') or 'other'}"
    op = who.get("operation_id", "")
    return f"operation {op}" if op else "an operation of another project"


def _hsl(h: float, s: float, lum: float) -> tuple[int, int, int]:
    c = (1 - abs(2 * lum - 1)) * s
    x = c * (1 - abs((h / 60) % 2 - 1))
    m = lum - c / 2
    r, g, b = [(c, x, 0), (x, c, 0), (0, c, x), (0, x, c), (x, 0, c), (c, 0, x)][int(h // 60) % 6]
    return round((r + m) * 255), round((g + m) * 255), round((b + m) * 255)


def colour(who: dict[str, Any]) -> tuple[int, int, int]:
    """The entry's colour (module docstring: a function of ``key(who)`` alone)."""
    if who.get("source") == "environment":
        return CAUSE_COLOURS.get(who.get("cause") or "other", CAUSE_COLOURS["other"])
    digest = hashlib.sha256(key(who).encode()).digest()
    hue = int.from_bytes(digest[:4], "big") / 2**32 * 360
    shade = digest[4] / 255  # two entries of one hue still differ in lightness
    if who.get("source") == "player":
        return _hsl(hue, 0.8, 0.4 + 0.16 * shade)
    return _hsl(hue, 0.5, 0.7 + 0.12 * shade)


def hex_colour(rgb: tuple[int, int, int]) -> str:
    return "#" + "".join(f"{c:02x}" for c in rgb)


def png(win: Window, doc: dict[str, Any]) -> bytes:
    """The map as a PNG (RGB, ``win.scale`` pixels a column): ``doc`` is the journal's HistoryMap
    answer as a dict (x, z, who, legend)."""
    colours = [bytes(colour(w)) for w in doc.get("legend", [])]
    grid = [[bytes(UNCHANGED)] * win.width for _ in range(win.depth)]
    for x, z, w in zip(doc.get("x", []), doc.get("z", []), doc.get("who", []), strict=True):
        if win.x0 <= x <= win.x1 and win.z0 <= z <= win.z1:
            grid[z - win.z0][x - win.x0] = colours[w]
    s = win.scale
    raw = bytearray()
    for row in grid:
        line = b"\x00" + b"".join(px * s for px in row)  # filter type 0 (None)
        raw += line * s
    w, h = win.width * s, win.depth * s

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(bytes(raw), 6))
        + chunk(b"IEND", b"")
    )
