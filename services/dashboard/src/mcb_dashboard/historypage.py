"""The project's History page (issue 32 item 3): the map (histmap.py), its legend, the time slider
and one column's history. Every value goes through ``render.e``; nothing secret is passed in.

It works without JavaScript: the slider and a Show button submit the form (GET), and the map is an
``<input type="image">`` of that form, so a click submits the pixel it hit (``at.x``, ``at.y``) and
the page lists that column's history. dashboard.js only submits the form when the slider is let go.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from . import histmap
from .render import e, pos


def when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC" if ms else "—"


def swatch(rgb: tuple[int, int, int]) -> str:
    # an SVG attribute, not an inline style: the page's CSP allows no inline styles
    return (
        f'<svg class="swatch" width="14" height="14" aria-hidden="true"><rect width="14" height="14" '
        f'fill="{histmap.hex_colour(rgb)}" stroke="#555"/></svg>'
    )


def legend(doc: dict[str, Any], button: Callable[[dict[str, Any]], str] | None = None) -> str:
    """The legend; ``button`` adds an entry's action (rollbackpage.legend_button)."""
    items = []
    for w in sorted(doc["legend"], key=lambda w: (-w["columns"], histmap.key(w))):
        name = e(histmap.label(w))
        if w.get("operation_id"):
            name = f'operation <a href="/operations/{e(w["operation_id"])}">{e(w["operation_id"])}</a>'
        items.append(
            f'<li data-who="{e(histmap.key(w))}" data-colour="{histmap.hex_colour(histmap.colour(w))}">'
            f"{swatch(histmap.colour(w))} {name} · {e(w['columns'])} column{'s' if w['columns'] != 1 else ''}"
            f"{button(w) if button else ''}</li>"
        )
    return (
        f'<ul id="history-legend" class="legend">{"".join(items)}'
        f'<li data-who="">{swatch(histmap.UNCHANGED)} no change seen</li></ul>'
    )


def query(win: histmap.Window, until: int, **more: Any) -> str:
    return urlencode({"x0": win.x0, "z0": win.z0, "until": until, **more})


def _nav(project_id: str, area: dict[str, Any], win: histmap.Window, until: int) -> str:
    """Links to the neighbouring windows of an area larger than one map."""
    lo, hi = area["min"], area["max"]
    steps = [
        ("west", win.x0 - histmap.MAX_SIDE, win.z0, win.x0 > lo["x"]),
        ("east", win.x1 + 1, win.z0, win.x1 < hi["x"]),
        ("north", win.x0, win.z0 - histmap.MAX_SIDE, win.z0 > lo["z"]),
        ("south", win.x0, win.z1 + 1, win.z1 < hi["z"]),
    ]
    links = [
        f'<a href="/projects/{e(project_id)}/history?{e(query(histmap.window(area, x, z), until))}">{name}</a>'
        for name, x, z, ok in steps
        if ok
    ]
    return f"<p>This map shows part of the area; move {' · '.join(links)}</p>" if links else ""


def column_section(x: int, z: int, hist: dict[str, Any] | None, error: str, until: int) -> str:
    head = f'<section id="column-history" aria-labelledby="h-column"><h2 id="h-column">Column ({x}, {z})</h2>'
    if error:
        return head + f'<p class="bad">{e(error)}</p></section>'
    assert hist is not None
    rows = []
    for h in hist["entries"]:
        src = h.get("source", "")
        if src == "player":
            who = f"player {e(h.get('player_name') or h.get('player_id') or '(unknown)')}"
        elif src == "environment":
            who = f"environment: {e(h.get('cause') or 'other')}"
        elif h.get("operation_id"):
            asked = f" (asked by <code>{e(h['asked_by'])}</code>)" if h.get("asked_by") else ""
            who = f'operation <a href="/operations/{e(h["operation_id"])}">{e(h["operation_id"])}</a>{asked}'
            if h.get("prompt"):  # the player's /ai request that started it
                who += f" <q>{e(h['prompt'])}</q>"
        else:
            who = "an operation of another project"
        later = until and int(h["at_millis"]) > until
        rows.append(
            f'<tr data-source="{e(src)}"{" class=later" if later else ""}><td>{e(when(int(h["at_millis"])))}'
            f"{' (after the map’s time)' if later else ''}</td><td>{who}</td><td>{e(pos(h.get('pos', {})))}</td>"
            f"<td><code>{e(h.get('before'))}</code> → <code>{e(h.get('after'))}</code></td></tr>"
        )
    more = (
        "" if hist["complete"] else "<p>Older changes not listed: the 100 newest are shown (mcb history lists all).</p>"
    )
    note = f'<p class="bad">{e(hist["note"])}</p>' if hist.get("note") else ""
    table = (
        '<table><thead><tr><th scope="col">when</th><th scope="col">who or what</th><th scope="col">position</th>'
        f'<th scope="col">block before → after</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
        if rows
        else "<p>No change of this column was observed.</p>"
    )
    return head + note + table + more + "</section>"


def page(
    project: dict[str, Any],
    win: histmap.Window,
    doc: dict[str, Any],
    until: int,
    column: str = "",
    button: Callable[[dict[str, Any]], str] | None = None,
    rollback: str = "",
) -> str:
    """The page; ``button`` and ``rollback`` are the legend's rollback buttons and their form (rollbackpage)."""
    pid = project["project_id"]
    first, last = int(doc["first_millis"]), int(doc["last_millis"])
    value = until or last
    s = win.scale
    src = f"/projects/{e(pid)}/history.png?{e(query(win, until))}"
    slider = (
        (
            f'<label for="until">As of</label> <input type="range" id="until" name="until" min="{max(0, first - 1)}" '
            f'max="{last}" step="1" value="{min(max(value, first - 1), last) if last else 0}" '
            f'aria-describedby="until-text"> <output id="until-text" for="until">{e(when(value))}</output> '
            '<button type="submit">Show</button>'
        )
        if last
        else "<p>No change has been observed in this area yet.</p>"
    )
    note = f'<p class="bad">{e(doc["note"])}</p>' if doc.get("note") else ""
    return (
        f'<section id="history" aria-labelledby="h-history"><h2 id="h-history">History of {e(project["name"])} '
        f"<code>{e(pid)}</code></h2><p>Columns {e(pos({'x': win.x0, 'z': win.z0, 'y': win.y0}))} – "
        f"{e(pos({'x': win.x1, 'z': win.z1, 'y': win.y1}))}, seen from above (north up, east right), each "
        "coloured by who or what last changed it. Click a column to list its history.</p>"
        f"{_nav(pid, project['area'], win, until)}{note}"
        f'<form id="history-form" method="get" action="/projects/{e(pid)}/history">'
        f'<input type="hidden" name="x0" value="{win.x0}"><input type="hidden" name="z0" value="{win.z0}">'
        f'<p class="slider">{slider}</p><div class="map">'
        f'<input type="image" id="history-map" name="at" src="{src}" width="{win.width * s}" '
        f'height="{win.depth * s}" alt="map of who last changed each column" data-x0="{win.x0}" '
        f'data-z0="{win.z0}" data-scale="{s}">{legend(doc, button)}</div></form>{rollback}</section>{column}'
    )
