"""Caller identity on the gRPC side: bearer token -> principal, plus the trusted ids.

The bridge sets ``x-mcb-project-id`` and ``x-mcb-player-id`` from its configuration; the
journal re-checks them against its project table (a token never grants another project).
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from mcb_common.errors import ErrorCode, McbError

from .tokens import TokenTable, bearer


@dataclass(frozen=True)
class Caller:
    principal: str  # agent | admin | service
    project_id: str
    player_id: str


def metadata_dict(context: grpc.aio.ServicerContext) -> dict[str, str]:
    return {k: v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}


def caller_from_context(context: grpc.aio.ServicerContext, tokens: TokenTable, allowed: tuple[str, ...]) -> Caller:
    md = metadata_dict(context)
    principal = tokens.principal_for(bearer(md.get("authorization")))
    if principal is None:
        raise McbError(ErrorCode.UNAUTHENTICATED, "missing or unknown bearer token")
    if principal not in allowed:
        raise McbError(
            ErrorCode.PERMISSION_DENIED,
            f"the {principal} token may not call this method (allowed: {', '.join(allowed)})",
        )
    return Caller(principal, md.get("x-mcb-project-id", ""), md.get("x-mcb-player-id", ""))


def call_metadata(token: str, project_id: str = "", player_id: str = "") -> tuple[tuple[str, str], ...]:
    md = [("authorization", f"Bearer {token}")]
    if project_id:
        md.append(("x-mcb-project-id", project_id))
    if player_id:
        md.append(("x-mcb-player-id", player_id))
    return tuple(md)
