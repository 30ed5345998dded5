"""Hostile and malformed requests, against the simulator AND the Mono-compiled mod core (issue 28,
Deliver 6): no cross-origin writes, no starvation by slow clients, a JSON error for every bad
request, a busy port logged and retried. Only loopback traffic; every loop is bounded."""

from __future__ import annotations

import json
import select
import socket
import subprocess
import threading
import time
import urllib.request
from typing import Any

import pytest

from .conftest import end_host, schema_validator

ERROR = schema_validator("Error")
DIG = b'{"x": 1, "y": 1, "width": 1, "height": 1}'


def raw_request(url: str, data: bytes, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    """Sends bytes as they are; the status, headers (lower-case) and body of the answer."""
    host, port = url.split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(data)
        chunks = []
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            if not b:
                break
            chunks.append(b)
    raw = b"".join(chunks)
    assert raw, "the connection closed without an answer"
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    return status, headers, body


def request(method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    h = {"Host": "127.0.0.1", **(headers or {})}
    if body or method == "POST":
        h.setdefault("Content-Length", str(len(body)))
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in h.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def json_error(url: str, data: bytes, status: int, error: str) -> dict[str, Any]:
    got, headers, body = raw_request(url, data)
    assert headers.get("content-type", "").startswith("application/json"), (got, headers, body[:200])
    payload = json.loads(body)
    assert (got, payload.get("error")) == (status, error), payload
    ERROR.validate(payload)
    return payload


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize("method,path,body", [("POST", "/api/action/dig", DIG), ("GET", "/api/state/game", b"")])
def test_a_request_with_an_origin_is_refused(mod_url: str, method: str, path: str, body: bytes) -> None:
    """A web page's request carries Origin: it can neither act on the colony nor read it."""
    json_error(mod_url, request(method, path, body, {**JSON, "Origin": "http://evil.example"}), 403, "forbidden")
    json_error(mod_url, request(method, path, body, {**JSON, "Origin": "null"}), 403, "forbidden")


@pytest.mark.parametrize("host", ["evil.example", "evil.example:23876", "127.0.0.1.evil.example", "192.168.1.5"])
def test_a_non_loopback_host_is_refused(mod_url: str, host: str) -> None:
    """DNS rebinding: a page on a name that resolves to 127.0.0.1 still sends its own Host."""
    json_error(mod_url, request("POST", "/api/action/dig", DIG, {**JSON, "Host": host}), 403, "forbidden")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST:80", "[::1]:23876"])
def test_loopback_hosts_are_served(mod_url: str, host: str) -> None:
    status, _, body = raw_request(mod_url, request("GET", "/health", headers={"Host": host}))
    assert status == 200, body


@pytest.mark.parametrize(
    "ctype",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"],
)
def test_a_post_that_is_not_json_is_refused(mod_url: str, ctype: str | None) -> None:
    """The cross-origin 'simple request' of a page (text/plain, no preflight) never reaches the queue."""
    headers = {"Content-Type": ctype} if ctype else {}
    json_error(
        mod_url, request("POST", "/api/action/deconstruct", b'{"x": 1, "y": 1}', headers), 415, "invalid_request"
    )


def test_json_content_type_with_charset_is_served(mod_url: str) -> None:
    status, _, body = raw_request(
        mod_url, request("POST", "/api/action/dig", DIG, {"Content-Type": "Application/JSON; charset=utf-8"})
    )
    assert status == 200, body


@pytest.mark.parametrize(
    "raw",
    [
        b'{"x": 1e400, "y": 1, "width": 1, "height": 1}',
        b'{"x": -1e400}',
        b'{"x": NaN}',
        b'{"x": Infinity}',
        b"[" * 2000 + b"]" * 2000,
        b'{"a":' * 2000 + b"1" + b"}" * 2000,
    ],
)
def test_out_of_range_and_deep_json_is_a_400(mod_url: str, raw: bytes) -> None:
    json_error(mod_url, request("POST", "/api/action/dig", raw, JSON), 400, "invalid_request")


@pytest.mark.parametrize("length", ["abc", "-1", "+5", "1 2", "0x10", "99999999999999999999", ""])
def test_a_bad_content_length_is_a_400(mod_url: str, length: str) -> None:
    json_error(
        mod_url, request("POST", "/api/action/dig", DIG, {**JSON, "Content-Length": length}), 400, "invalid_request"
    )


def test_duplicate_content_length_is_a_400(mod_url: str) -> None:
    """Two lengths (equal or not) are refused, never guessed between (request smuggling; issue 33 item 5)."""
    n = str(len(DIG))
    for second in (n, "5"):
        data = (
            f"POST /api/action/dig HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {n}\r\nContent-Length: {second}\r\n\r\n"
        ).encode() + DIG
        json_error(mod_url, data, 400, "invalid_request")


def test_head_and_options_get_json(mod_url: str) -> None:
    payload = json_error(mod_url, request("OPTIONS", "/api/action/dig"), 405, "invalid_request")
    assert payload["details"]
    status, headers, body = raw_request(mod_url, request("HEAD", "/health"))
    assert status == 405 and headers["content-type"].startswith("application/json") and body == b""
    json_error(mod_url, request("DELETE", "/health"), 405, "invalid_request")
    json_error(mod_url, request("OPTIONS", "/nowhere"), 404, "not_found")


def test_health_stays_fast_with_60_slow_clients(mod_url: str) -> None:
    """60 clients each trickle one header byte every 2 s (for 8 s); /health answers in under 1 s
    throughout. Bounded: 60 sockets, 4 rounds of bytes, loopback only."""
    host, port = mod_url.split("//", 1)[1].rsplit(":", 1)
    slow = [socket.create_connection((host, int(port)), timeout=5) for _ in range(60)]
    worst = 0.0
    try:
        prefix = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
        for s in slow:
            s.sendall(prefix[:1])
        for _ in range(4):
            round_end = time.monotonic() + 2
            while time.monotonic() < round_end:
                started = time.monotonic()
                with urllib.request.urlopen(mod_url + "/health", timeout=5) as r:
                    assert r.status == 200
                worst = max(worst, time.monotonic() - started)
                time.sleep(0.2)
            for s in slow:
                try:
                    s.sendall(b"a")
                except OSError:
                    pass  # the server may drop a client past its request deadline
    finally:
        for s in slow:
            s.close()
    assert worst < 1.0, f"/health took {worst:.3f} s with 60 slow clients"
    print(f"/health worst {worst * 1000:.1f} ms with 60 slow clients")


def test_a_trickling_request_is_cut_at_its_deadline(mod_url: str) -> None:
    """One byte every 0.5 s keeps every single read short: the whole request still has a deadline
    (5 s) and is answered 408 or closed then, not held while bytes keep coming. At most 30 bytes."""
    host, port = mod_url.split("//", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        started = time.monotonic()
        answered = b""
        for b in (b"GET /health HTTP/1.1\r\nX-Pad: " + b"a" * 30)[:30]:
            try:
                s.sendall(bytes([b]))
            except OSError:
                break
            readable, _, _ = select.select([s], [], [], 0.5)
            if readable:
                try:
                    answered = s.recv(4096)
                except OSError:
                    pass
                break
        elapsed = time.monotonic() - started
    assert 3 < elapsed < 9, f"the trickling request was held {elapsed:.1f} s"
    if answered:
        assert answered.startswith(b"HTTP/1.") and b" 408 " in answered.split(b"\r\n")[0], answered[:100]


def test_busy_port_is_logged_and_retried(mono_host_exe) -> None:
    """The mod core never throws out of OnLoad: on a busy port it logs and binds once the port is free."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    proc = subprocess.Popen(
        ["mono", str(mono_host_exe), "--port", str(port), "--retry-ms", "200"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        err = proc.stderr.readline()
        assert f"cannot listen on 127.0.0.1:{port}" in err and "trying again" in err, err
        assert proc.poll() is None, "the host died on a busy port"
        holder.close()
        out: list[str] = []
        t = threading.Thread(target=lambda: out.append(proc.stdout.readline()), daemon=True)
        t.start()
        t.join(10)
        assert out and f"listening on http://127.0.0.1:{port}" in out[0], out
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
            assert r.status == 200
    finally:
        holder.close()
        end_host(proc)
