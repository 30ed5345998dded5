"""Server-rendered HTML. Every value goes through ``e()`` (html.escape); nothing secret is ever
passed in (the only per-session value is the CSRF token, an HMAC of the session id).

The page reads fully without JavaScript; dashboard.js only moves the progress bars live
(server-sent events) and refreshes the operations section when an operation finishes.
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping
from typing import Any

from mcb_common.errors import ErrorCode

from .sources import ACTIVE, ServiceHealth

TERMINAL_ORDER = ("recovery_required", "conflict", "failed", "cancelled", "applied")
OP_STATES = frozenset({*ACTIVE, *TERMINAL_ORDER})
# an operation that has written nothing yet: its page shows the plan's preview (issue 32)
NOT_STARTED = frozenset({"prepared", "queued", "waiting_for_resume"})

# The status line after an action: the link carries a code (``?msg=``) and at most an operation
# state or an error code, each from a fixed set; the words are these. A link with anything else
# shows no status line, so no link can make the page say what the stack never said.
FLASH: dict[str, tuple[str, str]] = {
    "logged_in": ("logged in", "ok"),
    "logged_out": ("logged out", "ok"),
    "wrong_token": ("wrong admin token", "bad"),
    "paused": ("writes paused", "ok"),
    "resumed": ("writes resumed", "ok"),
    "pause_failed": ("pause failed ({code}); the dashboard log says why", "bad"),
    "resume_failed": ("resume failed ({code}); the dashboard log says why", "bad"),
    "cancel_done": ("cancel: the operation is now {state}", "ok"),
    "abandon_done": ("abandon: the operation is now {state}", "ok"),
    "cancel_refused": ("cancel refused ({code}); the dashboard log says why", "bad"),
    "abandon_refused": ("abandon refused ({code}); the dashboard log says why", "bad"),
    "rollback_prepared": ("rollback prepared: nothing is written until it is applied", "ok"),
    "rollback_refused": ("rollback refused ({code}); the dashboard log says why", "bad"),
    "apply_done": ("apply: the operation is now {state}", "ok"),
    "apply_refused": ("apply refused ({code}); the dashboard log says why", "bad"),
}
_CODES = frozenset(c.value for c in ErrorCode)


def flash(query: Mapping[str, str]) -> tuple[str, str]:
    """The status line ``(text, kind)`` of a link's query; ``("", "ok")`` for none or an unknown one."""
    entry = FLASH.get(query.get("msg", ""))
    if entry is None:
        return "", "ok"
    text, kind = entry
    state, code = query.get("state", ""), query.get("code", "")
    if ("{state}" in text and state not in OP_STATES) or ("{code}" in text and code not in _CODES):
        return "", "ok"
    return text.format(state=state, code=code), kind


def e(v: Any) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def ago(ts: float | None) -> str:
    if not ts:
        return "—"
    return duration(time.time() - ts) + " ago"


def duration(s: float | None) -> str:
    if s is None:
        return "—"
    s = int(s)
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


def pos(p: dict[str, Any]) -> str:
    return f"({p.get('x', 0)}, {p.get('y', 0)}, {p.get('z', 0)})"


def box(b: dict[str, Any] | None) -> str:
    if not b or "min" not in b:
        return "—"
    return f"{pos(b['min'])} – {pos(b['max'])}"


def percent(rep: dict[str, Any]) -> int:
    total = int(rep.get("batches_total") or 0)
    if rep.get("state") == "applied":
        return 100
    return int(100 * int(rep.get("batches_done") or 0) / total) if total else 0


def page(title: str, body: str, *, session: bool, csrf: str = "", flash: str = "", flash_kind: str = "ok") -> str:
    login = (
        (
            f'<form method="post" action="/logout" class="inline"><input type="hidden" name="csrf" value="{e(csrf)}">'
            '<button type="submit">Log out</button></form> <span class="badge ok">admin</span>'
        )
        if session
        else (
            '<form method="post" action="/login" class="inline login"><label for="admin-token">Admin token</label> '
            '<input id="admin-token" name="token" type="password" autocomplete="off" required> '
            '<button type="submit">Log in</button></form> <span class="badge">read-only</span>'
        )
    )
    note = f'<p class="flash {e(flash_kind)}" role="status">{e(flash)}</p>' if flash else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)} · mcb dashboard</title><link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/dashboard.css">
<script src="/static/dashboard.js" defer></script></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><h1><a href="/">minecraft-builder-mcp</a> <small>ops dashboard</small></h1>
<nav aria-label="Sections"><a href="/#services">Services</a> <a href="/#operations">Operations</a>
<a href="/#projects">Projects</a> <a href="/#chat">Chat</a> <a href="/#camera">Camera</a></nav>
<div class="session">{login}</div></header>
<main id="main">{note}{body}</main>
<footer><p>Reads need no login; actions need the admin token. <a href="">Refresh</a>
<span id="live" aria-live="polite"></span></p></footer></body></html>"""


def action(
    url: str, label: str, csrf: str, session: bool, fields: dict[str, str] | None = None, danger: bool = False
) -> str:
    hidden = "".join(f'<input type="hidden" name="{e(k)}" value="{e(v)}">' for k, v in (fields or {}).items())
    dis = "" if session else ' disabled title="log in with the admin token first"'
    cls = ' class="danger"' if danger else ""
    return (
        f'<form method="post" action="{e(url)}" class="inline"><input type="hidden" name="csrf" value="{e(csrf)}">'
        f'{hidden}<button type="submit"{cls}{dis}>{e(label)}</button></form>'
    )


def services_section(
    health: list[ServiceHealth], redis: dict[str, Any], world: dict[str, Any], csrf: str, session: bool
) -> str:
    rows = []
    for h in health:
        rows.append(
            f'<tr data-service="{e(h.name)}"><th scope="row">{e(h.name)}</th>'
            f'<td><span class="badge {"ok" if h.up and h.status == "ok" else "bad"}">'
            f"{e('up' if h.up else 'down')} · {e(h.status)}</span></td>"
            f"<td>{e(h.version or '—')}</td><td>{e(duration(h.uptime_s))}</td>"
            f"<td>{e(h.last_error or '—')}{' (' + e(ago(h.last_error_at)) + ')' if h.last_error else ''}</td>"
            f"<td><code>{e(h.url)}</code></td></tr>"
        )
    rows.append(
        f'<tr data-service="redis"><th scope="row">redis</th><td><span class="badge {"ok" if redis["up"] else "bad"}">'
        f"{'up' if redis['up'] else 'down'}</span></td><td>{e(redis.get('version') or '—')}</td>"
        f"<td>{e(duration(redis.get('uptime_s')))}</td><td>{e(redis.get('last_error') or '—')}</td><td></td></tr>"
    )
    if world.get("up"):
        paused = bool(world.get("paused"))
        kind = world.get("host_kind", "?")
        wh = (
            f'<dl class="facts"><dt>Host</dt><dd>{e(kind)} {e(world.get("host_version", ""))}'
            f" ({host_label(kind)})</dd>"
            f"<dt>World</dt><dd>{e(world.get('world_name', ''))} <code>{e(world.get('world_uuid', ''))}</code></dd>"
            f"<dt>Epoch</dt><dd>{e(world.get('epoch', 0))}</dd>"
            f"<dt>Minecraft</dt><dd>{e(world.get('minecraft_version', ''))}</dd>"
            f'<dt>Writes</dt><dd id="writes-state"><span class="badge {"bad" if paused else "ok"}">'
            f"{'paused' if paused else 'running'}</span> "
            + (
                action("/actions/resume", "Resume writes", csrf, session)
                if paused
                else action("/actions/pause", "Pause writes", csrf, session, danger=True)
            )
            + "</dd></dl>"
        )
    else:
        wh = f'<p class="bad">World host unreachable: {e(world.get("error", ""))}</p>'
    return (
        f'<section id="services" aria-labelledby="h-services"><h2 id="h-services">Services</h2>'
        '<table><thead><tr><th scope="col">service</th><th scope="col">state</th><th scope="col">version</th>'
        '<th scope="col">uptime</th><th scope="col">last error</th><th scope="col">health</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table><h3>World host</h3>{wh}</section>"
    )


def host_label(kind: str) -> str:
    """The embedded host of this stack (mcb_world_host) or an external one (the Paper plugin)."""
    k = str(kind).lower()
    if "paper" in k:
        return "Paper plugin"
    return "embedded" if k in ("world-host", "embedded", "mcb-world-host") else f"external: {kind}"


def progress_bar(op_id: str, rep: dict[str, Any]) -> str:
    pct = percent(rep)
    return (
        f'<progress id="bar-{e(op_id)}" data-op="{e(op_id)}" max="100" value="{pct}" '
        f'aria-label="progress of {e(op_id)}">{pct} %</progress> <span class="pct" data-pct="{e(op_id)}">{pct} %</span>'
    )


OLD_WORLD_BADGE = ' <span class="badge old-world" title="planned against a world replaced since (mcb world reset)">earlier world</span>'


def old_worlds_note(n: int, shown: bool, what: str) -> str:
    """Earlier worlds' entries are listed only when asked for (?old_worlds=1); say how many."""
    if not n:
        return ""
    if shown:
        return f'<p class="old-worlds">{e(n)} {what} of earlier worlds are listed, marked “earlier world”. <a href="/">Current world only</a></p>'
    return (
        f'<p class="old-worlds">{e(n)} {what} of earlier worlds (before <code>mcb world reset</code>) are not listed. '
        f'<a href="/?old_worlds=1">Show them</a></p>'
    )


def operations_section(
    ops: list[dict[str, Any]], counts: dict[str, int], old_world_ops: int = 0, old_shown: bool = False
) -> str:
    active = [o for o in ops if o["report"].get("state") in ACTIVE]
    done = [o for o in ops if o["report"].get("state") not in ACTIVE]
    summary = " · ".join(f"{e(k)}: {e(v)}" for k, v in sorted(counts.items())) or "none yet"
    arows = "".join(
        f'<tr data-op-row="{e(o["report"]["operation_id"])}"><td><a href="/operations/{e(o["report"]["operation_id"])}">'
        f"{e(o['report']['operation_id'])}</a></td><td>{e(o['project_id'])}</td>"
        f'<td class="state" data-state="{e(o["report"]["operation_id"])}">{e(o["report"]["state"])}</td>'
        f"<td>{progress_bar(o['report']['operation_id'], o['report'])}</td>"
        f"<td>{e(o['plan'].get('changed_blocks', 0))} blocks</td></tr>"
        for o in active
    )
    drows = "".join(
        f'<tr data-done-op="{e(o["report"]["operation_id"])}"><td><a href="/operations/{e(o["report"]["operation_id"])}">'
        f"{e(o['report']['operation_id'])}</a>{OLD_WORLD_BADGE if o.get('old_world') else ''}</td>"
        f'<td>{e(o["project_id"])}</td><td><span class="badge st-{e(o["report"]["state"])}">{e(o["report"]["state"])}</span></td>'
        f"<td>{e(o['report'].get('written', 0))}/{e(o['report'].get('planned', 0))} written"
        f"{', ' + e(o['report'].get('conflicts')) + ' conflicts' if o['report'].get('conflicts') else ''}</td>"
        f"<td>{e(o['report'].get('updated_at', ''))}</td><td>{e(o['report'].get('message', ''))}</td></tr>"
        for o in done
    )
    return (
        f'<section id="operations" aria-labelledby="h-ops"><h2 id="h-ops">Operations</h2><p>{summary}</p>'
        f"{old_worlds_note(old_world_ops, old_shown, 'operations')}"
        '<h3>Queued and running</h3><table id="active-ops"><thead><tr><th scope="col">operation</th>'
        '<th scope="col">project</th><th scope="col">state</th><th scope="col">progress</th><th scope="col">plan</th>'
        f"</tr></thead><tbody>{arows or ''}</tbody></table>"
        + ("" if arows else '<p id="no-active">Nothing queued or running.</p>')
        + '<h3>Finished</h3><table><thead><tr><th scope="col">operation</th><th scope="col">project</th>'
        '<th scope="col">state</th><th scope="col">blocks</th><th scope="col">updated</th><th scope="col">message</th>'
        f"</tr></thead><tbody>{drows}</tbody></table></section>"
    )


def projects_section(projects: dict[str, Any], old_shown: bool = False) -> str:
    parts_by: dict[str, list[dict[str, Any]]] = {}
    for p in projects.get("parts", []):
        parts_by.setdefault(p["project_id"], []).append(p)
    items = []
    for p in projects.get("projects", []):
        parts = parts_by.get(p["project_id"], [])
        plist = (
            "".join(
                f'<li data-part="{e(x["part_id"])}">{e(x["name"])} <code>{e(x["part_id"])}</code>'
                f"{OLD_WORLD_BADGE if x.get('old_world') else ''} · {e(x['block_count'])} blocks · "
                f"{box(x.get('bounds'))}{' · <strong>protected</strong>' if x.get('protected') else ''}"
                f' · from <a href="/operations/{e(x["operation_id"])}">{e(x["operation_id"])}</a></li>'
                for x in parts
            )
            or "<li>no parts</li>"
        )
        items.append(
            f'<article class="project"><h3>{e(p["name"])} <code>{e(p["project_id"])}</code></h3>'
            f"<p>Area {box(p.get('area'))} · owner <code>{e(p['owner_player_id'])}</code> · "
            f'<a href="/projects/{e(p["project_id"])}/history">History map</a></p>'
            f"<h4>Parts</h4><ul>{plist}</ul></article>"
        )
    return (
        f'<section id="projects" aria-labelledby="h-projects"><h2 id="h-projects">Projects, areas and parts</h2>'
        f"{old_worlds_note(int(projects.get('old_world_parts') or 0), old_shown, 'parts')}"
        f"{''.join(items) or '<p>No projects configured.</p>'}</section>"
    )


def chat_section(chat: dict[str, dict[str, Any]]) -> str:
    rows = []
    for project, q in chat.items():
        active = q.get("active")
        act = (
            f"{e(active.get('player_id', ''))}: {e(str(active.get('text', ''))[:80])}"
            if isinstance(active, dict)
            else e(active or "—")
        )
        waiting = "".join(
            f"<li>{e(m.get('player_id', ''))}: {e(str(m.get('text', ''))[:80])}</li>" for m in q.get("waiting", [])
        )
        rows.append(
            f'<tr><th scope="row">{e(project)}</th><td>{act}</td><td>{e(q.get("length", 0))}'
            f"{'<ul>' + waiting + '</ul>' if waiting else ''}</td></tr>"
        )
    return (
        f'<section id="chat" aria-labelledby="h-chat"><h2 id="h-chat">Chat queue per project</h2>'
        '<table><thead><tr><th scope="col">project</th><th scope="col">running turn</th>'
        f'<th scope="col">waiting</th></tr></thead><tbody>{"".join(rows)}</tbody></table></section>'
    )


def thumb(c: dict[str, Any]) -> str:
    if c.get("status") != "completed":
        return f'<span class="badge">{e(c.get("status"))}{": " + e(c.get("error")) if c.get("error") else ""}</span>'
    return (
        f'<a href="/captures/{e(c["capture_id"])}.png?project={e(c["project_id"])}">'
        f'<img class="thumb" src="/captures/{e(c["capture_id"])}.png?project={e(c["project_id"])}" '
        f'alt="capture {e(c["capture_id"])}" width="160" height="120" loading="lazy"></a>'
    )


def camera_section(cam: dict[str, Any]) -> str:
    hb = cam.get("heartbeat")
    worker = (
        (
            f'<p>Worker: <span class="badge ok">{e(hb.get("worker_state"))}</span> driver {e(hb.get("driver"))}'
            f" · version {e(hb.get('version'))} · beat {e(ago(hb.get('at')))}</p>"
        )
        if hb
        else '<p>Worker: <span class="badge bad">no heartbeat</span></p>'
    )
    rows = "".join(
        f"<tr><td><code>{e(c['capture_id'])}</code></td><td>{e(c['project_id'])}</td>"
        f"<td>{e(c['status'])} {e(c['stage'])}</td><td>{e(c['after_operation_id'] or '—')}</td>"
        f"<td>{thumb(c)}</td></tr>"
        for c in cam.get("captures", [])[:12]
    )
    return (
        f'<section id="camera" aria-labelledby="h-camera"><h2 id="h-camera">Camera worker and captures</h2>{worker}'
        '<table><thead><tr><th scope="col">capture</th><th scope="col">project</th><th scope="col">status</th>'
        f'<th scope="col">after operation</th><th scope="col">image</th></tr></thead><tbody>{rows}</tbody></table></section>'
    )


def plan_preview(plan_id: str, project_id: str) -> str:
    """The picture of a plan not yet applied: the world now (left) and after it (right)."""
    src = f"/plans/{e(plan_id)}/preview.png?project={e(project_id)}"
    return (
        '<section aria-labelledby="h-preview"><h2 id="h-preview">Preview (nothing written yet)</h2>'
        f'<figure data-capture="preview"><a href="{src}"><img src="{src}" alt="preview of plan {e(plan_id)}" '
        'width="960" height="270"></a><figcaption>Left: the world now. Right: after the plan '
        "(its blocks over the current ones; drawn, not written).</figcaption></figure></section>"
    )


def plan_page(project_id: str, head: dict[str, Any]) -> str:
    plan_id = head.get("plan_id", "")
    facts = (
        f'<dl class="facts"><dt>State</dt><dd><span class="badge st-prepared">prepared</span> not applied</dd>'
        f"<dt>Project</dt><dd>{e(project_id)}</dd>"
        f"<dt>Plan</dt><dd><code>{e(plan_id)}</code>: {e(head.get('changed', 0))} changed of "
        f"{e(head.get('total', 0))} positions, region {box(head.get('bounds'))}</dd>"
        f"<dt>Expires</dt><dd>{e(head.get('expires_at'))}</dd></dl>"
    )
    return (
        f'<section aria-labelledby="h-plan"><h2 id="h-plan">Plan <code>{e(plan_id)}</code></h2>{facts}</section>'
        + plan_preview(plan_id, project_id)
    )


def operation_page(
    entry: dict[str, Any],
    captures: list[dict[str, Any]],
    review: dict[str, Any] | None,
    review_error: str,
    csrf: str,
    session: bool,
) -> str:
    rep, plan = entry["report"], entry["plan"]
    op_id = rep["operation_id"]
    state = rep["state"]
    facts = (
        f'<dl class="facts"><dt>State</dt><dd><span class="badge st-{e(state)}" data-state="{e(op_id)}">{e(state)}</span>'
        f" {e(rep.get('message', ''))}{OLD_WORLD_BADGE if entry.get('old_world') else ''}</dd>"
        f"<dt>Project</dt><dd>{e(entry['project_id'])}</dd>"
        f"<dt>Progress</dt><dd>{progress_bar(op_id, rep)} batch {e(rep.get('batches_done', 0))}/{e(rep.get('batches_total', 0))}</dd>"
        f"<dt>Blocks</dt><dd>{e(rep.get('written', 0))} written, {e(rep.get('already', 0))} already, "
        f"{e(rep.get('planned', 0))} planned, {e(rep.get('conflicts', 0))} conflicts</dd>"
        f"<dt>Plan</dt><dd><code>{e(plan.get('plan_id'))}</code>: {e(plan.get('changed_blocks', 0))} changed, "
        f"{e(plan.get('already_blocks', 0))} already, {e(plan.get('total_positions', 0))} positions in "
        f"{e(plan.get('batches', 0))} batches, epoch {e(plan.get('world_epoch', 0))}, region {box(plan.get('region'))}</dd>"
        f"<dt>Created</dt><dd>{e(rep.get('created_at'))}</dd><dt>Updated</dt><dd>{e(rep.get('updated_at'))}</dd></dl>"
    )
    err = rep.get("error") or {}
    if err.get("code"):
        facts += f'<p class="bad">Error <code>{e(err["code"])}</code>: {e(err.get("message"))}</p>'
    notices = "".join(f"<li>{e(n)}</li>" for n in rep.get("notices", []))
    if notices:
        facts += f"<h3>Notices</h3><ul>{notices}</ul>"
    if state in ACTIVE:
        facts += action(f"/operations/{op_id}/cancel", "Cancel this operation", csrf, session, danger=True)
    mats = "".join(
        f"<tr><td><code>{e(m['state'])}</code></td><td>{e(m['count'])}</td></tr>" for m in plan.get("materials", [])
    )
    warn = "".join(f"<li>{e(w)}</li>" for w in plan.get("warnings", []))
    conf = "".join(
        f'<tr class="conflict"><td>{e(pos(c.get("pos", {})))}</td><td><code>{e(c.get("expected"))}</code></td>'
        f"<td><code>{e(c.get('current'))}</code></td><td><code>{e(c.get('desired'))}</code></td>"
        f'<td class="source">{e(c.get("source"))}</td><td>{e(c.get("part_id") or "")}</td></tr>'
        for c in rep.get("conflict_samples", [])
    )
    body = (
        f'<section aria-labelledby="h-op"><h2 id="h-op">Operation <code>{e(op_id)}</code></h2>{facts}</section>'
        f'<section aria-labelledby="h-mat"><h2 id="h-mat">Materials</h2><table><thead><tr><th scope="col">state</th>'
        f'<th scope="col">blocks</th></tr></thead><tbody>{mats}</tbody></table>'
        f"{'<ul>' + warn + '</ul>' if warn else ''}</section>"
        f'<section id="conflicts" aria-labelledby="h-conf"><h2 id="h-conf">Conflicts</h2>'
        + (
            (
                '<table><thead><tr><th scope="col">position</th><th scope="col">expected</th><th scope="col">current</th>'
                '<th scope="col">desired</th><th scope="col">source</th><th scope="col">part</th></tr></thead>'
                f"<tbody>{conf}</tbody></table>"
            )
            if conf
            else "<p>None.</p>"
        )
        + "</section>"
    )
    if state in NOT_STARTED and plan.get("plan_id"):  # nothing written yet: what it will look like
        body += plan_preview(plan["plan_id"], entry["project_id"])
    # Before: only the picture the journal took of this operation's region when it started, before
    # its first batch (OperationReport.before_capture_id); never another capture of the project
    before_id = rep.get("before_capture_id") or ""
    before = (
        thumb({"capture_id": before_id, "project_id": entry["project_id"], "status": "completed"})
        if before_id
        else '<p class="no-before">No picture was taken when it started (switched off, no camera, or not '
        "ready in time).</p>"
    )
    after = [c for c in captures if c["after_operation_id"] == op_id]
    body += (
        '<section aria-labelledby="h-cap"><h2 id="h-cap">Captures</h2><div class="captures">'
        f'<figure data-capture="before"><figcaption>Before (when it started)</figcaption>{before}</figure>'
        f'<figure data-capture="after"><figcaption>After</figcaption>{"".join(thumb(c) for c in after) or "—"}'
        "</figure></div></section>"
    )
    if state == "recovery_required":
        if review is not None:
            body += (
                f'<section id="recovery" aria-labelledby="h-rec"><h2 id="h-rec">Recovery review</h2>'
                f'<dl class="facts"><dt>Positions</dt><dd>{e(review.get("positions"))}</dd>'
                f"<dt>Match the state before</dt><dd>{e(review.get('matches_before'))}</dd>"
                f"<dt>Match the planned state</dt><dd>{e(review.get('matches_after'))}</dd>"
                f"<dt>Other states (foreign)</dt><dd>{e(review.get('foreign_states'))}</dd>"
                f'<dt>Digest</dt><dd><code id="digest">{e(review.get("current_digest"))}</code></dd></dl>'
                "<p>Abandoning settles the operation as failed with the world as it is now; the digest makes sure "
                "nothing changed since this review.</p>"
                + action(
                    f"/operations/{op_id}/abandon",
                    "Abandon with this digest",
                    csrf,
                    session,
                    {"digest": str(review.get("current_digest", ""))},
                    danger=True,
                )
                + "</section>"
            )
        else:
            body += (
                f'<section id="recovery"><h2>Recovery review</h2><p class="bad">{e(review_error)}</p>'
                "<p>Log in with the admin token to see the review and abandon the operation.</p></section>"
            )
    return body
