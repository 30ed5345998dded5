"""Bearer tokens: one file per principal in the secrets folder, mode 0600.

Principals and what they may do:
  agent       MCP tools of the configured project (the model's side)
  admin       everything, including recovery decisions and chat polling
  service     service-to-service calls (journal -> world host, camera -> world host)
  automation  the embedded host's local-automation methods (tests, scripts); off unless set

Tokens are compared in constant time and never logged or returned.
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from mcb_common.files import atomic_write

PRINCIPALS = ("agent", "admin", "service", "automation")


def token_path(secrets_dir: Path, principal: str) -> Path:
    return secrets_dir / f"{principal}.token"


def read_token(secrets_dir: Path, principal: str) -> str | None:
    env = os.environ.get(f"MCB_{principal.upper()}_TOKEN")
    if env:
        return env.strip()
    try:
        return token_path(secrets_dir, principal).read_text().strip() or None
    except FileNotFoundError:
        return None


def world_host_token(secrets_dir: Path, principal: str, token_file: Path | None) -> str | None:
    """The token this stack presents to the world host as ``principal`` ("service" or "admin").

    An external world host (a Paper server) keeps tokens of its own: ``token_file``
    (``MCB_WORLD_HOST_TOKEN_FILE``, ``mcb up --world-host-token-file``) holds the service token it
    accepts, and ``admin.token`` in the same folder its admin token (the chat loop's). None when that
    file is missing: the stack's own tokens are never sent to a host that has its own. Without a token
    file the stack's own tokens are used (the embedded host reads the same secrets folder).
    """
    if token_file is None:
        return read_token(secrets_dir, principal)
    path = token_file if principal == "service" else token_file.parent / f"{principal}.token"
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def ensure_token(secrets_dir: Path, principal: str) -> str:
    """Create the principal's token file (0600, atomic) unless it exists; return the token."""
    secrets_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(secrets_dir, 0o700)
    path = token_path(secrets_dir, principal)
    if path.exists():
        return path.read_text().strip()
    tok = secrets.token_urlsafe(32)
    atomic_write(path, tok + "\n", mode=0o600)
    return tok


class TokenTable:
    """Maps presented bearer tokens to principals."""

    def __init__(self, tokens: dict[str, str | None]):
        self._tokens = {p: t for p, t in tokens.items() if t}

    @classmethod
    def load(cls, secrets_dir: Path, principals: tuple[str, ...] = PRINCIPALS) -> TokenTable:
        return cls({p: read_token(secrets_dir, p) for p in principals})

    def principal_for(self, presented: str | None) -> str | None:
        if not presented:
            return None
        found = None
        for principal, tok in self._tokens.items():
            # compare against every token so timing does not reveal which one matched
            if hmac.compare_digest(presented.encode(), tok.encode()):
                found = principal
        return found

    def has(self, principal: str) -> bool:
        return principal in self._tokens


def bearer(header_value: str | None) -> str | None:
    if not header_value:
        return None
    scheme, _, value = header_value.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()
