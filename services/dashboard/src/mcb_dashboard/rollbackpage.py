"""Rollback from the History page (issue 32 item 4, the dashboard's part).

On the History page each player and environment cause of the legend has a **Prepare rollback**
button, and a small form names who or what, since when (default: the slider's time) and the box (the
project's area, or only the map's window). The admin action calls the journal's RollbackPrepare
with the admin token and leads to the prepared plan's page, which shows the plan's preview and the
rollback's summary: the blocks it restores and the later edits by others it leaves alone, with who
made them (RegionHistory of each such position since the time: the changes after the target's last
one there). **Apply rollback** applies the plan with the admin token (BuildApply, an admin's apply),
after a checkbox that names how many player blocks it replaces (``replace_player_blocks``).

What RollbackPrepare answered is kept in this process only (``Rollbacks``, the newest ``KEEP``
plans): the journal keeps a plan's blocks and counts, not the conflicts it listed, so after a
restart a rollback's plan page shows the plan without the summary and the ways to apply it elsewhere. Every value goes
through ``render.e``; nothing secret is kept or shown.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mcb_common.errors import ErrorCode, McbError

from .histmap import key, label
from .historypage import when
from .render import e, pos

KEEP = 64  # rollback summaries kept per dashboard process
LIST_BLOCKS = 200  # blocks to restore listed on the plan page (the count is always shown)
_WHEN = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)(?:\s*(?:UTC|Z))?$")


@dataclass
class Rollback:
    """What RollbackPrepare answered for one plan, and who made the later edits it leaves alone."""

    project_id: str
    label: str  # "player Alex" / "environment: explosion"
    since_ms: int
    summary: dict[str, Any]
    later: dict[tuple[int, int, int], list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def player_blocks(self) -> int:
        for s in (self.summary.get("replaced") or {}).get("by_source", []):
            if s.get("source") == "player":
                return int(s.get("count", 0))
        return 0


class Rollbacks:
    """The newest ``KEEP`` rollbacks this dashboard prepared, by plan id."""

    def __init__(self, keep: int = KEEP):
        self.keep = keep
        self._by_plan: OrderedDict[str, Rollback] = OrderedDict()

    def put(self, rb: Rollback) -> None:
        self._by_plan[rb.summary["plan_id"]] = rb
        while len(self._by_plan) > self.keep:
            self._by_plan.popitem(last=False)

    def get(self, plan_id: str) -> Rollback | None:
        return self._by_plan.get(plan_id)


def parse_target(value: str) -> tuple[str, str]:
    """(player, cause) of a form's ``player:<id or name>`` or ``environment:<cause>`` (histmap.key); the journal
    checks the name and the cause (blame.check_query), so its refusal is the one shown."""
    kind, _, name = value.strip().partition(":")
    if kind == "player" and name:
        return name, ""
    if kind == "environment":
        return "", name or "other"
    raise McbError(
        ErrorCode.INVALID_REQUEST,
        "roll back whom? choose a player or an environment cause of the legend (player:<id> or environment:<cause>)",
    )


def parse_since(text: str) -> int:
    """Unix milliseconds of the form's ``since``: a number of ms, or a UTC time as the page writes it
    (``2026-12-02 15:04:05.123 UTC``; seconds, fraction and ``UTC`` optional)."""
    t = text.strip()
    if t.isdigit() and int(t) > 0:
        return int(t)
    m = _WHEN.match(t)
    if m:
        clock = m.group(2) if m.group(2).count(":") == 2 else m.group(2) + ":00"
        try:
            at = datetime.fromisoformat(f"{m.group(1)}T{clock}").replace(tzinfo=UTC)
        except ValueError:
            pass
        else:
            return int(round(at.timestamp() * 1000))
    raise McbError(
        ErrorCode.INVALID_REQUEST,
        f"since must be a time such as 2026-12-02 15:04:05 UTC or Unix milliseconds (got {t[:40]!r})",
    )


def is_target(entry: dict[str, Any], player: str, cause: str) -> bool:
    """mcb_journal.rollback.target_of, over RegionHistory entries."""
    if player:
        name = (entry.get("player_name") or "").lower()
        return entry.get("source") == "player" and (entry.get("player_id") == player or name == player.lower())
    return entry.get("source") == "environment" and (entry.get("cause") or "other") == cause


def later_edits(entries: list[dict[str, Any]], player: str, cause: str) -> list[dict[str, Any]]:
    """Of one position's changes since the time (newest first), the others' after the target's last."""
    out = []
    for entry in entries:
        if is_target(entry, player, cause):
            break
        out.append(entry)
    return out


def form(pid: str, legend: list[dict[str, Any]], x0: int, z0: int, since_ms: int, csrf: str, session: bool) -> str:
    """The small form under the legend: who or what (the players and causes of ``legend``), since,
    the box. The legend's buttons submit it with their entry (``form=rollback-form``)."""
    options = {key(w): label(w) for w in legend if w["source"] in ("player", "environment")}.items()
    if not options:
        return ""
    dis = "" if session else ' disabled title="log in with the admin token first"'
    opts = "".join(f'<option value="{e(v)}">{e(label)}</option>' for v, label in options)
    return (
        f'<form id="rollback-form" method="post" action="/projects/{e(pid)}/rollback" class="rollback">'
        f'<input type="hidden" name="csrf" value="{e(csrf)}">'
        f'<input type="hidden" name="x0" value="{x0}"><input type="hidden" name="z0" value="{z0}">'
        "<fieldset><legend>Roll back</legend>"
        f'<label for="rollback-who">whose changes</label> <select id="rollback-who" name="who">{opts}</select> '
        f'<label for="rollback-since">since</label> <input id="rollback-since" name="since" size="28" '
        f'value="{e(when(since_ms))}"> '
        '<label><input type="checkbox" name="window" value="1"> only this map’s columns</label> '
        f'<button type="submit"{dis}>Prepare rollback</button>'
        "<p>Prepares a plan (nothing is written) that puts back what they changed since then; later "
        "edits by others stay as they are and are listed on the plan’s page.</p></fieldset></form>"
    )


def legend_button(w: dict[str, Any], session: bool) -> str:
    """A legend entry's own Prepare rollback (players and environment causes only)."""
    if w["source"] not in ("player", "environment"):
        return ""
    value = key(w)  # parse_target's form
    dis = "" if session else ' disabled title="log in with the admin token first"'
    return (
        f' <button type="submit" form="rollback-form" name="target" value="{e(value)}" class="small"{dis}>'
        "Prepare rollback</button>"
    )


def section(
    rb: Rollback | None,
    plan_id: str,
    project_id: str,
    blocks: list[tuple[dict[str, int], str]] | None,
    csrf: str,
    session: bool,
) -> str:
    """The rollback's summary on its plan page, the Apply rollback action and the other ways to apply."""
    plan_hash = rb.summary.get("plan_hash", "…") if rb else "…"  # the hash the journal answered
    ways = (
        f"<p>Other ways to apply it: the player in chat <code>/ai apply</code> (the rollback they asked with "
        f"<code>/ai rollback</code>), or the agent's MCP tool <code>build_apply</code> with "
        f'<code>{{"plan_id": "{e(plan_id)}", "plan_hash": "{e(plan_hash)}", "replace_player_blocks": true}}</code> '
        "after the player agreed.</p>"
    )
    if rb is None:
        return f'<section id="rollback" aria-labelledby="h-rb"><h2 id="h-rb">Apply</h2>{ways}</section>'
    s = rb.summary
    rows = "".join(
        f'<tr class="restore"><td>{e(pos(p))}</td><td><code>{e(state)}</code></td></tr>' for p, state in blocks or []
    )
    restore = (
        f"<p>{e(s.get('changed_blocks', 0))} blocks return to how they were before "
        f"{e(rb.label)}’s changes since {e(when(rb.since_ms))}.</p>"
        + (
            '<table id="rollback-restore"><thead><tr><th scope="col">position</th><th scope="col">restored to</th>'
            f"</tr></thead><tbody>{rows}</tbody></table>"
            if rows
            else ""
        )
        + (
            f"<p>The first {len(blocks)} are listed.</p>"
            if blocks is not None and len(blocks) < int(s.get("changed_blocks", 0))
            else ""
        )
    )
    left = []
    for c in s.get("conflicts", []):
        p = c.get("pos", {})
        edits = rb.later.get((p.get("x", 0), p.get("y", 0), p.get("z", 0)), [])
        by = (
            "; ".join(
                f"{e(label(x))} at {e(when(int(x['at_millis'])))}: <code>{e(x.get('before'))}</code> → "
                f"<code>{e(x.get('after'))}</code>"
                for x in edits
            )
            if edits
            else (
                "changed without an event (an external edit)" if c.get("source") == "external" else e(c.get("source"))
            )
        )
        left.append(
            f'<tr class="left-alone" data-source="{e(c.get("source"))}"><td>{e(pos(p))}</td>'
            f"<td><code>{e(c.get('expected'))}</code></td><td><code>{e(c.get('current'))}</code></td>"
            f"<td>{by}</td></tr>"
        )
    others = (
        (
            '<table id="rollback-left"><thead><tr><th scope="col">position</th><th scope="col">they left</th>'
            '<th scope="col">now</th><th scope="col">changed since by</th></tr></thead>'
            f"<tbody>{''.join(left)}</tbody></table>"
        )
        if left
        else "<p>None: nobody changed these blocks after them.</p>"
    )
    warn = "".join(f"<li>{e(w)}</li>" for w in s.get("warnings", []))
    n = rb.player_blocks
    consent = (
        f'<label><input type="checkbox" name="replace_player_blocks" value="1" required> Yes, replace the '
        f"{n} player block{'s' if n != 1 else ''} {e(rb.label)} placed with what was there before</label> "
        if n
        else ""
    )
    dis = "" if session else ' disabled title="log in with the admin token first"'
    apply = (
        (
            f'<form method="post" action="/operations/{e(plan_id)}/apply" class="apply">'
            f'<input type="hidden" name="csrf" value="{e(csrf)}"><input type="hidden" name="project" '
            f'value="{e(project_id)}">{consent}<button type="submit" class="danger"{dis}>Apply rollback</button></form>'
        )
        if int(s.get("changed_blocks", 0))
        else "<p>Nothing to restore.</p>"
    )
    return (
        f'<section id="rollback" aria-labelledby="h-rb"><h2 id="h-rb">Rollback of {e(rb.label)} since '
        f"{e(when(rb.since_ms))}</h2><h3>Blocks to restore</h3>{restore}"
        f"<h3>Later edits by others, left alone</h3>{others}"
        f"{'<ul>' + warn + '</ul>' if warn else ''}<h3>Apply</h3>{apply}{ways}</section>"
    )
