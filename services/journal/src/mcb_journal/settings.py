"""The journal's own tunables: every ``MCB_JOURNAL_*`` / ``MCB_LINK_RETRY_SECONDS`` variable is
read here, once, at start (``app.main_async``), and checked — a bad value stops the journal with a
message naming the variable instead of a traceback at import. Stack-wide settings (ports,
addresses, Redis, secrets) come from ``mcb_rpc.settings.Settings``. Test-only fault injection
(``MCB_FAULT_POINT``, faults.py) is not a setting.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class JournalSettings:
    # How long a lost world-host link is retried (same batch id) before the operation becomes
    # recovery_required (MCB_LINK_RETRY_SECONDS; `mcb up --world-host` gives an external host 180).
    link_retry_s: float = 10.0
    # A terminal operation is packed this long after it settled (its echo events have arrived by
    # then; late ones are merged by the next pass). Negative: never automatically
    # (MCB_JOURNAL_PACK_AFTER_S).
    pack_after_s: float = 30.0
    # The Before picture of an operation (before.py): how long, at most, the executor waits for a
    # small capture of the plan's region before the first batch; 0 switches it off
    # (MCB_JOURNAL_BEFORE_CAPTURE_S).
    before_capture_s: float = 5.0
    # Batches sent in one world-protocol request (batch_apply_many, to hosts that list it; 1..16): they
    # share a round trip and the host's fsync; the host still stops between them (pause, cancel), so a
    # stop lets at most the batch in progress finish. 1: one batch_apply per batch
    # (MCB_JOURNAL_BATCHES_PER_REQUEST).
    batches_per_request: int = 8

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> JournalSettings:
        env = os.environ if env is None else env
        d = cls()

        def seconds(name: str, default: float, negative_ok: bool) -> float:
            raw = env.get(name, "").strip()
            try:
                value = float(raw) if raw else default
            except ValueError:
                raise SystemExit(f"journal: {name} must be a number of seconds (got {raw!r})") from None
            if not math.isfinite(value):
                raise SystemExit(f"journal: {name} must be a finite number of seconds (got {raw!r})")
            if value < 0 and not negative_ok:
                raise SystemExit(f"journal: {name} must not be negative (got {raw!r})")
            return value

        raw = env.get("MCB_JOURNAL_BATCHES_PER_REQUEST", "").strip()
        try:
            per_request = int(raw) if raw else d.batches_per_request
        except ValueError:
            per_request = 0
        if not 1 <= per_request <= 16:
            raise SystemExit(
                f"journal: MCB_JOURNAL_BATCHES_PER_REQUEST must be a whole number from 1 to 16 (got {raw!r})"
            )
        return cls(
            batches_per_request=per_request,
            link_retry_s=seconds("MCB_LINK_RETRY_SECONDS", d.link_retry_s, False),
            pack_after_s=seconds("MCB_JOURNAL_PACK_AFTER_S", d.pack_after_s, True),
            before_capture_s=seconds("MCB_JOURNAL_BEFORE_CAPTURE_S", d.before_capture_s, False),
        )
