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
- No lock-out: every local process shares one address, so a lock (global or per source) would
  let any wrong guess keep the owner out. The admin token is far too long to guess, so the right
  token always gets in; a wrong one is only answered late, later with each wrong try on the same
  connection (``LoginThrottle``), and logged (never what was typed).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from urllib.parse import urlsplit

SESSION_COOKIE = "mcb_dashboard_session"
SESSION_TTL_S = 12 * 3600
WRONG_DELAY_S = 1.0  # a wrong token is answered this long after it came ...
WRONG_DELAY_MAX_S = 8.0  # ... doubling with each wrong try on the same connection, up to this
TRACKED_CONNECTIONS = 1024  # connections remembered (the oldest are forgotten)


def allowed_hosts(port: int, extra: str = "") -> frozenset[str]:
    """``Host`` values this dashboard answers: its loopback names on its port, plus the
    comma-separated ``extra`` (MCB_DASHBOARD_ALLOWED_HOSTS, e.g. a published compose name)."""
    names = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
    names.update(h.strip().lower() for h in extra.split(",") if h.strip())
    return frozenset(names)


def host_ok(host: str | None, allowed: frozenset[str]) -> bool:
    if not host:
        return False
    return host.lower() in allowed


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
        self._live: dict[str, float] = {}  # sha256(session id) -> expiry

    def login(self, presented: str, now: float | None = None) -> str | None:
        """A new session id for the right admin token, always; None for any other."""
        now = time.time() if now is None else now
        if not self._admin or not hmac.compare_digest(_digest(presented.strip()), self._admin):
            return None
        sid = secrets.token_urlsafe(32)
        self._live = {k: v for k, v in self._live.items() if v > now}
        self._live[_digest(sid)] = now + SESSION_TTL_S
        return sid

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
        if not sid or not presented:
            return False
        return hmac.compare_digest(self.csrf(sid), presented)


class LoginThrottle:
    """Wrong admin tokens per connection: each is answered later than the one before it on the
    same connection (``WRONG_DELAY_S`` doubling up to ``WRONG_DELAY_MAX_S``). It locks nothing,
    so a guess loop elsewhere never slows or stops the owner's login."""

    def __init__(self) -> None:
        self._wrong: OrderedDict[str, int] = OrderedDict()

    def wrong(self, connection: str) -> tuple[int, float]:
        """Count a wrong token on ``connection``: (wrong tries on it so far, seconds to wait)."""
        n = self._wrong.pop(connection, 0) + 1
        self._wrong[connection] = n
        while len(self._wrong) > TRACKED_CONNECTIONS:
            self._wrong.popitem(last=False)
        return n, min(WRONG_DELAY_S * 2 ** (n - 1), WRONG_DELAY_MAX_S)
