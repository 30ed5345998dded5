"""Admin commands (admin token, never the agent's): crash-recovery decisions, part protection,
the journal's size and compaction.

    mcb recovery review OP
    mcb recovery abandon OP --digest D
    mcb part protect PART [--off]
    mcb journal stats | compact

Each prints the journal's answer as JSON (its message's snake_case field names, every field); errors print the structured error and exit 1.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import grpc
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.journal.v1 import journal_pb2_grpc
from mcb_common.errors import McbError
from mcb_rpc.auth import call_metadata
from mcb_rpc.errors import from_rpc_error
from mcb_rpc.pbjson import plain
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import read_token


async def _admin_call(method: str, request: Any, timeout: float = 60) -> Any:
    s = Settings.from_env()
    token = read_token(s.secrets_dir, "admin")
    if not token:
        raise McbError("unauthenticated", f"no admin token in {s.secrets_dir} (or MCB_ADMIN_TOKEN)")
    async with grpc.aio.insecure_channel(s.journal_addr) as ch:
        stub = journal_pb2_grpc.JournalAdminStub(ch)
        try:
            return await getattr(stub, method)(request, metadata=call_metadata(token), timeout=timeout)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "journal", timeout) from None


def _print(resp: Any) -> None:
    print(json.dumps(plain(resp), indent=2))


def run(args: Any) -> int:
    try:
        if args.cmd == "recovery" and args.action == "review":
            resp = asyncio.run(_admin_call("RecoveryReview", jpb.OperationRef(operation_id=args.operation_id)))
        elif args.cmd == "recovery" and args.action == "abandon":
            resp = asyncio.run(
                _admin_call(
                    "RecoveryAbandon",
                    jpb.RecoveryAbandonRequest(operation_id=args.operation_id, expected_digest=args.digest),
                )
            )
        elif args.cmd == "part" and args.action == "protect":
            resp = asyncio.run(
                _admin_call("PartProtect", jpb.PartProtectRequest(part_id=args.part_id, protected=not args.off))
            )
        elif args.cmd == "journal" and args.action == "stats":
            resp = asyncio.run(_admin_call("JournalStats", jpb.JournalStatsRequest()))
        elif args.cmd == "journal" and args.action == "compact":
            resp = asyncio.run(_admin_call("JournalCompact", jpb.JournalCompactRequest(), timeout=3600))
        else:  # pragma: no cover - argparse restricts the choices
            return 2
    except McbError as err:
        print(json.dumps({"error": err.to_dict()}, indent=2), file=sys.stderr)
        return 1
    _print(resp)
    return 0
