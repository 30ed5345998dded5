"""The dashboard's HTTP face: pages, actions, the progress event stream, static files.

One boundary: every request passes ``guard`` (Host check; for POST also Origin, session and
CSRF); every McbError from a source becomes a message on the page (or a 4xx/5xx with its code),
never a traceback. Tokens are never rendered, logged or put into a URL.
"""

from __future__ import annotations

import asyncio
import json
import logging
from importlib import resources

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.bodylimit import BodyLimit
from mcb_rpc.health import health_fields, record_exception
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import read_token

from . import __version__, histmap, historypage, render, rollbackpage
from .security import SESSION_COOKIE, LoginThrottle, Sessions, allowed_hosts, host_ok, origin_ok
from .sources import Sources, as_dict

log = logging.getLogger("mcb.dashboard")

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
MAX_FORM_BYTES = 16384  # the largest form (a login, an action) is far smaller
STATUS = {
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.PERMISSION_DENIED: 403,
    ErrorCode.UNAUTHENTICATED: 401,
    ErrorCode.UNAVAILABLE: 503,
}


def _static(name: str) -> bytes:
    return resources.files("mcb_dashboard").joinpath("static", name).read_bytes()


def create_app(sources: Sources, sessions: Sessions, hosts: frozenset[str]) -> FastAPI:
    app = FastAPI(title="mcb dashboard", docs_url=None, redoc_url=None, openapi_url=None)
    rollbacks = rollbackpage.Rollbacks()
    app.add_middleware(BodyLimit, max_bytes=MAX_FORM_BYTES)
    statics = {
        "dashboard.js": ("text/javascript", _static("dashboard.js")),
        "dashboard.css": ("text/css", _static("dashboard.css")),
        "favicon.svg": ("image/svg+xml", _static("favicon.svg")),
    }

    @app.middleware("http")
    async def guard(request: Request, call_next):
        if not host_ok(request.headers.get("host"), hosts):
            # DNS rebinding: a foreign name pointing at loopback is not this dashboard
            return _plain(421, "misdirected request: unknown Host for this dashboard")
        if request.method not in ("GET", "HEAD"):
            if not origin_ok(request.headers.get("origin"), request.headers.get("referer"), hosts):
                return _plain(403, "refused: this action must come from the dashboard's own page (Origin)")
        resp = await call_next(request)
        resp.headers["Content-Security-Policy"] = CSP
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Referrer-Policy"] = "same-origin"
        resp.headers["X-Frame-Options"] = "DENY"
        resp.headers.setdefault("Cache-Control", "no-store")
        return resp

    def sid(request: Request) -> str | None:
        v = request.cookies.get(SESSION_COOKIE)
        return v if sessions.valid(v) else None

    async def form(request: Request) -> dict[str, str]:
        from urllib.parse import parse_qsl

        body = (await request.body()).decode("utf-8", errors="replace")  # ≤ MAX_FORM_BYTES (BodyLimit)
        return dict(parse_qsl(body, keep_blank_values=True))

    def html_page(
        request: Request, title: str, body: str, flash: str = "", kind: str = "ok", status: int = 200
    ) -> HTMLResponse:
        s = sid(request)
        return HTMLResponse(
            render.page(
                title, body, session=s is not None, csrf=sessions.csrf(s) if s else "", flash=flash, flash_kind=kind
            ),
            status_code=status,
        )

    def flash_of(request: Request) -> tuple[str, str]:
        return render.flash(request.query_params)

    def old_worlds(request: Request) -> bool:
        """?old_worlds=1: also operations and parts of earlier worlds (mcb world reset), marked."""
        return request.query_params.get("old_worlds") == "1"

    async def overview_body(s: str | None, old: bool = False) -> str:
        csrf = sessions.csrf(s) if s else ""
        health, redis, world, cam = await asyncio.gather(
            sources.health(), sources.redis_info(), sources.world_info(), sources.camera_state()
        )
        parts = [render.services_section(health, redis, world, csrf, s is not None)]
        try:
            ops = await sources.operations(old_worlds=old)
            parts.append(
                render.operations_section(
                    [as_dict(o) for o in ops.operations], dict(ops.state_counts), ops.old_world_operations, old
                )
            )
        except McbError as exc:
            parts.append(
                f'<section id="operations"><h2>Operations</h2><p class="bad">{render.e(exc.message)}</p></section>'
            )
        try:
            projects = as_dict(await sources.projects(old_worlds=old))
            parts.append(render.projects_section(projects, old))
            chat = await sources.chat_queues([p["project_id"] for p in projects.get("projects", [])])
        except McbError as exc:
            parts.append(
                f'<section id="projects"><h2>Projects</h2><p class="bad">{render.e(exc.message)}</p></section>'
            )
            chat = {}
        parts.append(render.chat_section(chat))
        parts.append(render.camera_section(cam))
        return "".join(parts)

    @app.get("/", response_class=HTMLResponse)
    async def index(request: Request):
        msg, kind = flash_of(request)
        return html_page(request, "Overview", await overview_body(sid(request), old_worlds(request)), msg, kind)

    @app.get("/fragments/operations", response_class=HTMLResponse)
    async def ops_fragment(request: Request):
        try:
            ops = await sources.operations(old_worlds=old_worlds(request))
        except McbError as exc:
            return _plain(STATUS.get(exc.code, 502), exc.message)
        return HTMLResponse(
            render.operations_section(
                [as_dict(o) for o in ops.operations],
                dict(ops.state_counts),
                ops.old_world_operations,
                old_worlds(request),
            )
        )

    @app.get("/operations/{op_id}", response_class=HTMLResponse)
    async def operation(request: Request, op_id: str):
        s = sid(request)
        if op_id.startswith("pl_"):  # a prepared plan: no operation yet, its preview (issue 32)
            project = request.query_params.get("project", "")
            try:
                project, head = await sources.plan(op_id, project)
            except McbError as exc:
                return html_page(
                    request,
                    "Plan",
                    f'<p class="bad">{render.e(exc.code)}: {render.e(exc.message)}</p>',
                    status=STATUS.get(exc.code, 502),
                )
            rb = rollbacks.get(op_id)
            blocks = None
            if rb is not None and int(rb.summary.get("total_positions", 0)) <= 5000:
                try:
                    blocks = (await sources.plan_blocks(op_id, project))[: rollbackpage.LIST_BLOCKS]
                except McbError as exc:
                    log.warning("dashboard: blocks of plan %s unreadable: %s: %s", op_id, exc.code, exc.message)
            csrf = sessions.csrf(s) if s else ""
            msg, kind = flash_of(request)
            body = render.plan_page(project, as_dict(head)) + rollbackpage.section(
                rb, op_id, project, blocks, csrf, s is not None
            )
            return html_page(request, f"Plan {op_id}", body, msg, kind)
        try:
            entry = as_dict(await sources.operation(op_id))
        except McbError as exc:
            return html_page(
                request, "Operation", f'<p class="bad">{render.e(exc.message)}</p>', status=STATUS.get(exc.code, 502)
            )
        review, review_error = None, ""
        if entry["report"]["state"] == "recovery_required":
            try:
                review = await sources.recovery_review(op_id)
            except McbError as exc:
                review_error = exc.message
        cam = await sources.camera_state()
        msg, kind = flash_of(request)
        body = render.operation_page(
            entry, cam["captures"], review, review_error, sessions.csrf(s) if s else "", s is not None
        )
        return html_page(request, f"Operation {op_id}", body, msg, kind)

    @app.get("/captures/{capture_id}.png")
    async def capture(capture_id: str, project: str = ""):
        try:
            png = await sources.capture_png(capture_id, project)
        except McbError as exc:
            return _plain(STATUS.get(exc.code, 502), exc.message)
        if png is None:
            return _plain(404, "capture not ready")
        return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=86400"})

    @app.get("/plans/{plan_id}/preview.png")
    async def plan_preview(plan_id: str, project: str = ""):
        if not plan_id.startswith("pl_") or not plan_id.replace("_", "").isalnum() or len(plan_id) > 64:
            return _plain(404, "not a plan id")
        try:
            png = await sources.plan_preview_png(plan_id, project)
        except McbError as exc:
            return _plain(STATUS.get(exc.code, 502), f"{exc.code}: {exc.message}")
        return Response(png, media_type="image/png", headers={"Cache-Control": "no-store"})

    def _int(request: Request, name: str) -> int | None:
        v = request.query_params.get(name, "")
        try:
            return int(float(v)) if v.strip() else None  # at.x / at.y may be fractional
        except ValueError:
            raise McbError(ErrorCode.INVALID_REQUEST, f"{name} must be a number (got {v[:20]!r})") from None

    async def history_window(request: Request, project_id: str):
        project = await sources.project(project_id)
        win = histmap.window(project["area"], _int(request, "x0"), _int(request, "z0"))
        until = _int(request, "until") or 0
        if until < 0:
            raise McbError(ErrorCode.INVALID_REQUEST, "until is a time in milliseconds since 1970 (0: now)")
        return project, win, until

    @app.get("/projects/{project_id}/history", response_class=HTMLResponse)
    async def history(request: Request, project_id: str):
        """The History page (issue 32): the map as of ``until``, a clicked column's history."""
        try:
            project, win, until = await history_window(request, project_id)
            ax, ay, x, z = (_int(request, k) for k in ("at.x", "at.y", "x", "z"))
            doc = await sources.history_map(project_id, win.box(), until)
        except McbError as exc:
            return html_page(
                request,
                "History",
                f'<p class="bad">{render.e(exc.code)}: {render.e(exc.message)}</p>',
                status=STATUS.get(exc.code, 502),
            )
        col = win.column_at(ax, ay) if ax is not None and ay is not None else None
        if col is None and x is not None and z is not None:
            col = (x, z)  # a link to a column (the journal refuses one outside the area)
        column = ""
        if col is not None:
            box = {"min": {"x": col[0], "y": win.y0, "z": col[1]}, "max": {"x": col[0], "y": win.y1, "z": col[1]}}
            try:
                column = historypage.column_section(
                    col[0], col[1], await sources.column_history(project_id, box), "", until
                )
            except McbError as exc:
                column = historypage.column_section(col[0], col[1], None, f"{exc.code}: {exc.message}", until)
        s = sid(request)
        whom = doc["legend"]
        if until:  # the slider set back: also whoever changed a column since (the ones to roll back)
            try:
                whom = whom + (await sources.history_map(project_id, win.box(), 0))["legend"]
            except McbError as exc:
                log.warning("dashboard: the map as of now unreadable: %s: %s", exc.code, exc.message)
        rb_form = rollbackpage.form(
            project_id,
            whom,
            win.x0,
            win.z0,
            until + 1 if until else int(doc["last_millis"]),  # changes after what the map shows
            sessions.csrf(s) if s else "",
            s is not None,
        )
        body = historypage.page(
            project, win, doc, until, column, lambda w: rollbackpage.legend_button(w, s is not None), rb_form
        )
        msg, kind = flash_of(request)
        return html_page(request, f"History of {project_id}", body, msg, kind)

    @app.get("/projects/{project_id}/history.png")
    async def history_png(request: Request, project_id: str):
        try:
            _project, win, until = await history_window(request, project_id)
            doc = await sources.history_map(project_id, win.box(), until)
        except McbError as exc:
            return _plain(STATUS.get(exc.code, 502), f"{exc.code}: {exc.message}")
        return Response(histmap.png(win, doc), media_type="image/png", headers={"Cache-Control": "no-store"})

    @app.get("/events")
    async def events(request: Request):
        """Server-sent events: the journal's progress stream, from now (or Last-Event-ID)."""
        last = request.headers.get("last-event-id") or "$"

        async def stream():
            nonlocal last
            yield "retry: 2000\n\n"
            while not await request.is_disconnected():
                try:
                    if last == "$":  # from now: the newest entry, so nothing between two reads is lost
                        last = await sources.progress_tail()
                    batch = await sources.progress_events(last)
                except Exception as exc:  # noqa: BLE001 - Redis away: tell the page, try again
                    yield f"event: problem\ndata: {json.dumps({'error': exc.__class__.__name__})}\n\n"
                    await asyncio.sleep(2)
                    continue
                if not batch:
                    yield ": keep-alive\n\n"
                for entry_id, ev in batch:
                    last = entry_id
                    yield f"id: {entry_id}\nevent: progress\ndata: {json.dumps(ev, separators=(',', ':'))}\n\n"

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        )

    @app.get("/static/{name}")
    async def static(name: str):
        if name not in statics:
            return _plain(404, "not found")
        mime, data = statics[name]
        return Response(data, media_type=mime, headers={"Cache-Control": "max-age=300"})

    @app.get("/favicon.ico")
    async def favicon():  # what a browser asks for without a <link rel="icon"> (a bookmark, a raw URL)
        mime, data = statics["favicon.svg"]
        return Response(data, media_type=mime, headers={"Cache-Control": "max-age=86400"})

    @app.get("/health")
    async def health():
        return JSONResponse({"status": "ok", "service": "dashboard", **health_fields(__version__)})

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception):  # the boundary for bugs: /health shows it
        record_exception(exc)
        log.error("dashboard: %s %s failed", request.method, request.url.path, exc_info=exc)
        return _plain(500, "dashboard internal error; see the dashboard log")

    # ------------------------------------------------------------------ session
    throttle = LoginThrottle()

    @app.post("/login")
    async def login(request: Request):
        f = await form(request)
        new = sessions.login(f.get("token", ""))
        if new is None:  # answered late on this connection only; nothing is locked (security.py)
            client = request.client
            connection = f"{client.host}:{client.port}" if client else "unknown"
            n, delay = throttle.wrong(connection)
            log.warning(
                "dashboard login refused: wrong admin token (wrong try %d on connection %s, answered after %.0f s)",
                n,
                connection,
                delay,
            )
            await asyncio.sleep(delay)
            return _back("/", "wrong_token")
        log.info("dashboard admin session started")
        resp = _back("/", "logged_in")
        resp.set_cookie(SESSION_COOKIE, new, httponly=True, samesite="strict", path="/", max_age=12 * 3600)
        return resp

    @app.post("/logout")
    async def logout(request: Request):
        f = await form(request)
        s = sid(request)
        if s and sessions.csrf_ok(s, f.get("csrf")):
            sessions.logout(s)
        resp = _back("/", "logged_out")
        resp.delete_cookie(SESSION_COOKIE, path="/")
        return resp

    async def admin_action(request: Request) -> tuple[dict[str, str], Response | None]:
        f = await form(request)
        s = sid(request)
        if s is None:
            return f, _plain(401, "refused: actions need the admin token (log in on the dashboard first)")
        if not sessions.csrf_ok(s, f.get("csrf")):
            return f, _plain(403, "refused: missing or wrong CSRF token; reload the page and try again")
        return f, None

    @app.post("/actions/{what}")
    async def pause_resume(request: Request, what: str):
        f, refused = await admin_action(request)
        if refused:
            return refused
        if what not in ("pause", "resume"):
            return _plain(404, "unknown action")
        try:
            res = await sources.set_paused(what == "pause", "paused from the ops dashboard")
        except McbError as exc:
            log.warning("dashboard: %s failed: %s: %s", what, exc.code, exc.message)
            return _back("/", f"{what}_failed", code=str(exc.code))
        log.info("dashboard: writes %s", "paused" if res.get("paused") else "resumed")
        return _back("/", "paused" if res.get("paused") else "resumed")

    @app.post("/projects/{project_id}/rollback")
    async def rollback_prepare(request: Request, project_id: str):
        """Prepare rollback (issue 32 item 4): the journal's RollbackPrepare, then the plan's page."""
        f, refused = await admin_action(request)
        if refused:
            return refused
        here = f"/projects/{project_id}/history"
        try:
            player, cause = rollbackpage.parse_target(f.get("target") or f.get("who", ""))
            since = rollbackpage.parse_since(f.get("since", ""))
            project = await sources.project(project_id)
            if f.get("window") == "1":
                x0, z0 = (int(f[k]) if f.get(k, "").lstrip("-").isdigit() else None for k in ("x0", "z0"))
                region = histmap.window(project["area"], x0, z0).box()
            else:
                region = project["area"]
            summary = await sources.rollback_prepare(project_id, region, player, cause, since)
            label = f"environment: {cause}" if cause else f"player {player}"
            if player:  # the name the journal saw, for the page
                mine = await sources.history_of(project_id, region, since, player=player, limit=1)
                label = histmap.label(mine[0]) if mine else label
            rb = rollbackpage.Rollback(project_id, label, since, summary)
            for c in summary.get("conflicts", []):  # who made the later edits it leaves alone
                p = c.get("pos", {})
                at = (p.get("x", 0), p.get("y", 0), p.get("z", 0))
                one = {"min": dict(zip("xyz", at, strict=True)), "max": dict(zip("xyz", at, strict=True))}
                rb.later[at] = rollbackpage.later_edits(await sources.history_of(project_id, one, since), player, cause)
        except McbError as exc:
            log.warning("dashboard: rollback in %s refused: %s: %s", project_id, exc.code, exc.message)
            return _back(here, "rollback_refused", code=str(exc.code))
        rollbacks.put(rb)
        log.info("dashboard: rollback of %s prepared in %s: %s", label, project_id, summary["plan_id"])
        return _back(f"/operations/{summary['plan_id']}", "rollback_prepared", project=project_id)

    @app.post("/operations/{op_id}/{what}")
    async def op_action(request: Request, op_id: str, what: str):
        f, refused = await admin_action(request)
        if refused:
            return refused
        here = f"/operations/{op_id}"
        if what == "apply":  # Apply rollback: a plan this dashboard prepared (its summary names the consent)
            rb = rollbacks.get(op_id)
            if rb is None:
                return _plain(
                    404, "this dashboard did not prepare that rollback (or restarted since); prepare it again"
                )
            try:
                rep = await sources.build_apply(
                    rb.project_id, op_id, rb.summary["plan_hash"], f.get("replace_player_blocks") == "1"
                )
            except McbError as exc:
                log.warning("dashboard: apply %s refused: %s: %s", op_id, exc.code, exc.message)
                return _back(here, "apply_refused", code=str(exc.code), project=rb.project_id)
            log.info("dashboard: apply %s -> %s %s", op_id, rep.operation_id, rep.state)
            return _back(f"/operations/{rep.operation_id}", "apply_done", state=rep.state)
        try:
            if what == "cancel":
                entry = await sources.operation(op_id)
                rep = await sources.cancel(op_id, entry.project_id)
            elif what == "abandon":
                rep = await sources.recovery_abandon(op_id, f.get("digest", ""))
            else:
                return _plain(404, "unknown action")
        except McbError as exc:
            log.warning("dashboard: %s %s refused: %s: %s", what, op_id, exc.code, exc.message)
            return _back(here, f"{what}_refused", code=str(exc.code))
        log.info("dashboard: %s %s -> %s", what, op_id, rep.state)
        return _back(here, f"{what}_done", state=rep.state)

    return app


def _plain(status: int, text: str) -> Response:
    return Response(text + "\n", status_code=status, media_type="text/plain; charset=utf-8")


def _back(path: str, msg: str, **params: str) -> RedirectResponse:
    """See other: ``path`` with the status line ``msg``, a key of ``render.FLASH`` (its words are
    the server's, never the link's)."""
    from urllib.parse import urlencode

    if msg not in render.FLASH:
        raise KeyError(f"no status line {msg!r}")
    return RedirectResponse(f"{path}?{urlencode({'msg': msg, **params})}", status_code=303)


async def main_async() -> None:
    import os

    s = Settings.from_env()
    admin = read_token(s.secrets_dir, "admin")
    if not admin:
        log.warning("no admin token in %s: the dashboard is read-only and shows no journal data", s.secrets_dir)
    sources = Sources(s, admin, s.world_host_token("service"))
    port = s.port("dashboard")
    hosts = allowed_hosts(port, os.environ.get("MCB_DASHBOARD_ALLOWED_HOSTS", ""))
    app = create_app(sources, Sessions(admin), hosts)
    config = uvicorn.Config(
        app,
        host=s.bind_host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
        http="h11",
    )  # not httptools: it drops an h2c-upgrade request's body
    server = uvicorn.Server(config)
    log.info("dashboard listening on http://%s:%d/", s.bind_host, port)
    try:
        await server.serve()
    finally:
        await sources.aclose()
