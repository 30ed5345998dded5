"""HTTP transport of the simulator: 127.0.0.1 only, a bounded thread per connection, a game thread.

The game thread ticks the colony every ``tick_seconds`` (0 = only when told: ``POST /sim/step``
{"ticks": n}, the simulator's own extension for deterministic tests; it is not part of the mod API;
``GET /sim/queue`` lists the actions queued and not yet applied, for the same tests).

The transport refuses what the mod core's (oni-mod/core/HttpServer.cs) refuses, with the same JSON
errors: a request with an Origin header or a non-loopback Host (403 forbidden: a web page or DNS
rebinding), a POST without Content-Type: application/json (415), a bad or duplicate Content-Length,
a malformed request (400), HEAD/OPTIONS and other methods an endpoint does not take (405). At most
MAX_CONNECTIONS connections are served at once (one more gets 503 busy), and a request must arrive
whole within REQUEST_DEADLINE seconds of its connection (408), however slowly its bytes trickle.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .api import MAX_BODY, handle, parse_json
from .model import Colony

MAX_CONNECTIONS = 256
REQUEST_DEADLINE = 5.0
_LOOPBACK_HOST = re.compile(r"(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?", re.IGNORECASE)


def _error(status: int, error: str, details: str) -> tuple[int, Any, dict[str, str]]:
    return status, {"error": error, "details": details}, {}


def _refusal(method: str, headers: Any) -> tuple[int, Any, dict[str, str]] | None:
    """The transport's refusals (before the API sees the request), or None."""
    if headers.get_all("Origin"):
        return _error(403, "forbidden", "requests from web pages (an Origin header) are refused")
    hosts = headers.get_all("Host") or []
    if len(hosts) > 1:
        return _error(400, "invalid_request", "duplicate Host")
    if hosts and not _LOOPBACK_HOST.fullmatch(hosts[0].strip()):
        return _error(403, "forbidden", "Host must be 127.0.0.1, localhost or [::1]")
    lengths = headers.get_all("Content-Length") or []
    if len(lengths) > 1:
        return _error(400, "invalid_request", "duplicate Content-Length")
    if lengths and not re.fullmatch(r"\d{1,12}", lengths[0].strip()):
        return _error(400, "invalid_request", "bad Content-Length")
    if headers.get_all("Transfer-Encoding"):
        return _error(400, "invalid_request", "chunked bodies are not supported; send Content-Length")
    if method == "POST":
        media = (headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            return _error(415, "invalid_request", "POST needs Content-Type: application/json")
    if lengths and int(lengths[0]) > MAX_BODY:
        return _error(413, "invalid_request", f"request body over {MAX_BODY} bytes")
    return None


class _Deadlines:
    """Connections still reading their request, and when each must be read by. A watchdog answers
    408 and shuts the socket of any that is late, which ends the handler's blocked read."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reading: dict[socket.socket, tuple[float, threading.Lock]] = {}
        self.stop = threading.Event()

    def watch(self, sock: socket.socket, write_lock: threading.Lock) -> None:
        with self.lock:
            self.reading[sock] = (time.monotonic() + REQUEST_DEADLINE, write_lock)

    def done(self, sock: socket.socket) -> bool:
        """The request is read; False when the watchdog already answered it."""
        with self.lock:
            return self.reading.pop(sock, None) is not None

    def run(self) -> None:
        while not self.stop.wait(0.1):
            now = time.monotonic()
            with self.lock:
                late = [(s, lk) for s, (t, lk) in self.reading.items() if t < now]
                for s, _ in late:
                    del self.reading[s]
            for s, write_lock in late:
                with write_lock:
                    _send_json(
                        s,
                        408,
                        {
                            "error": "request_timeout",
                            "details": f"the whole request must arrive within {REQUEST_DEADLINE:g} s",
                        },
                    )
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def _send_json(sock: socket.socket, status: int, payload: Any, head_only: bool = False) -> None:
    data = json.dumps(payload, separators=(",", ":")).encode()
    reason = {403: "Forbidden", 408: "Request Timeout", 503: "Service Unavailable"}.get(status, "Error")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json; charset=utf-8\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode()
    try:
        sock.settimeout(1.0)
        sock.sendall(head if head_only else head + data)
    except OSError:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type, deadlines: _Deadlines) -> None:
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.deadlines = deadlines
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            _send_json(request, 503, {"error": "busy", "details": "too many open connections; retry"})
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.deadlines.done(request)
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away (or was cut at its deadline): nothing to report


class SimServer:
    def __init__(self, colony: Colony, port: int = 23876, tick_seconds: float = 0.0) -> None:
        self.colony, self.tick_seconds = colony, tick_seconds
        self._stop = threading.Event()
        self._deadlines = _Deadlines()
        sim = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True
            timeout = REQUEST_DEADLINE  # per read; the whole request is bounded by the watchdog

            def setup(self) -> None:
                super().setup()
                self.write_lock = threading.Lock()
                sim._deadlines.watch(self.connection, self.write_lock)

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
                # the base class answers malformed requests (request line, header size) in HTML
                self.close_connection = True
                self._answer(code, {"error": "invalid_request", "details": message or explain or "bad request"}, {})

            def _answer(self, status: int, payload: Any, headers: dict[str, str]) -> None:
                if not sim._deadlines.done(self.connection):
                    self.close_connection = True
                    return  # the watchdog answered 408 already
                data = json.dumps(payload, separators=(",", ":")).encode()
                with self.write_lock:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.send_header("Connection", "close")
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    if self.command != "HEAD":  # a HEAD answer has the JSON error's headers, no body
                        self.wfile.write(data)
                self.close_connection = True

            def _serve(self) -> None:
                refused = _refusal(self.command, self.headers)
                if refused:
                    self._answer(*refused)
                    return
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if len(body) < length:
                    self.close_connection = True
                    return  # cut short (or at its deadline): nobody to answer
                query = dict(parse_qsl(parts.query))
                if parts.path == "/sim/step" and self.command == "POST":
                    self._answer(*sim._step(body))
                elif parts.path == "/sim/queue" and self.command == "GET":
                    with sim.colony.lock:
                        pending = [{"id": i, "action": k, "body": v} for i, k, v in sim.colony.queue]
                    self._answer(200, {"pending": pending, "tick": sim.colony.tick_count}, {})
                else:
                    self._answer(*handle(sim.colony, self.command, parts.path, query, body))

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve  # noqa: N815

        self.httpd = _Server(("127.0.0.1", port), Handler, self._deadlines)
        self.port = self.httpd.server_address[1]

    def _step(self, body: bytes) -> tuple[int, Any, dict[str, str]]:
        try:
            ticks = parse_json(body or b"{}").get("ticks", 1)
        except (ValueError, AttributeError):
            ticks = None
        if not isinstance(ticks, int) or isinstance(ticks, bool) or not 0 <= ticks <= 100_000:
            return 400, {"error": "invalid_request", "details": "ticks must be an integer 0..100000"}, {}
        self.colony.step(ticks)
        return 200, {"result": "ok", "tick": self.colony.tick_count}, {}

    def _game_thread(self) -> None:
        while not self._stop.wait(self.tick_seconds):
            self.colony.step(self.colony.speed)  # 1..3 ticks a step: the game's speeds

    def start(self) -> SimServer:
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), name="oni-sim-http", daemon=True).start()
        threading.Thread(target=self._deadlines.run, name="oni-sim-deadlines", daemon=True).start()
        if self.tick_seconds > 0:
            threading.Thread(target=self._game_thread, name="oni-sim-game", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._deadlines.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
