"""HTTP transport of the simulator: 127.0.0.1 only, one thread per request, a game thread.

The game thread ticks the colony every ``tick_seconds`` (0 = only when told: ``POST /sim/step``
{"ticks": n}, the simulator's own extension for deterministic tests; it is not part of the mod API;
``GET /sim/queue`` lists the actions queued and not yet applied, for the same tests).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .api import MAX_BODY, handle
from .model import Colony


class SimServer:
    def __init__(self, colony: Colony, port: int = 23876, tick_seconds: float = 0.0) -> None:
        self.colony, self.tick_seconds = colony, tick_seconds
        self._stop = threading.Event()
        sim = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True
            timeout = 5.0  # as the mod's ReceiveTimeout: a body that never comes frees its thread

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if 0 < length <= MAX_BODY else b"x" * (MAX_BODY + 1) if length else b""
                if length > MAX_BODY:
                    self.close_connection = True
                query = dict(parse_qsl(parts.query))
                if parts.path == "/sim/step" and self.command == "POST":
                    status, payload, headers = sim._step(body)
                elif parts.path == "/sim/queue" and self.command == "GET":
                    with sim.colony.lock:
                        pending = [{"action": k, "body": v} for k, v in sim.colony.queue]
                    status, payload, headers = 200, {"pending": pending, "tick": sim.colony.tick_count}, {}
                else:
                    status, payload, headers = handle(sim.colony, self.command, parts.path, query, body)
                data = json.dumps(payload, separators=(",", ":")).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _serve  # noqa: N815

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]

    def _step(self, body: bytes) -> tuple[int, Any, dict[str, str]]:
        try:
            ticks = json.loads(body or b"{}").get("ticks", 1)
        except (ValueError, AttributeError):
            ticks = None
        if not isinstance(ticks, int) or isinstance(ticks, bool) or not 0 <= ticks <= 100_000:
            return 400, {"error": "invalid_request", "details": "ticks must be an integer 0..100000"}, {}
        self.colony.step(ticks)
        return 200, {"result": "ok", "tick": self.colony.tick_count}, {}

    def _game_thread(self) -> None:
        while not self._stop.wait(self.tick_seconds):
            self.colony.step(1)

    def start(self) -> SimServer:
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), name="oni-sim-http",
                         daemon=True).start()
        if self.tick_seconds > 0:
            threading.Thread(target=self._game_thread, name="oni-sim-game", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
