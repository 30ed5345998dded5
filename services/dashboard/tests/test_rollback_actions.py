"""The dashboard's Prepare rollback (issue 32 item 4) against a real journal: the journal's core
(services/journal tests' ``make_core``, its world ``AirWorld``: air everywhere, no block event)
served by its real servicers and token tables over real gRPC on loopback, the dashboard's real app
over ASGI. Refusals happen before the journal is called (no login, wrong CSRF); the journal's own
refusal comes back as a status line; a prepared rollback leads to its plan's page; no token is
ever on a page. The whole flow with a griefer in Chromium: tests/e2e/test_dashboard_history.py."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import grpc
import httpx
import pytest
from mcb.journal.v1 import journal_pb2_grpc
from mcb_dashboard.app import create_app
from mcb_dashboard.security import Sessions, allowed_hosts
from mcb_dashboard.sources import Sources
from mcb_journal.servicer import JournalAdminServicer, JournalServicer
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import TokenTable

from services.journal.tests.test_executor_queue import make_core
from services.journal.tests.test_plan_summary_size import AirWorld

ADMIN = "admin-token-for-the-rollback-test"
AGENT = "agent-token-for-the-rollback-test"
BASE = "http://127.0.0.1:8790"
ORIGIN = {"Origin": BASE}


async def _flow(tmp_path: Path, monkeypatch) -> dict[str, object]:
    core = make_core(tmp_path, AirWorld())  # air everywhere, no block event: nothing to restore
    tokens = TokenTable({"admin": ADMIN, "agent": AGENT})
    server = grpc.aio.server()
    journal_pb2_grpc.add_JournalServicer_to_server(JournalServicer(core, tokens), server)
    journal_pb2_grpc.add_JournalAdminServicer_to_server(JournalAdminServicer(core, tokens), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    monkeypatch.setenv("MCB_RUNTIME_DIR", str(tmp_path / "rt"))
    monkeypatch.setenv("MCB_JOURNAL_ADDR", f"127.0.0.1:{port}")
    sources = Sources(Settings.from_env(), ADMIN, "service")
    app = create_app(sources, Sessions(ADMIN), allowed_hosts(8790))
    out: dict[str, object] = {}
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as c:
            form = {"csrf": "x", "target": "environment:explosion", "since": "2026-12-02 15:00:00 UTC"}
            out["no_login"] = (await c.post("/projects/p/rollback", data=form, headers=ORIGIN)).status_code
            out["no_origin"] = (await c.post("/projects/p/rollback", data=form)).status_code
            out["apply_no_login"] = (await c.post("/operations/pl_0/apply", data=form, headers=ORIGIN)).status_code
            r = await c.post("/login", data={"token": ADMIN}, headers=ORIGIN)
            assert r.status_code == 303 and r.headers["location"] == "/?msg=logged_in"
            out["bad_csrf"] = (await c.post("/projects/p/rollback", data=form, headers=ORIGIN)).status_code
            page = (await c.get("/projects/p/history")).text
            csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page)  # the page's (logout form)
            out["history_without_changes"] = page
            assert csrf, page
            form["csrf"] = csrf.group(1)
            # the journal refuses an unknown cause (blame.check_query): a status line, not a traceback
            r = await c.post("/projects/p/rollback", data=form | {"target": "environment:meteor"}, headers=ORIGIN)
            out["refused_location"] = r.headers.get("location", "")
            out["refused_page"] = (await c.get(r.headers["location"])).text
            r = await c.post(
                "/projects/p/rollback", data=form | {"window": "1", "x0": "-50", "z0": "-50"}, headers=ORIGIN
            )
            out["prepared_location"] = r.headers.get("location", "")
            out["plan_page"] = (await c.get(r.headers["location"])).text
            r = await c.post("/operations/pl_0123456789abcdef/apply", data={"csrf": form["csrf"]}, headers=ORIGIN)
            out["apply_unknown"] = (r.status_code, r.text)
            out["parse_refused"] = (
                await c.post("/projects/p/rollback", data=form | {"since": "yesterday"}, headers=ORIGIN)
            ).headers.get("location", "")
    finally:
        await sources.aclose()
        await server.stop(None)
        core.db.close()
    return out


@pytest.fixture
def flow(tmp_path, monkeypatch):
    return asyncio.run(_flow(tmp_path, monkeypatch))


def test_refused_without_login_origin_or_csrf(flow):
    assert flow["no_login"] == 401 and flow["no_origin"] == 403 and flow["bad_csrf"] == 403
    assert flow["apply_no_login"] == 401


def test_apply_is_only_for_a_rollback_this_dashboard_prepared(flow):
    status, text = flow["apply_unknown"]
    assert status == 404 and "did not prepare that rollback" in text


def test_the_journals_refusal_is_a_status_line(flow):
    assert flow["refused_location"] == "/projects/p/history?msg=rollback_refused&code=invalid_request"
    assert 'role="status">rollback refused (invalid_request); the dashboard log says why' in flow["refused_page"]
    assert flow["parse_refused"] == "/projects/p/history?msg=rollback_refused&code=invalid_request"


def test_a_prepared_rollback_leads_to_its_plans_page(flow):
    loc = str(flow["prepared_location"])
    assert re.fullmatch(r"/operations/pl_[0-9a-f]{16}\?msg=rollback_prepared&project=p", loc), loc
    page = str(flow["plan_page"])
    assert "rollback prepared: nothing is written until it is applied" in page
    assert "Rollback of environment: explosion since 2026-12-02 15:00:00.000 UTC" in page
    assert "0 blocks return to how they were before" in page and "Nothing to restore." in page
    assert "/ai apply" in page and "build_apply" in page


def test_no_token_on_any_page(flow):
    for key in ("history_without_changes", "refused_page", "plan_page"):
        assert ADMIN not in str(flow[key]) and AGENT not in str(flow[key])
