"""Child processes that do not outlive the process that started them.

On Linux a child asks the kernel for a signal when its parent dies (PR_SET_PDEATHSIG), even a
parent killed with SIGKILL. That must happen in the child, and not in a ``preexec_fn``: running
Python between fork and exec in a process with threads (grpc's pollers in
the bridge and in a pytest run) can deadlock the child on a lock another thread held at the fork (CPython's subprocess
documentation says so), and it runs the parent's at-fork handlers. So the child is a tiny Python
that sets the signal, checks that its parent is still the one that started it (it may have died
before the signal was set), then execs the real command; the signal is kept across exec. Elsewhere
the argv is returned as it is.
"""

import os
import signal
import sys

# The exit code of the shim when the parent was already gone: EX_SOFTWARE.
PARENT_GONE_EXIT = 70

_SHIM = (
    "import ctypes, os, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, int(sys.argv[1]))\n"  # PR_SET_PDEATHSIG
    f"if os.getppid() != int(sys.argv[2]): os._exit({PARENT_GONE_EXIT})\n"
    "os.execvp(sys.argv[3], sys.argv[3:])\n"
)


def with_parent_death_signal(argv: list[str], sig: int = signal.SIGKILL) -> list[str]:
    """argv, started so that the process gets ``sig`` when this process ends (Linux)."""
    if not argv:
        raise ValueError("no command to run")
    if not sys.platform.startswith("linux"):
        return list(argv)
    return [sys.executable, "-I", "-S", "-c", _SHIM, str(int(sig)), str(os.getpid()), *argv]
