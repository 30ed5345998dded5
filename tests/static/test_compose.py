"""Static validation of compose.yaml, the Dockerfile and .dockerignore (no Docker engine here).

- compose.yaml validates against the official Compose Specification JSON schema, vendored in
  ``compose-spec/`` (see its PROVENANCE.md), and against ``docker compose config`` where the
  compose plugin exists;
- project rules: healthchecks everywhere, conditions on every depends_on, published ports on
  127.0.0.1 only, named volumes declared, tokens never in the file or the images, service
  addresses matching ``mcb_rpc.settings``;
- the one Dockerfile has a target per service (compose names it) that installs that service's
  workspace package from uv.lock, runs a console script that its pyproject declares, as a
  non-root user, with a working urllib healthcheck;
- the secrets-init script really creates 0600 tokens once, and the healthcheck one-liners
  really fail on a 503.
"""

from __future__ import annotations

import copy
import hashlib
import http.server
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from mcb_rpc.settings import DEFAULT_PORTS

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose.yaml"
SCHEMA = Path(__file__).resolve().parent / "compose-spec" / "compose-spec.json"
SCHEMA_SHA256 = "46b7d35f19dd93a05f8fea530291bf84d881c1791ec167ecf0e6fb94e639d496"

# compose service -> (service folder, workspace package, console script, health port name)
OUR_SERVICES = {
    "world-host": ("world-host", "mcb-world-host", "mcb-world-host", "world_host"),
    "planner": ("planner", "mcb-planner", "mcb-planner", "planner_health"),
    "journal": ("journal", "mcb-journal", "mcb-journal", "journal_health"),
    "camera-worker": ("camera-worker", "mcb-camera-worker", "mcb-camera-worker", "camera_health"),
    "bridge": ("bridge", "mcb-bridge", "mcb-bridge", "bridge"),
    "dashboard": ("dashboard", "mcb-dashboard", "mcb-dashboard", "dashboard"),
}
REQUIRED_VOLUMES = {"world", "journal", "assets", "camera", "secrets"}
ONE_SHOT = "service_completed_successfully"


# ----------------------------------------------------------------------------- helpers

_INTERP = re.compile(
    r"\$\$|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}|\$(?P<bare>[A-Za-z_][A-Za-z0-9_]*)"
)


def interpolate(value: Any, env: dict[str, str] | None = None) -> Any:
    """Compose's variable interpolation (``${VAR}``, ``${VAR:-default}``, ``$$``)."""
    env = env or {}
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group("name") or m.group("bare")
        op, arg = m.group("op"), m.group("arg") or ""
        have = env.get(name)
        if op in (":-", ":?") and not have:
            if op == ":?":
                raise ValueError(f"required variable {name} is unset: {arg}")
            return arg
        if op in ("-", "?") and have is None:
            if op == "?":
                raise ValueError(f"required variable {name} is unset: {arg}")
            return arg
        return have or ""

    return _INTERP.sub(sub, value)


def load_compose(env: dict[str, str] | None = None) -> dict[str, Any]:
    raw = yaml.safe_load(COMPOSE.read_text())  # resolves the YAML anchors and << merges
    return interpolate(raw, env)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_compose()


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text())


def schema_errors(doc: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(schema)
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.path)))
    ]


def parse_port(entry: Any) -> tuple[str | None, str | None, str]:
    """(host_ip, published, target) of a ports entry, short or long syntax."""
    if isinstance(entry, dict):
        return entry.get("host_ip"), (str(entry["published"]) if "published" in entry else None), str(entry["target"])
    text = str(entry).split("/", 1)[0]
    m = re.fullmatch(r"(?:(?P<ip>\[[^\]]+\]|\d+\.\d+\.\d+\.\d+):)?(?:(?P<pub>[0-9-]*):)?(?P<target>[0-9-]+)", text)
    if m is None:
        raise ValueError(f"cannot parse port entry {entry!r}")
    return m.group("ip"), m.group("pub") or None, m.group("target")


def volume_sources(svc: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(source, target, read_only) of named-volume mounts."""
    out = []
    for v in svc.get("volumes", []):
        if isinstance(v, dict):
            if v.get("type", "volume") == "volume" and v.get("source"):
                out.append((v["source"], v["target"], bool(v.get("read_only"))))
            continue
        parts = v.split(":")
        if len(parts) >= 2 and not parts[0].startswith((".", "/", "~", "$")):
            out.append((parts[0], parts[1], len(parts) > 2 and "ro" in parts[2].split(",")))
    return out


def health_command(svc: dict[str, Any]) -> list[str]:
    test = svc["healthcheck"]["test"]
    if isinstance(test, str):
        return ["sh", "-c", test]
    assert test[0] in ("CMD", "CMD-SHELL"), test
    return list(test[1:]) if test[0] == "CMD" else ["sh", "-c", test[1]]


def depends(svc: dict[str, Any]) -> dict[str, Any]:
    d = svc.get("depends_on") or {}
    return {name: None for name in d} if isinstance(d, list) else d


# ----------------------------------------------------------------------------- schema


def test_vendored_schema_is_unchanged() -> None:
    digest = hashlib.sha256(SCHEMA.read_bytes()).hexdigest()
    assert digest == SCHEMA_SHA256, "compose-spec.json changed; see compose-spec/PROVENANCE.md"
    assert (SCHEMA.parent / "LICENSE").read_text().lstrip().startswith("Apache License")


def test_schema_is_a_valid_draft7_schema(schema: dict[str, Any]) -> None:
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["title"] == "Compose Specification"


def test_compose_validates_against_compose_spec(compose: dict[str, Any], schema: dict[str, Any]) -> None:
    assert schema_errors(compose, schema) == []


def test_compose_validates_with_variables_set(schema: dict[str, Any]) -> None:
    doc = load_compose(
        {
            "MCB_BRIDGE_PUBLISH_PORT": "18787",
            "MCB_WORLD_HOST_PUBLISH_PORT": "18765",
            "MCB_ALLOW_LOCAL_AUTOMATION": "1",
            "MCB_PROJECT_ID": "castle",
        }
    )
    assert schema_errors(doc, schema) == []
    assert "127.0.0.1:18787:8787" in doc["services"]["bridge"]["ports"]


@pytest.mark.parametrize(
    "mutation",
    [
        "unknown_service_key",
        "bad_condition",
        "bad_healthcheck_key",
        "volumes_not_a_map",
        "bad_service_name",
    ],
)
def test_schema_check_can_fail(compose: dict[str, Any], schema: dict[str, Any], mutation: str) -> None:
    """The validator is not a rubber stamp: typical mistakes are rejected."""
    doc = copy.deepcopy(compose)
    svc = doc["services"]["bridge"]
    if mutation == "unknown_service_key":
        svc["healthchek"] = svc["healthcheck"]
    elif mutation == "bad_condition":
        svc["depends_on"]["journal"]["condition"] = "service_ready"
    elif mutation == "bad_healthcheck_key":
        svc["healthcheck"]["every"] = "5s"
    elif mutation == "volumes_not_a_map":
        doc["volumes"] = ["world"]
    elif mutation == "bad_service_name":
        doc["services"]["bad name!"] = {"image": "x"}
    assert schema_errors(doc, schema), f"{mutation} should not validate"


def _compose_plugin() -> str | None:
    docker = shutil.which("docker")
    if docker is None:
        return None
    try:
        ok = subprocess.run([docker, "compose", "version"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return None
    return docker if ok else None


def test_docker_compose_config_accepts_the_file() -> None:
    docker = _compose_plugin()
    if docker is None:
        pytest.skip(
            "the `docker compose` plugin is not installed here (only a docker client, or "
            "none); the file is validated against the vendored Compose schema instead"
        )
    # `config` only parses and resolves the file; it needs no engine.
    r = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "config", "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr


# ----------------------------------------------------------------------------- project rules


def test_expected_services_exist(compose: dict[str, Any]) -> None:
    assert set(OUR_SERVICES) | {"redis", "secrets-init", "chat"} == set(compose["services"])


def _one_shot_services(compose: dict[str, Any]) -> set[str]:
    """Services that others wait on to *finish* (init jobs): they have no healthcheck."""
    return {
        dep
        for svc in compose["services"].values()
        for dep, spec in depends(svc).items()
        if isinstance(spec, dict) and spec.get("condition") == ONE_SHOT
    }


def test_every_long_running_service_has_a_healthcheck(compose: dict[str, Any]) -> None:
    one_shot = _one_shot_services(compose)
    assert one_shot == {"secrets-init"}
    assert compose["services"]["secrets-init"].get("restart") == "no"
    for name, svc in compose["services"].items():
        if name in one_shot:
            continue
        hc = svc.get("healthcheck")
        assert hc, f"{name} has no healthcheck"
        assert not hc.get("disable"), f"{name} disables its healthcheck"
        assert health_command(svc), f"{name}: empty healthcheck test"
        assert {"interval", "timeout", "retries"} <= set(hc), f"{name}: set interval/timeout/retries"


def test_healthchecks_probe_each_services_own_health_port(compose: dict[str, Any]) -> None:
    for name, (_, _, _, port_name) in OUR_SERVICES.items():
        cmd = " ".join(health_command(compose["services"][name]))
        assert f"http://127.0.0.1:{DEFAULT_PORTS[port_name]}/health" in cmd, (name, cmd)
        assert "urllib" in cmd, f"{name}: the slim image has no curl; use python's urllib"
    assert health_command(compose["services"]["redis"]) == ["redis-cli", "ping"]


def test_every_depends_on_has_a_condition(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name, svc in services.items():
        deps = svc.get("depends_on")
        if deps is None:
            continue
        assert isinstance(deps, dict), f"{name}: depends_on must be a map with conditions"
        for dep, spec in deps.items():
            assert dep in services, f"{name} depends on unknown service {dep}"
            assert isinstance(spec, dict) and spec.get("condition"), f"{name} -> {dep}: no condition"
            if spec["condition"] == "service_healthy":
                assert services[dep].get("healthcheck"), (
                    f"{name} waits for {dep} to be healthy, but it has no healthcheck"
                )
            else:
                assert spec["condition"] == ONE_SHOT, f"{name} -> {dep}: {spec['condition']}"


def test_dependency_order(compose: dict[str, Any]) -> None:
    services = compose["services"]
    # no cycles
    state: dict[str, int] = {}

    def visit(n: str, path: tuple[str, ...]) -> None:
        if state.get(n) == 2:
            return
        assert state.get(n) != 1, f"dependency cycle: {' -> '.join(path + (n,))}"
        state[n] = 1
        for d in depends(services[n]):
            visit(d, path + (n,))
        state[n] = 2

    for n in services:
        visit(n, ())
    # each service waits for what it calls
    want = {
        "journal": {"world-host", "planner", "redis", "secrets-init"},
        "camera-worker": {"world-host", "redis", "secrets-init"},
        "bridge": {"journal", "camera-worker", "redis", "secrets-init"},
        "world-host": {"secrets-init"},
        "planner": {"secrets-init"},
    }
    for name, deps in want.items():
        assert deps <= set(depends(services[name])), (name, set(depends(services[name])))


def test_published_ports_are_loopback_only(compose: dict[str, Any]) -> None:
    published = {}
    for name, svc in compose["services"].items():
        assert svc.get("network_mode") in (None, "none"), f"{name}: network_mode {svc.get('network_mode')}"
        for entry in svc.get("ports", []):
            ip, pub, target = parse_port(entry)
            assert ip == "127.0.0.1", f"{name}: port {entry!r} is not bound to 127.0.0.1"
            assert pub, f"{name}: port {entry!r} has no fixed host port"
            published[name] = (pub, target)
    assert published == {"bridge": ("8787", "8787"), "world-host": ("8765", "8765"), "dashboard": ("8790", "8790")}


def test_parse_port_catches_open_bindings() -> None:
    assert parse_port("8787:8787")[0] is None
    assert parse_port("0.0.0.0:8787:8787")[0] == "0.0.0.0"
    assert parse_port("8787")[0] is None
    assert parse_port({"target": 8787, "published": "8787", "host_ip": "127.0.0.1"}) == ("127.0.0.1", "8787", "8787")


def test_named_volumes_declared_and_used(compose: dict[str, Any]) -> None:
    declared = set(compose.get("volumes") or {})
    assert REQUIRED_VOLUMES <= declared
    used: dict[str, set[str]] = {}
    for name, svc in compose["services"].items():
        for src, _target, _ro in volume_sources(svc):
            assert src in declared, f"{name} mounts undeclared volume {src}"
            used.setdefault(src, set()).add(name)
    assert declared == set(used), f"declared but unused: {declared - set(used)}"
    mounts = {n: {s: (t, ro) for s, t, ro in volume_sources(svc)} for n, svc in compose["services"].items()}
    assert mounts["world-host"]["world"] == ("/data", False)
    assert mounts["journal"]["journal"] == ("/data", False)
    assert mounts["camera-worker"]["camera"] == ("/data", False)
    assert mounts["journal"]["assets"][1] is False


def test_secrets_are_never_in_the_file(compose: dict[str, Any]) -> None:
    text = COMPOSE.read_text()
    assert not re.search(r"MCB_[A-Z]+_TOKEN", text), "tokens go in the secrets volume, never in env"
    assert "secrets:" in text
    for name, svc in compose["services"].items():
        mounts = {s: (t, ro) for s, t, ro in volume_sources(svc)}
        if name == "secrets-init":
            assert mounts["secrets"] == ("/secrets", False)
            continue
        if name in OUR_SERVICES:
            assert mounts.get("secrets") == ("/secrets", True), f"{name}: mount secrets read-only at /secrets"
            assert svc["environment"]["MCB_SECRETS_DIR"] == "/secrets"


def test_environment_points_services_at_each_other(compose: dict[str, Any]) -> None:
    settings_src = (ROOT / "libs/mcb-rpc/src/mcb_rpc/settings.py").read_text()
    services = compose["services"]
    expected = {
        # overridable for an external (Paper) world host; the embedded one by default
        "MCB_WORLD_HOST_URL": f"http://world-host:{DEFAULT_PORTS['world_host']}",
        "MCB_WORLD_HOST_TOKEN_FILE": "",
        "MCB_PLANNER_ADDR": f"planner:{DEFAULT_PORTS['planner_grpc']}",
        "MCB_JOURNAL_ADDR": f"journal:{DEFAULT_PORTS['journal_grpc']}",
        "MCB_CAMERA_ADDR": f"camera-worker:{DEFAULT_PORTS['camera_grpc']}",
        "MCB_REDIS_URL": "redis://redis:6379/0",
        "MCB_SECRETS_DIR": "/secrets",
        "MCB_RUNTIME_DIR": "/data",
        "MCB_BIND_HOST": "0.0.0.0",
    }
    for var in expected:
        assert f'"{var}"' in settings_src, f"{var} is not a variable mcb_rpc.settings reads"
    for name in OUR_SERVICES:
        env = services[name]["environment"]
        for var, value in expected.items():
            assert env.get(var) == value, (name, var, env.get(var))
        for var in env:
            assert var.startswith(("MCB_", "PYTHON")), (name, var)
    wh = services["world-host"]["environment"]
    assert wh["MCB_WORLD_CREATE"] == "flat"
    assert wh["MCB_ALLOW_LOCAL_AUTOMATION"] == "0", "local automation must be off by default"
    assert services["bridge"]["command"] == ["mcb-bridge", "http"]


# ----------------------------------------------------------------------------- Dockerfiles


def dockerfile_instructions(path: Path) -> list[tuple[str, str]]:
    lines, buf = [], ""
    for raw in path.read_text().splitlines():
        s = raw.strip()
        if not buf and (not s or s.startswith("#")):
            continue
        if buf and s.startswith("#"):
            continue
        if s.endswith("\\"):
            buf += s[:-1] + " "
            continue
        lines.append(buf + s)
        buf = ""
    assert not buf, f"{path}: dangling line continuation"
    out = []
    for line in lines:
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def stages(instrs: list[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """Stage name (or its index) -> its own instructions, FROM first, in file order."""
    out: dict[str, list[tuple[str, str]]] = {}
    for w, a in instrs:
        if w == "FROM":
            parts = a.split()
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else str(len(out))
            out[name] = []
        if out:
            out[list(out)[-1]].append((w, a))
    return out


def final_stage(instrs: list[tuple[str, str]], target: str | None = None) -> list[tuple[str, str]]:
    """The instructions an image built for ``target`` (default: the last stage) runs with: its
    stage's, after those of the earlier stages it is built FROM (`FROM runtime AS chat`)."""
    by_name = stages(instrs)
    name = target or list(by_name)[-1]
    assert name in by_name, f"no stage {name} (stages: {list(by_name)})"
    own = by_name[name]
    base = own[0][1].split()[0]
    return (final_stage(instrs, base) if base in by_name and base != name else []) + own


def exec_form(arg: str) -> list[str]:
    arg = arg.strip()
    return json.loads(arg) if arg.startswith("[") else shlex.split(arg)


def pyproject(service_dir: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / "services" / service_dir / "pyproject.toml").read_text())


@pytest.mark.parametrize("name", sorted(OUR_SERVICES))
def test_dockerfile(name: str, compose: dict[str, Any]) -> None:
    folder, package, script, port_name = OUR_SERVICES[name]
    svc = compose["services"][name]
    assert svc["build"]["context"] == ".", "build context is the repository root"
    path = ROOT / svc["build"]["dockerfile"]
    assert path == ROOT / "Dockerfile" and path.is_file(), "one Dockerfile, a target per service"
    assert svc["build"].get("target"), f"{name}: compose names its target"
    instrs = dockerfile_instructions(path)
    args = {k: v for w, a in instrs if w == "ARG" and "=" in a for k, v in [a.split("=", 1)]}

    # base image python:3.11-slim in every stage (or an earlier stage of the same file)
    for w, a in instrs:
        if w == "FROM":
            image = a.split()[0]
            if image in stages(instrs):
                continue
            image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), image)
            assert image == "python:3.11-slim", f"{path}: FROM {a}"

    # the target's environment is the one its own stage copies in, synced for this service's package
    final = final_stage(instrs, svc["build"]["target"])
    venvs = [
        a.split() for w, a in final if w == "COPY" and a.startswith("--from=") and a.endswith("/opt/venv /opt/venv")
    ]
    assert len(venvs) == 1, f"{name}: copies one environment ({venvs})"
    env_stage = venvs[0][0].removeprefix("--from=")
    runs = " ".join(a for w, a in final_stage(instrs, env_stage) if w == "RUN")
    assert re.search(r"pip install [^&]*\buv==", runs), "install uv from PyPI with pip (pinned)"
    sync = re.search(r"uv sync ([^&;]*)", runs)
    assert sync, "the image installs with `uv sync`"
    flags = sync.group(1).split()
    assert {"--frozen", "--no-dev"} <= set(flags)
    assert flags[flags.index("--package") + 1] == package
    assert pyproject(folder)["project"]["name"] == package

    copies = [exec_form(a) if a.startswith("[") else a.split() for w, a in instrs if w == "COPY"]
    sources = {s for c in copies if not c[0].startswith("--from") for s in c[:-1] if not s.startswith("--")}
    assert {"pyproject.toml", "uv.lock"} <= sources, "build from the workspace lockfile"
    for s in sources:
        assert (ROOT / s).exists(), f"{path}: COPY source {s} does not exist"

    # runs as non-root, in the final stage (the target compose builds)
    users = [a for w, a in final if w == "USER"]
    assert users, f"{path}: no USER in the final stage (would run as root)"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0"), f"{path}: runs as root"

    # the entry point is a console script declared by this service's pyproject
    scripts = pyproject(folder)["project"].get("scripts", {})
    cmd = exec_form([a for w, a in final if w == "CMD"][-1])
    assert cmd[0] == script and script in scripts, (cmd, scripts)
    if svc.get("command"):
        assert svc["command"][0] in scripts
    module, _, func = scripts[script].partition(":")
    mod_path = ROOT / "services" / folder / "src" / Path(*module.split("."))
    mod_file = mod_path.with_suffix(".py") if mod_path.with_suffix(".py").exists() else mod_path / "__init__.py"
    assert mod_file.is_file(), f"{script} -> {scripts[script]}: {mod_file} does not exist (yet)"
    assert re.search(rf"^def {func}\(", mod_file.read_text(), re.M), f"{mod_file} has no {func}()"

    env = " ".join(a for w, a in final if w == "ENV")
    assert re.search(r"\bMCB_BIND_HOST=0\.0\.0\.0\b", env), "bind all interfaces inside the container"

    exposed = {p for w, a in final if w == "EXPOSE" for p in a.split()}
    assert str(DEFAULT_PORTS[port_name]) in exposed, (exposed, port_name)

    hc = [a for w, a in final if w == "HEALTHCHECK"]
    assert len(hc) == 1 and "urllib.request" in hc[0] and "/health" in hc[0], hc


def test_dockerignore_keeps_the_context_small_and_secret_free() -> None:
    lines = {
        ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines() if ln.strip() and not ln.startswith("#")
    }
    for must in (".venv", ".runtime", "tests", "bench", "**/__pycache__", ".pytest_cache", ".ruff_cache", ".git"):
        assert must in lines, f".dockerignore must exclude {must}"
    for keep in ("src", "libs", "services", "uv.lock", "pyproject.toml"):
        assert keep not in lines, f".dockerignore must not exclude {keep} (the images need it)"


def test_lockfile_matches_the_workspace() -> None:
    """The images install with --frozen, so a stale uv.lock would build a broken image."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH")
    r = subprocess.run([uv, "lock", "--check", "--offline"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


# ----------------------------------------------------------------------------- behaviour


def _init_script(compose: dict[str, Any]) -> str:
    cmd = compose["services"]["secrets-init"]["command"]
    assert cmd[:2] == ["python", "-c"]
    return cmd[2]


@pytest.mark.skipif(os.geteuid() != 0, reason="the init script chowns to uid 10001, which needs root")
def test_secrets_init_creates_tokens_once(compose: dict[str, Any], tmp_path: Path) -> None:
    script = _init_script(compose)
    script = script.replace('"/secrets', f'"{tmp_path}/secrets').replace('"/config', f'"{tmp_path}/config')
    (tmp_path / "secrets").mkdir()
    (tmp_path / "config").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCB_")}

    def run(extra: dict[str, str]) -> str:
        r = subprocess.run(
            [sys.executable, "-c", script], env={**env, **extra}, capture_output=True, text=True, timeout=30
        )
        assert r.returncode == 0, r.stderr
        return r.stdout

    out1 = run({"MCB_ALLOW_LOCAL_AUTOMATION": "0", "MCB_PROJECT_ID": "default"})
    sec = tmp_path / "secrets"
    files = sorted(p.name for p in sec.iterdir())
    assert files == ["admin.token", "agent.token", "service.token"], files
    tokens = {}
    for p in sec.iterdir():
        st = p.stat()
        assert stat.S_IMODE(st.st_mode) == 0o600 and (st.st_uid, st.st_gid) == (10001, 10001)
        tokens[p.name] = p.read_text().strip()
        assert len(tokens[p.name]) >= 40 and tokens[p.name] not in out1
    assert len(set(tokens.values())) == 3, "admin, agent and service tokens differ"
    assert stat.S_IMODE(sec.stat().st_mode) == 0o700
    cfg = json.loads((tmp_path / "config" / "config.json").read_text())
    assert cfg["projects"][0]["project_id"] == "default" and cfg["projects"][0]["owner_player_id"]

    out2 = run({"MCB_ALLOW_LOCAL_AUTOMATION": "1"})
    assert "created" in out2 and "automation.token" in out2
    for name, tok in tokens.items():
        assert (sec / name).read_text().strip() == tok, f"{name} was rewritten"
        assert f"kept {tmp_path}/secrets/{name}" in out2
    assert (sec / "automation.token").exists()
    assert not list(sec.glob("*.tmp"))


class _Health(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        code = 200 if self.path == "/health" and type(self).status == 200 else (404 if self.path != "/health" else 503)
        self.send_response(code)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def health_server() -> Iterator[tuple[int, type[_Health]]]:
    handler = type("H", (_Health,), {"status": 200})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield srv.server_address[1], handler
    finally:
        srv.shutdown()
        srv.server_close()


def _python_healthchecks(compose: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """(where, python code, env var naming the port or None) for every python healthcheck."""
    out = []
    for name in OUR_SERVICES:
        cmd = health_command(compose["services"][name])
        assert cmd[:2] == ["python", "-c"], cmd
        out.append((f"compose:{name}", cmd[2], None))
        target = compose["services"][name]["build"]["target"]
        hc = [a for w, a in final_stage(dockerfile_instructions(ROOT / "Dockerfile"), target) if w == "HEALTHCHECK"][0]
        code = json.loads(hc[hc.index("CMD") + 3 :].strip())
        assert code[:2] == ["python", "-c"], code
        var = re.search(r"os\.environ\.get\('(\w+)'", code[2])
        out.append((f"Dockerfile:{target}", code[2], var.group(1) if var else None))
    return out


def test_healthcheck_commands_pass_on_200_and_fail_on_503(
    compose: dict[str, Any], health_server: tuple[int, type[_Health]]
) -> None:
    port, handler = health_server
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCB_")}
    for where, code, var in _python_healthchecks(compose):
        if var:
            run_env, run_code = {**env, var: str(port)}, code
        else:
            run_env, run_code = env, re.sub(r"127\.0\.0\.1:\d+/health", f"127.0.0.1:{port}/health", code)
        for status, ok in ((200, True), (503, False)):
            handler.status = status
            r = subprocess.run([sys.executable, "-c", run_code], env=run_env, capture_output=True, timeout=30)
            assert (r.returncode == 0) is ok, (where, status, r.stderr[-400:])


# ----------------------------------------------------------------------------- issue 15

PAPER = ROOT / "compose.paper.yaml"


class _TagLoader(yaml.SafeLoader):
    """safe_load plus Compose's merge tags (`!override`, `!reset`): the value, marked."""


def _tagged(tag: str) -> Any:
    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        if isinstance(node, yaml.MappingNode):
            value: Any = loader.construct_mapping(node, deep=True)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_scalar(node)  # type: ignore[arg-type]
        return {tag: value}

    return construct


_TagLoader.add_constructor("!override", _tagged("!override"))
_TagLoader.add_constructor("!reset", _tagged("!reset"))


def test_every_image_build_takes_the_extra_ca_argument(compose: dict[str, Any]) -> None:
    """Builds behind a TLS-intercepting proxy: one build argument, EXTRA_CA_CERTS, in every image's
    build stage, added to the CA bundle before pip and uv reach PyPI; compose passes it."""
    built = {name: svc for name, svc in compose["services"].items() if svc.get("build")}
    assert {"world-host", "planner", "journal", "camera-worker", "bridge", "chat"} <= set(built)
    for name, svc in built.items():
        args = svc["build"].get("args") or {}
        assert args.get("EXTRA_CA_CERTS") == "", (name, args)  # ${MCB_EXTRA_CA_CERTS:-}
        assert args.get("PYTHON_IMAGE") == "python:3.11-slim", (name, args)
        instrs = dockerfile_instructions(ROOT / svc["build"]["dockerfile"])
        build = stages(instrs)["build"]
        assert ("ARG", 'EXTRA_CA_CERTS=""') in build, name
        runs = [a for w, a in build if w == "RUN"]
        first = runs[0]
        assert first.index("EXTRA_CA_CERTS") < first.index("pip install"), (name, first)
        assert ">> /etc/ssl/certs/ca-certificates.crt" in first, name
        env = " ".join(a for w, a in build if w == "ENV")
        assert re.search(r"\bUV_(SYSTEM_CERTS|NATIVE_TLS)=1\b", env), f"{name}: uv must use the system CA bundle"
        assert "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt" in env, name
    env = load_compose({"MCB_EXTRA_CA_CERTS": "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----"})
    assert env["services"]["bridge"]["build"]["args"]["EXTRA_CA_CERTS"].startswith("-----BEGIN")


def test_chat_loop_is_a_service_of_its_own_profile(compose: dict[str, Any]) -> None:
    chat = compose["services"]["chat"]
    assert chat["profiles"] == ["chat"]
    assert "ports" not in chat
    assert chat["build"]["target"] == "chat" and chat["build"]["dockerfile"] == "Dockerfile"
    assert compose["services"]["bridge"]["build"]["target"] == "bridge"
    instrs = dockerfile_instructions(ROOT / "Dockerfile")
    assert list(stages(instrs))[-1] == "bridge", "plain `docker build` must still give the MCP bridge"
    final = final_stage(instrs, "chat")
    assert exec_form([a for w, a in final if w == "CMD"][-1]) == ["mcb-bridge", "chat"]
    assert [a for w, a in final if w == "USER"][-1].split(":")[0] == "mcb"
    assert "MCB_ACP_COMMAND=/opt/codex-acp/codex-acp" in " ".join(a for w, a in final if w == "ENV")
    mounts = {s: (tg, ro) for s, tg, ro in volume_sources(chat)}
    assert mounts["secrets"] == ("/secrets", True) and mounts["chat"] == ("/data", False)
    # the pinned agent the image fetches is the lockfile's (version and sha512 checked there)
    lock = json.loads((ROOT / "services/bridge/acp/package-lock.json").read_text())
    assert "node_modules/@zed-industries/codex-acp-linux-x64" in lock["packages"]
    assert "sha512" in (ROOT / "scripts/docker/fetch_codex_acp.py").read_text()


def test_paper_override_uses_an_external_host_on_loopback() -> None:
    doc = yaml.load(PAPER.read_text(), Loader=_TagLoader)  # noqa: S506 - a SafeLoader subclass
    services = doc["services"]
    assert services["world-host"] == {"profiles": ["embedded-world"]}, "the embedded host must not start"
    assert services["chat"]["profiles"] == {"!reset": []}, "the chat loop runs with a Paper server"
    assert services["bridge"]["ports"] == {"!reset": []}
    paper_env = services["journal"]["environment"]
    assert paper_env["MCB_BIND_HOST"] == "127.0.0.1"
    assert paper_env["MCB_WORLD_HOST_URL"].startswith("${MCB_WORLD_HOST_URL:?")
    assert paper_env["MCB_WORLD_HOST_TOKEN_FILE"] == "/run/mcb/world-host/service.token"
    for name in ("redis", "planner", "journal", "camera-worker", "bridge", "chat"):
        assert services[name]["network_mode"] == "host", name
        if name not in ("redis", "planner"):
            assert "world-host-secrets:/run/mcb/world-host:ro" in services[name]["volumes"], name
    for name in ("journal", "camera-worker"):
        deps = services[name]["depends_on"]["!override"]
        assert "world-host" not in deps and deps["world-host-tokens"]["condition"] == ONE_SHOT
    assert "--bind" in services["redis"]["command"]["!override"]
    init = services["world-host-tokens"]
    assert init["network_mode"] == "none" and init["restart"] == "no"
    assert any(v.endswith(":/in:ro") for v in init["volumes"])


def test_docker_compose_config_merges_the_paper_override(tmp_path: Path) -> None:
    docker = _compose_plugin()
    if docker is None:
        pytest.skip("the `docker compose` plugin is not installed here; the override is checked as YAML only")
    env = {**os.environ, "MCB_WORLD_HOST_URL": "http://127.0.0.1:8765", "MCB_WORLD_HOST_TOKEN_DIR": str(tmp_path)}
    r = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "-f", str(PAPER), "config", "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    merged = json.loads(r.stdout)["services"]
    assert "world-host" not in merged and "chat" in merged
    for name, svc in merged.items():
        assert not svc.get("ports"), f"{name} publishes {svc.get('ports')} in host networking"
        if name not in ("secrets-init", "world-host-tokens"):
            assert svc["network_mode"] == "host", name
        if name not in ("secrets-init", "world-host-tokens", "redis"):
            assert svc["environment"]["MCB_BIND_HOST"] == "127.0.0.1", name
            assert svc["environment"]["MCB_WORLD_HOST_URL"] == "http://127.0.0.1:8765", name
        for dep in svc.get("depends_on", {}):
            assert dep in merged, (name, dep)
    # without the external host's address it refuses to start
    env.pop("MCB_WORLD_HOST_URL")
    r = subprocess.run(
        [docker, "compose", "-f", str(COMPOSE), "-f", str(PAPER), "config", "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert r.returncode != 0 and "MCB_WORLD_HOST_URL" in r.stderr
