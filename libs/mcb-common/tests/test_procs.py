"""with_parent_death_signal: the child really dies with its parent (real processes, Linux)."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from mcb_common.procs import PARENT_GONE_EXIT, with_parent_death_signal

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
SRC = str(Path(__file__).resolve().parents[1] / "src")


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _wait_ended(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


@linux
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_the_child_ends_when_its_parent_is_killed(sig):
    # a parent with a thread running (the case a preexec_fn is unsafe in) starts `sleep`, then is
    # killed with SIGKILL: the sleep must end too
    parent_code = textwrap.dedent(f"""
        import subprocess, sys, threading, time
        sys.path.insert(0, {SRC!r})
        from mcb_common.procs import with_parent_death_signal
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        p = subprocess.Popen(with_parent_death_signal(["sleep", "60"], {int(sig)}))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # until the shim has exec'd sleep
            if open(f"/proc/{{p.pid}}/cmdline", "rb").read().startswith(b"sleep"):
                break
            time.sleep(0.01)
        print(p.pid, flush=True)
        time.sleep(60)
    """)
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        assert _alive(child)
        assert Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[0] == b"sleep"
        parent.kill()
        parent.wait(10)
        assert _wait_ended(child), "the child outlived its parent"
    finally:
        parent.kill()
        parent.wait(10)


@linux
def test_the_command_gets_its_arguments_environment_and_exit_code():
    r = subprocess.run(
        with_parent_death_signal(["sh", "-c", 'echo "$1 $MCB_X"; exit 3', "sh", "a b"]),
        env={**os.environ, "MCB_X": "y"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (r.returncode, r.stdout) == (3, "a b y\n")


@linux
def test_a_child_whose_parent_is_already_gone_does_not_start(tmp_path):
    marker = tmp_path / "ran"
    argv = with_parent_death_signal(["touch", str(marker)])
    pid_at = argv.index(str(os.getpid()))
    argv[pid_at] = "1"  # as if the starting process had died and the child been given to init
    r = subprocess.run(argv, timeout=30)
    assert r.returncode == PARENT_GONE_EXIT
    assert not marker.exists()


def test_no_command_is_refused():
    with pytest.raises(ValueError):
        with_parent_death_signal([])


def test_elsewhere_the_command_is_run_as_it_is(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert with_parent_death_signal(["sleep", "1"]) == ["sleep", "1"]
