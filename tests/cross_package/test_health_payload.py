"""The shared /health payload (mcb_rpc.health): uptime, start, and the last server-side error,
recorded at the gRPC boundary (abort_with / abort_internal) and shown short and redacted."""

from __future__ import annotations

import asyncio
from datetime import datetime

import grpc
import pytest
from fastapi.testclient import TestClient
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc import errors, health
from mcb_rpc.service import health_app

TOKEN = "Zq3vXc9-kLm_8PqRsT2uVwXyZ01aBcDeFgHiJkLmNoP"  # the shape of secrets.token_urlsafe(32)


class Clock:
    def __init__(self, t: float):
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def state(monkeypatch) -> health.HealthState:
    s = health.HealthState(clock=Clock(100.0), wall=Clock(1_800_000_000.0))
    monkeypatch.setattr(health, "PROCESS", s)
    return s


def test_payload_has_version_uptime_start_and_no_error_at_first(state):
    state._clock.t = 112.34
    p = state.payload("1.2.3")
    assert p == {"version": "1.2.3", "uptime_s": 12.3, "started_at": "2027-01-15T08:00:00Z", "last_error": None}
    assert datetime.fromisoformat(p["started_at"].replace("Z", "+00:00")).timestamp() == 1_800_000_000.0


def test_only_server_side_failures_are_recorded(state):
    for code in (
        ErrorCode.INVALID_REQUEST,
        ErrorCode.NOT_FOUND,
        ErrorCode.UNAUTHENTICATED,
        ErrorCode.PERMISSION_DENIED,
        ErrorCode.CONFLICT,
        ErrorCode.BUDGET_EXCEEDED,
    ):
        assert not state.record(McbError(code, "the caller's fault"))
    assert state.last_error is None
    assert state.record(McbError(ErrorCode.UNAVAILABLE, "world host unreachable at http://127.0.0.1:1: ConnectError"))
    assert state.last_error == {
        "code": "unavailable",
        "at": "2027-01-15T08:00:00Z",
        "message": "world host unreachable at http://127.0.0.1:1: ConnectError",
    }
    assert state.record(McbError(ErrorCode.INTERNAL, "boom"))
    assert state.last_error["code"] == "internal"


@pytest.mark.parametrize(
    "text",
    [
        f"connect failed with token {TOKEN}",
        f"Authorization: Bearer {TOKEN}",
        f"bad header bearer {TOKEN[:12]}",
        "token=hunter2 rejected",
        "could not read /run/mcb/secrets/admin.token",
        "open('/home/u/.config/mcb/service.token') failed",
    ],
)
def test_exception_text_with_a_secret_is_recorded_redacted_and_short(state, text):
    state.record_exception(RuntimeError(text + "\n" + "x " * 500))
    err = state.last_error
    assert err["code"] == "internal" and err["message"].startswith("RuntimeError: ")
    assert len(err["message"]) <= health.MAX_MESSAGE and "\n" not in err["message"]
    for secret in (TOKEN, TOKEN[:12], "hunter2", "secrets/admin.token", "service.token"):
        assert secret not in err["message"], err
    assert health.REDACTED in err["message"]


def test_plain_messages_are_kept():
    for text in (
        "world host unreachable at http://127.0.0.1:8765: ConnectError",
        "the journal service took longer than 30 s to answer",
        "KeyError: 'minecraft:stone'",
    ):
        assert health.redact(text) == text


class FakeContext:
    def __init__(self):
        self.trailers = ()

    def set_trailing_metadata(self, md):
        self.trailers = md

    async def abort(self, code, message):
        raise grpc.aio.AbortError(f"{code}: {message}")


def test_the_grpc_boundary_records_server_side_errors_and_bugs(state):
    async def go():
        with pytest.raises(grpc.aio.AbortError):
            await errors.abort_with(FakeContext(), McbError(ErrorCode.INVALID_REQUEST, "bad recipe"))
        assert state.last_error is None
        ctx = FakeContext()
        with pytest.raises(grpc.aio.AbortError) as raised:
            await errors.abort_internal(ctx, ValueError(f"leaked {TOKEN}"), "journal internal error; see the log")
        assert TOKEN not in str(raised.value) and "leaked" not in str(raised.value)  # the caller: no internals
        assert "internal" in ctx.trailers[0][1]

    asyncio.run(go())
    assert state.last_error["message"] == f"ValueError: leaked {health.REDACTED}"


def test_health_app_adds_the_shared_fields_without_auth(state):
    async def body():
        return {"status": "ok", "version": "9.9"}

    state.record(McbError(ErrorCode.UNAVAILABLE, "redis unreachable"))
    r = TestClient(health_app("demo", body)).get("/health")
    assert r.status_code == 200
    got = r.json()
    assert got["service"] == "demo" and got["version"] == "9.9" and got["uptime_s"] == 0.0
    assert got["started_at"] == "2027-01-15T08:00:00Z"
    assert got["last_error"]["code"] == "unavailable" and got["last_error"]["message"] == "redis unreachable"
