"""Named fault points for crash tests: inert unless ``MCB_FAULT_POINT`` names one.

``MCB_FAULT_POINT=after_intent`` (optionally ``MCB_FAULT_SKIP=N`` to pass it N times first)
kills this process with SIGKILL at that point — a real crash, no cleanup, no flush.
Points, in the order one batch k meets them: before_intent (batch k-1 answered, its completion
and k's intent not yet committed: they are one transaction), after_intent (both committed, k not
sent), during_write (the pipeline: batch k+1 is being prepared in a thread while the host writes
k — whether k is written when the process dies is up to the host), before_completion (k
answered, not recorded).
"""

from __future__ import annotations

import os
import signal

_hits: dict[str, int] = {}


def fault_point(name: str) -> None:
    if os.environ.get("MCB_FAULT_POINT") != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] > int(os.environ.get("MCB_FAULT_SKIP", "0")):
        os.kill(os.getpid(), signal.SIGKILL)
