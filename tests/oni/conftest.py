"""Fixtures for the ONI tests: the simulator (in-process, real HTTP) and the Mono-compiled mod
core's test host (a real `mono` process), both on 127.0.0.1 with a free port."""

from __future__ import annotations

import contextlib
import json
import pathlib
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from oni_sim.model import Colony
from oni_sim.server import SimServer

ROOT = pathlib.Path(__file__).resolve().parents[2]
MOD = ROOT / "oni-mod"
CONTRACT = json.loads((MOD / "contract" / "openapi.json").read_text())


def schema_validator(name: str, array: bool = False) -> Draft202012Validator:
    ref = {"$ref": f"#/components/schemas/{name}"}
    root: dict[str, Any] = {"components": CONTRACT["components"]}
    root.update({"type": "array", "items": ref} if array else ref)
    return Draft202012Validator(root)


def wait_health(url: str, seconds: float = 10.0) -> None:
    end = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            if time.monotonic() > end:
                raise
        time.sleep(0.05)


@pytest.fixture()
def sim() -> Iterator[SimServer]:
    """A fresh colony (seed 1) whose game thread ticks every 10 ms."""
    server = SimServer(Colony(seed=1), port=0, tick_seconds=0.01).start()
    yield server
    server.stop()


@pytest.fixture()
def manual_sim() -> Iterator[SimServer]:
    """A fresh colony (seed 1) that only moves on POST /sim/step (deterministic tests)."""
    server = SimServer(Colony(seed=1), port=0, tick_seconds=0).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def mono_host_exe() -> pathlib.Path:
    if not shutil.which("mcs") or not shutil.which("mono"):
        pytest.skip(
            "mcs/mono not installed (oni-mod/install_mono.sh installs mono-devel as root; `make test-deps` runs it)"
        )
    subprocess.run([str(MOD / "build.sh")], check=True, capture_output=True, timeout=120)
    return MOD / "build" / "OniAgentMod.TestHost.exe"


@contextlib.contextmanager
def mono_host(exe: pathlib.Path, *args: str) -> Iterator[str]:
    """The test host as a real process; its URL. It ends when its stdin closes."""
    proc = subprocess.Popen(
        ["mono", str(exe), "--port", "0", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # "[oni-agent] listening on http://127.0.0.1:P"
        if "listening on" not in line:
            raise RuntimeError(f"test host did not start: {line!r} {proc.stderr.read()}")
        url = line.strip().split("listening on ")[1]
        wait_health(url)
        yield url
    finally:
        end_host(proc)


def end_host(proc: subprocess.Popen) -> None:
    """Closes the host's stdin (it ends then); kills it if it has not ended within 5 s."""
    proc.stdin.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def mono_url(mono_host_exe: pathlib.Path) -> Iterator[str]:
    with mono_host(mono_host_exe) as url:
        yield url


@pytest.fixture(params=["sim", "mono"])
def mod_url(request: pytest.FixtureRequest) -> str:
    """The same conformance suite against the simulator and the Mono-compiled mod core."""
    if request.param == "sim":
        return f"http://127.0.0.1:{request.getfixturevalue('sim').port}"
    return request.getfixturevalue("mono_url")
