"""Who may act on the dashboard, and from where: pure rules, no transport.

- Reading needs no login. Every action (POST) needs an admin session, a CSRF token bound to
  that session, and an ``Origin`` (or ``Referer``) naming this dashboard.
- Login: the admin token is entered once and compared in constant time; the browser gets a
  random session id (HttpOnly, SameSite=Strict cookie). The server keeps only
  sha256(session id) with an expiry — never the admin token, never the raw session id.
- The CSRF token is HMAC(process key, session id): a page can carry it, another origin cannot
  compute it, and it dies with the session (or a restart of the dashboard).
- ``Host`` must be one of the dashboard's own names (loopback by default): a DNS-rebinding page
  whose name resolves to 127.0.0.1 still sends its own name and is refused.
- Repeated wrong tokens lock the login for a while (a local guess loop gets nowhere).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from urllib.parse import urlsplit

SESSION_COOKIE = "mcb_dashboard_session"
SESSION_TTL_S = 12 * 3600
LOGIN_FAILURES = 5           # wrong tokens within LOGIN_WINDOW_S ...
LOGIN_WINDOW_S = 60.0
LOGIN_LOCK_S = 60.0          # ... lock the login this long


def allowed_hosts(port: int, extra: str = "") -> frozenset[str]:
    """``Host`` values this dashboard answers: its loopback names on its port, plus the
    comma-separated ``extra`` (MCB_DASHBOARD_ALLOWED_HOSTS, e.g. a published compose name)."""
    names = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
    names.update(h.strip().lower() for h in extra.split(",") if h.strip())
    return frozenset(names)


def host_ok(host: str | None, allowed: frozenset[str]) -> bool:
    return bool(host) and host.lower() in allowed


def origin_ok(origin: str | None, referer: str | None, allowed: frozenset[str]) -> bool:
    """An action's origin: ``Origin`` when sent (every current browser sends it on POST), else
    the ``Referer``'s; neither (or ``null``) is refused."""
    raw = origin if origin and origin != "null" else referer
    if not raw:
        return False
    parts = urlsplit(raw)
    return parts.scheme == "http" and parts.netloc.lower() in allowed


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


class Sessions:
    """Live admin sessions. Keeps sha256 of the admin token (to compare against) and of each
    session id: a dump of this object gives neither the token nor a usable cookie."""

    def __init__(self, admin_token: str | None):
        self._admin = _digest(admin_token) if admin_token else None
        self.key = secrets.token_bytes(32)
        self._live: dict[str, float] = {}     # sha256(session id) -> expiry
        self._failures: list[float] = []
        self._locked_until = 0.0

    def login(self, presented: str, now: float | None = None) -> str | None:
        """A new session id for the right admin token; None otherwise (or while locked)."""
        now = time.time() if now is None else now
        if now < self._locked_until or not self._admin:
            return None
        if not hmac.compare_digest(_digest(presented.strip()), self._admin):
            self._failures = [t for t in self._failures if now - t < LOGIN_WINDOW_S] + [now]
            if len(self._failures) >= LOGIN_FAILURES:
                self._locked_until, self._failures = now + LOGIN_LOCK_S, []
            return None
        self._failures = []
        sid = secrets.token_urlsafe(32)
        self._live = {k: v for k, v in self._live.items() if v > now}
        self._live[_digest(sid)] = now + SESSION_TTL_S
        return sid

    def locked(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) < self._locked_until

    def valid(self, sid: str | None, now: float | None = None) -> bool:
        if not sid:
            return False
        exp = self._live.get(_digest(sid))
        return exp is not None and exp > (time.time() if now is None else now)

    def logout(self, sid: str | None) -> None:
        if sid:
            self._live.pop(_digest(sid), None)

    def csrf(self, sid: str) -> str:
        return hmac.new(self.key, b"csrf:" + sid.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, sid: str | None, presented: str | None) -> bool:
        return bool(sid and presented) and hmac.compare_digest(self.csrf(sid), presented)  # type: ignore[arg-type]
