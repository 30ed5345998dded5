"""The dashboard's security rules (security.py) and their enforcement at the HTTP boundary
(app.py), without a stack: actions are refused before any source is called."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from mcb_dashboard.app import create_app
from mcb_dashboard.security import (
    SESSION_COOKIE,
    WRONG_DELAY_MAX_S,
    WRONG_DELAY_S,
    LoginThrottle,
    Sessions,
    allowed_hosts,
    host_ok,
    origin_ok,
)
from mcb_dashboard.sources import Sources
from mcb_rpc.settings import Settings

ADMIN = "admin-secret-token-value"
HOSTS = allowed_hosts(8790)
BASE = "http://127.0.0.1:8790"


def test_host_and_origin_rules():
    assert host_ok("127.0.0.1:8790", HOSTS) and host_ok("localhost:8790", HOSTS)
    assert not host_ok("evil.example:8790", HOSTS) and not host_ok(None, HOSTS) and not host_ok("127.0.0.1:80", HOSTS)
    assert origin_ok(BASE, None, HOSTS) and origin_ok(None, BASE + "/operations/x", HOSTS)
    assert not origin_ok("http://evil.example", BASE, HOSTS)  # Origin wins over Referer
    assert not origin_ok("null", None, HOSTS) and not origin_ok(None, None, HOSTS)
    assert not origin_ok("https://127.0.0.1:8790", None, HOSTS)
    assert "dash.local:80" in allowed_hosts(8790, "dash.local:80, ")


def test_sessions_keep_no_token_and_wrong_guesses_never_lock_the_owner_out():
    s = Sessions(ADMIN)
    sid = s.login(ADMIN, now=0)
    assert sid and s.valid(sid, now=1) and not s.valid("x", now=1)
    assert ADMIN not in repr(s.__dict__) and sid not in repr(s.__dict__)  # only digests are kept
    assert s.csrf_ok(sid, s.csrf(sid)) and not s.csrf_ok(sid, "0" * 64) and not s.csrf_ok(None, s.csrf(sid))
    for i in range(100):  # a guess loop from any local process ...
        assert s.login(f"wrong-{i}", now=10 + i / 100) is None
    assert s.login(ADMIN, now=11) is not None  # ... never keeps the right token out
    s.logout(sid)
    assert not s.valid(sid, now=2)


def test_wrong_tries_are_slowed_per_connection_only():
    t = LoginThrottle()
    delays = [t.wrong("127.0.0.1:5000")[1] for _ in range(6)]
    assert delays[0] == WRONG_DELAY_S and delays == sorted(delays) and delays[-1] == WRONG_DELAY_MAX_S
    assert t.wrong("127.0.0.1:5001") == (1, WRONG_DELAY_S)  # another connection starts afresh


@pytest.fixture
def client(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MCB_RUNTIME_DIR", str(tmp_path))

    async def make() -> Sources:  # its gRPC channels bind to the running loop, as under `main_async`
        return Sources(Settings.from_env(), ADMIN, "service")

    loop = asyncio.new_event_loop()  # this test's own loop: not whatever an earlier test left as current
    try:
        sources = loop.run_until_complete(make())
        app = create_app(sources, Sessions(ADMIN), HOSTS)
        with TestClient(app, base_url=BASE) as c:
            yield c
        loop.run_until_complete(sources.aclose())
    finally:
        loop.close()


def test_actions_need_origin_session_and_csrf(client):
    assert client.get("/health", headers={"Host": "rebound.example:8790"}).status_code == 421
    assert client.post("/actions/pause", data={"csrf": "x"}).status_code == 403  # no Origin
    assert client.post("/actions/pause", data={"csrf": "x"}, headers={"Origin": BASE}).status_code == 401
    r = client.post("/login", data={"token": "wrong"}, headers={"Origin": BASE}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/?msg=wrong_token" and SESSION_COOKIE not in r.cookies
    r = client.post("/login", data={"token": ADMIN}, headers={"Origin": BASE}, follow_redirects=False)
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict") and ADMIN not in cookie
    assert client.post("/actions/pause", data={"csrf": "x"}, headers={"Origin": BASE}).status_code == 403
    assert client.post("/operations/op_x/abandon", data={"csrf": ""}, headers={"Origin": BASE}).status_code == 403
    r = client.get("/health")
    assert "default-src 'none'" in r.headers["content-security-policy"] and r.headers["x-frame-options"] == "DENY"


def test_a_status_line_is_only_one_of_the_servers_own():
    """Issue 33 item 4: the link names a status line by code (render.FLASH); arbitrary text in it
    gives none. The page itself: tests/e2e/test_dashboard.py."""
    from mcb_dashboard.render import flash

    made_up = "The world was deleted; paste your admin token at evil.example"
    for query in (
        {"msg": made_up},
        {"msg": made_up, "kind": "bad"},
        {"msg": "cancel_done", "state": made_up},
        {"msg": "abandon_refused", "code": made_up},
        {"msg": "logged_in{state}"},
    ):
        assert flash(query) == ("", "ok"), query
    assert flash({"msg": "logged_in", "kind": "bad"}) == ("logged in", "ok")  # the kind is the server's too
    assert flash({"msg": "cancel_done", "state": "cancelled"}) == ("cancel: the operation is now cancelled", "ok")
    assert flash({"msg": "abandon_refused", "code": "invalid_request"})[1] == "bad"
