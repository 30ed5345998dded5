"""World-host factories for the conformance suite.

A factory starts one host and returns a ``HostHandle``; the suite talks to it only over
HTTP. Register another implementation (e.g. the Java core host) by adding a factory to
``FACTORIES``; tests needing something only some hosts offer check the handle's fields.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from harness import Proc, free_port, start_process
from mcb_rpc.tokens import ensure_token, read_token


@dataclass
class HostHandle:
    name: str
    base_url: str
    tokens: dict[str, str]
    automation: bool
    world_dir: Path | None = None  # set when the host writes a real save we can inspect
    restart: Callable[[bool], None] | None = None  # restart(kill9)
    stop: Callable[[], None] = lambda: None
    extra: dict = field(default_factory=dict)


def embedded(tmp: Path, automation: bool = True) -> HostHandle:
    runtime = tmp / "runtime"
    secrets_dir = runtime / "secrets"
    tokens = {p: ensure_token(secrets_dir, p) for p in ("service", "admin", "automation", "agent")}
    port = free_port()
    env = {
        "MCB_RUNTIME_DIR": str(runtime),
        "MCB_SECRETS_DIR": str(secrets_dir),
        "MCB_WORLD_DIR": str(runtime / "world"),
        "MCB_WORLD_CREATE": "flat",
        "MCB_WORLD_PREGEN": "-32,-32,31,31",
        "MCB_WORLD_HOST_PORT": str(port),
        "MCB_BIND_HOST": "127.0.0.1",
        "MCB_ALLOW_LOCAL_AUTOMATION": "1" if automation else "0",
        # token files only: never a token inherited from the environment
        **{f"MCB_{p.upper()}_TOKEN": "" for p in ("service", "admin", "automation", "agent")},
        "PYTHONUNBUFFERED": "1",
    }
    url = f"http://127.0.0.1:{port}"
    state: dict[str, Proc] = {}

    def start() -> None:
        state["proc"] = start_process(
            "world-host",
            [sys.executable, "-m", "mcb_world_host"],
            tmp / "logs",
            env=env,
            health_url=f"{url}/health",
            timeout=60,
        )

    def restart(kill9: bool) -> None:
        proc = state["proc"]
        if kill9:
            proc.kill9()
        else:
            proc.stop()
        start()

    def stop() -> None:
        state["proc"].stop()

    start()
    return HostHandle("embedded", url, tokens, automation, runtime / "world", restart, stop)


# ---- the Java core host (paper-plugin/testhost: the Paper plugin's core over an in-memory world) ----
ROOT = Path(__file__).resolve().parents[2]
JAVA_PROJECT = ROOT / "paper-plugin"
JAVA_JAR = JAVA_PROJECT / "testhost" / "target" / "mcb-world-testhost.jar"
JAVA_INPUTS = (
    JAVA_PROJECT / "pom.xml",
    JAVA_PROJECT / "core",
    JAVA_PROJECT / "testhost",
    ROOT / "proto",
    ROOT / "libs" / "mcb-common" / "src" / "mcb_common" / "data",
)
_java_state: dict[str, object] = {}


def _java_major(java: Path) -> int:
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return 0
    m = re.search(r'version "(\d+)', out)
    return int(m.group(1)) if m else 0


def find_jdk() -> Path | None:
    """A JDK >= 21 (Paper's Java): $MCB_JAVA_HOME, $JAVA_HOME, then the usual install folders."""
    candidates = [os.environ.get("MCB_JAVA_HOME"), os.environ.get("JAVA_HOME")]
    jvm = Path("/usr/lib/jvm")
    if jvm.is_dir():
        candidates += [str(p) for p in sorted(jvm.iterdir(), reverse=True)]
    for c in candidates:
        if c and (Path(c) / "bin" / "javac").exists() and _java_major(Path(c) / "bin" / "java") >= 21:
            return Path(c)
    return None


def _newest_input(inputs: tuple[Path, ...] = JAVA_INPUTS) -> float:
    newest = 0.0
    for base in inputs:
        paths = [base] if base.is_file() else (p for p in base.rglob("*") if "target" not in p.parts and p.is_file())
        for p in paths:
            newest = max(newest, p.stat().st_mtime)
    return newest


def _need_jdk_and_maven() -> tuple[Path, str]:
    """A JDK >= 21 and Maven, or skip the test (once per session: the reason is kept)."""
    if "skip" in _java_state:
        pytest.skip(str(_java_state["skip"]))
    jdk = find_jdk()
    mvn = shutil.which("mvn")
    if jdk is None or mvn is None:
        _java_state["skip"] = (
            "Java host not run: needs a JDK >= 21 and Maven (scripts/bootstrap.sh says how); "
            f"found JDK={jdk}, mvn={mvn}"
        )
        pytest.skip(str(_java_state["skip"]))
    return jdk, mvn


def java_testhost_jar() -> tuple[Path, Path]:
    """Build the Java test host once per session (skipped when its jar is newer than every input).
    Returns (java binary, jar); skips the test with a reason when no JDK >= 21 or Maven is present."""
    if "jar" in _java_state:
        return _java_state["java"], _java_state["jar"]  # type: ignore[return-value]
    jdk, mvn = _need_jdk_and_maven()
    with _maven_lock():
        _build_testhost_if_stale(jdk, mvn)
    _java_state["java"], _java_state["jar"] = jdk / "bin" / "java", JAVA_JAR
    return jdk / "bin" / "java", JAVA_JAR


@contextlib.contextmanager
def _maven_lock():
    """One Maven build of paper-plugin/ at a time (the same lock as paper-plugin/build.sh)."""
    import fcntl
    import tempfile

    with open(Path(os.environ.get("TMPDIR", tempfile.gettempdir())) / "mcb-paper-plugin-maven.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _build_testhost_if_stale(jdk: Path, mvn: str) -> None:
    if not JAVA_JAR.exists() or JAVA_JAR.stat().st_mtime < _newest_input():
        env = {**os.environ, "JAVA_HOME": str(jdk)}
        if _java_major(jdk / "bin" / "java") >= 24:
            env["MAVEN_OPTS"] = (env.get("MAVEN_OPTS", "") + " --sun-misc-unsafe-memory-access=allow").strip()
        cmd = [mvn, "-q", "-B", "-pl", "testhost", "-am", "package", "-DskipTests"]
        r = subprocess.run([*cmd[:3], "-o", *cmd[3:]], cwd=JAVA_PROJECT, env=env, capture_output=True, text=True)
        if r.returncode != 0:  # offline failed (first run): fetch from Maven Central
            r = subprocess.run(cmd, cwd=JAVA_PROJECT, env=env, capture_output=True, text=True)
        assert r.returncode == 0, f"building the Java test host failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"


def _tokens_and_env(runtime: Path, automation: bool, pregen: str) -> tuple[Path, dict[str, str], dict[str, str], int]:
    """A Java host's token folder (every principal's token), its MCB_* environment and its free port."""
    secrets_dir = runtime / "secrets"
    tokens = {p: ensure_token(secrets_dir, p) for p in ("service", "admin", "automation", "agent")}
    port = free_port()
    env = {
        "MCB_SECRETS_DIR": str(secrets_dir),
        "MCB_WORLD_PREGEN": pregen,
        "MCB_WORLD_HOST_PORT": str(port),
        "MCB_BIND_HOST": "127.0.0.1",
        "MCB_ALLOW_LOCAL_AUTOMATION": "1" if automation else "0",
        **{f"MCB_{p.upper()}_TOKEN": "" for p in ("service", "admin", "automation", "agent")},
    }
    return secrets_dir, tokens, env, port


# the player MockPaperHost has online (tests/e2e/test_chat_preview_e2e.py sees what its client shows)
MOCK_PLAYER = "mock-player"


# why the Anvil save test (test_world_host_durability.py) does not apply to a Java host
NO_ANVIL = {
    "java-core": "java-core: an in-memory world saved in its own format (world.bin) every 300 s and at a clean stop, "
    "as a game server: an applied batch does not survive a kill -9 and there are no Anvil region files",
    "paper-mock": "paper-mock: MockBukkit keeps the world in memory (HostWorld saves it in its own format only when the "
    "plugin saves at disable): an applied batch does not survive a kill -9 and there are no Anvil region "
    "files",
}


def _java_process_host(
    kind: str,
    argv: list[str],
    tmp: Path,
    env: dict[str, str],
    port: int,
    tokens: dict[str, str],
    automation: bool,
    secrets_dir: Path,
    timeout: float = 60,
) -> HostHandle:
    """Start ``argv`` as the host ``kind`` and wrap it: restart(kill9), stop, extra ``proc`` and ``secrets_dir``."""
    url = f"http://127.0.0.1:{port}"
    state: dict = {"secrets_dir": secrets_dir, "no_save": NO_ANVIL[kind]}

    def start() -> None:
        state["proc"] = start_process(
            f"{kind}-host", argv, tmp / "logs", env=env, health_url=f"{url}/health", timeout=timeout
        )

    def restart(kill9: bool) -> None:
        proc = state["proc"]
        if kill9:
            proc.kill9()
        else:
            proc.stop()
        start()

    def stop() -> None:
        state["proc"].stop()

    start()
    # world_dir stays None: neither Java host saves Anvil region files, so the Anvil durability tests do not apply
    return HostHandle(kind, url, tokens, automation, None, restart, stop, state)


def java_core(tmp: Path, automation: bool = True, pregen: str = "-32,-32,31,31") -> HostHandle:
    """extra: ``proc`` (the running Proc, replaced on restart) and ``secrets_dir`` (its token folder)."""
    java, jar = java_testhost_jar()
    runtime = tmp / "runtime"
    secrets_dir, tokens, env, port = _tokens_and_env(runtime, automation, pregen)
    env |= {
        "MCB_WORLD_DIR": str(runtime / "java-world"),
        # a simulated spectator camera account (testhost SimulatedCamera; test_camera_account_pose.py)
        "MCB_CAMERA_ACCOUNT": "mcb-camera",
        "MCB_CAMERA_AREAS": "-64,-64,-64,63,320,63",
    }
    argv = [str(java), "-Xmx256m", "-XX:+UseSerialGC", "-jar", str(jar)]
    return _java_process_host("java-core", argv, tmp, env, port, tokens, automation, secrets_dir)


# ---- the real Paper plugin inside MockBukkit (paper-plugin/paper/src/test: MockPaperHost) ----
PAPER_MODULE = JAVA_PROJECT / "paper"
PAPER_CLASSPATH = PAPER_MODULE / "target" / "mock-host.classpath"
PAPER_JARS = PAPER_MODULE / "target" / "mock-host"  # test.jar, main.jar, core.jar and host.jsa
PAPER_INPUTS = (
    JAVA_PROJECT / "pom.xml",
    JAVA_PROJECT / "core",
    PAPER_MODULE,
    ROOT / "proto",
    ROOT / "libs" / "mcb-common" / "src" / "mcb_common" / "data",
)
BUILD_SH = JAVA_PROJECT / "build.sh"


def paper_mock_classpath() -> tuple[Path, str]:
    """Compile the Paper adapter and its test sources once per session (skipped when the classpath file is
    newer than every input) and return (java binary, classpath). Skips with the reason when paper-api does not
    resolve (not on Maven Central: the vendored ../shared/vendor/paper-api-1.21.11 is installed when present)."""
    if "paper_cp" in _java_state:
        return _java_state["java"], _java_state["paper_cp"]  # type: ignore[return-value]
    if "paper_skip" in _java_state:
        pytest.skip(str(_java_state["paper_skip"]))
    jdk, _ = _need_jdk_and_maven()
    r = subprocess.run([str(BUILD_SH), "--paper-api"], capture_output=True, text=True)
    version = r.stdout.strip()
    if r.returncode == 1:
        _java_state["paper_skip"] = (
            f"paper-mock host not run: paper-api {version} does not resolve (it is not on "
            "Maven Central) and ../shared/vendor/paper-api-1.21.11 is absent; "
            "paper-plugin/README.md says how to install it"
        )
        pytest.skip(str(_java_state["paper_skip"]))
    assert r.returncode == 0, f"paper-plugin/build.sh --paper-api failed ({r.returncode}):\n{r.stderr[-4000:]}"
    if (
        not PAPER_CLASSPATH.exists()
        or not (PAPER_JARS / "core.jar").exists()
        or PAPER_CLASSPATH.stat().st_mtime < _newest_input(PAPER_INPUTS)
    ):
        # build.sh takes the Maven lock itself (and the JDK, MCB_M2_REPO); offline first, then Maven Central
        args = [
            "-Ppaper",
            f"-Dpaper.api.version={version}",
            "-pl",
            "paper",
            "-am",
            "test-compile",
            "dependency:build-classpath",
            "-Dmdep.outputFile=target/mock-host.classpath",
            "-Dmdep.includeScope=test",
        ]
        b = subprocess.run([str(BUILD_SH), "-o", *args], capture_output=True, text=True)
        if b.returncode != 0:
            b = subprocess.run([str(BUILD_SH), *args], capture_output=True, text=True)
        assert b.returncode == 0, f"building the paper-mock host failed:\n{b.stdout[-4000:]}\n{b.stderr[-4000:]}"
        _jar_classes(jdk)
        PAPER_CLASSPATH.touch()
    cp = os.pathsep.join(
        [
            *(str(PAPER_JARS / f"{n}.jar") for n in ("test", "main", "core")),
            *(e for e in PAPER_CLASSPATH.read_text().strip().split(os.pathsep) if e and not e.endswith("classes")),
        ]
    )
    _java_state["java"], _java_state["paper_cp"] = jdk / "bin" / "java", cp
    return jdk / "bin" / "java", cp


def _jar_classes(jdk: Path) -> None:
    """The three class folders as jars: a class-data-sharing archive (JSA) takes classes from jars only. Measured
    on this 2-core machine under load: a start to healthy in 6-10 s with it, 12-15 s without."""
    shutil.rmtree(PAPER_JARS, ignore_errors=True)
    PAPER_JARS.mkdir(parents=True)
    for name, classes in (
        ("test", PAPER_MODULE / "target" / "test-classes"),
        ("main", PAPER_MODULE / "target" / "classes"),
        ("core", JAVA_PROJECT / "core" / "target" / "classes"),
    ):
        r = subprocess.run(
            [str(jdk / "bin" / "jar"), "--create", "--file", str(PAPER_JARS / f"{name}.jar"), "-C", str(classes), "."],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, f"jar of {classes} failed: {r.stderr[-2000:]}"


def paper_mock(tmp: Path, automation: bool = True, pregen: str = "-32,-32,31,31") -> HostHandle:
    """The real McbPlugin in MockBukkit's ServerMock, ticked at 20 TPS by a driver thread (MockPaperHost).
    Its world and plugin data folder live in ``<tmp>/runtime/paper-world`` (saved at a clean stop; a kill -9
    loses what changed since). extra as java_core's."""
    java, cp = paper_mock_classpath()
    runtime = tmp / "runtime"
    secrets_dir, tokens, env, port = _tokens_and_env(runtime, automation, pregen)
    env["MCB_WORLD_DIR"] = str(runtime / "paper-world")
    env["MCB_MOCK_PLAYER"] = MOCK_PLAYER  # online, its client view in paper-world/client-view.json
    scratch = tmp / "paper-mock-tmp"  # MockBukkit's temporary plugin folders (a kill -9 leaves them here)
    scratch.mkdir(parents=True, exist_ok=True)
    # the JSA is written at the first clean stop after a build and used by every start after it
    argv = [
        str(java),
        "-XX:+AutoCreateSharedArchive",
        f"-XX:SharedArchiveFile={PAPER_JARS / 'host.jsa'}",
        "-Xmx2g",
        "-XX:+UseSerialGC",
        f"-Djava.io.tmpdir={scratch}",
        "-cp",
        cp,
        "dev.mcb.world.paper.MockPaperHost",
    ]
    h = _java_process_host("paper-mock", argv, tmp, env, port, tokens, automation, secrets_dir, timeout=120)
    h.extra["client_view"] = runtime / "paper-world" / "client-view.json"
    return h


def paper_live(tmp: Path, automation: bool = True) -> HostHandle:
    """A real Paper server with the plugin (docs/paper-live-test.md): MUTATES that world; never in CI.
    Registered only when MCB_LIVE_WORLD_URL is set; tokens come from MCB_LIVE_SECRETS_DIR."""
    if not automation:
        pytest.skip("paper-live runs with allow-local-automation on; the 'off' case is covered by the other hosts")
    secrets_dir = Path(os.environ["MCB_LIVE_SECRETS_DIR"])
    tokens = {p: read_token(secrets_dir, p) for p in ("service", "admin", "automation")}
    missing = [p for p, t in tokens.items() if not t]
    assert not missing, f"token files missing in {secrets_dir}: {missing}"
    tokens["agent"] = "agent-token-unknown-to-the-world-host"
    return HostHandle("paper-live", os.environ["MCB_LIVE_WORLD_URL"].rstrip("/"), tokens, True)  # type: ignore[arg-type]


FACTORIES: dict[str, Callable[[Path, bool], HostHandle]] = {
    "embedded": embedded,
    "java-core": java_core,
    "paper-mock": paper_mock,
}
if os.environ.get("MCB_LIVE_WORLD_URL"):
    FACTORIES = {"paper-live": paper_live}  # only the live server: its world must be fresh and flat
