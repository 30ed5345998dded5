"""The game glue (oni-mod/glue) compiles: against the reference stubs of the game's API
(oni-mod/stubs, the signatures of a named game build, each with where it was seen) always, and
against a real install when ONI_MANAGED=<game>/OxygenNotIncluded_Data/Managed is set.

The stubs are at least as strict as the game: the calls the game does not have (the glue's old
compile errors) fail against them too."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import pytest

from .conftest import MOD

STUBS = MOD / "stubs"
GLUE = MOD / "glue"


def _mcs() -> str:
    mcs = shutil.which("mcs")
    if not mcs:
        pytest.skip("mcs not installed (oni-mod/install_mono.sh installs mono-devel as root; `make test-deps` runs it)")
    return mcs


def _sdk() -> str:
    return "4.7.1-api" if pathlib.Path("/usr/lib/mono/4.7.1-api").is_dir() else "4.5"


@pytest.fixture(scope="module")
def stubs_dll(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("stubs") / "OniGameStubs.dll"
    r = subprocess.run(
        [
            _mcs(),
            "-nologo",
            "-warnaserror",
            f"-sdk:{_sdk()}",
            "-target:library",
            f"-out:{out}",
            *map(str, sorted(STUBS.glob("*.cs"))),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def compile_against(refs: list[str], sources: list[pathlib.Path], out: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            _mcs(),
            "-nologo",
            "-warnaserror",
            f"-sdk:{_sdk()}",
            "-target:library",
            f"-out:{out}",
            *(f"-r:{r}" for r in refs),
            *map(str, sources),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_glue_compiles_against_the_reference_stubs(stubs_dll: pathlib.Path, tmp_path: pathlib.Path) -> None:
    sources = sorted((MOD / "core").glob("*.cs")) + sorted(GLUE.glob("*.cs"))
    r = compile_against([str(stubs_dll)], sources, tmp_path / "OniAgentMod.dll")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "OniAgentMod.dll").stat().st_size > 0


# Each of the glue's old errors (issue 28, "The glue does not compile"), as the smallest snippet: the
# stubs refuse it as the game's assemblies do.
WRONG = {
    "UserMod2 has no OnUnload": "class M : KMod.UserMod2 { public override void OnUnload(HarmonyLib.Harmony h) { } }",
    "geysers are kept per world": "class M { object F() { return Components.Geysers.Items; } }",
    "Geyser.emitter is private": "class M { object F(Geyser g) { return g.emitter; } }",
    "no NotificationManager.GetNotifications": "class M { object F() { return NotificationManager.Instance.GetNotifications(); } }",
    "amounts need Klei.AI": 'class M { float F(MinionIdentity m) { return m.GetAmounts().GetValue("Stress"); } }',
    # the traps of issue 28's later readers: what the game keeps to itself
    "CircuitManager keeps its circuits private": "class M { object F() { return Game.Instance.circuitManager.circuitInfo; } }",
    "IsPowered is set by the consumer only": "class M { void F(EnergyConsumer e) { e.IsPowered = true; } }",
    "a world has no width field": "class M { int F(WorldContainer w) { return w.Width; } }",
}


@pytest.mark.parametrize("why", sorted(WRONG))
def test_stubs_refuse_what_the_game_does_not_have(stubs_dll: pathlib.Path, tmp_path: pathlib.Path, why: str) -> None:
    src = tmp_path / "Wrong.cs"
    src.write_text(WRONG[why])
    r = compile_against([str(stubs_dll)], [src], tmp_path / "Wrong.dll")
    assert r.returncode != 0, f"the stubs accept a call the game does not have ({why})"
    assert re.search(r"error CS(0115|1061|0122|0272)", r.stdout + r.stderr), r.stdout + r.stderr


def test_harmony_patches_name_methods_the_stubs_declare() -> None:
    stubs = "\n".join(p.read_text() for p in STUBS.glob("*.cs"))
    patches = re.findall(
        r'\[HarmonyPatch\(typeof\((\w+)\), "(\w+)"\)\]', "\n".join(p.read_text() for p in GLUE.glob("*.cs"))
    )
    assert patches
    for cls, method in patches:
        body = re.search(rf"\bclass {cls}\b[^{{]*\{{(.*?)\n\}}", stubs, re.S)
        assert body, f"no stub for {cls}"
        assert re.search(rf"\bvoid {method}\(", body.group(1)), f"{cls}.{method} is not declared in the stubs"


def test_every_stub_type_says_where_its_signature_was_seen() -> None:
    for path in STUBS.glob("*.cs"):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if re.match(r"\s*public (static |sealed |abstract )*(class|struct|enum) ", line):
                above = [x.strip() for x in lines[max(0, i - 8) : i]]
                assert any(x.startswith("//") for x in above) or path.name == "Stub.cs", (
                    f"{path.name}:{i + 1}: {line.strip()} has no comment saying where it was seen"
                )


def test_glue_compiles_against_a_real_install(tmp_path: pathlib.Path) -> None:
    managed = os.environ.get("ONI_MANAGED")
    if not managed:
        pytest.skip(
            "ONI_MANAGED is not set: set it to <game>/OxygenNotIncluded_Data/Managed of an installed "
            "game to compile the glue against the real assemblies (none here: the game is proprietary)"
        )
    m = pathlib.Path(managed)
    names = ["Assembly-CSharp", "Assembly-CSharp-firstpass", "UnityEngine", "UnityEngine.CoreModule", "0Harmony"]
    refs = [str(m / f"{n}.dll") for n in names] + (
        [str(m / "netstandard.dll")] if (m / "netstandard.dll").exists() else []
    )
    missing = [r for r in refs if not pathlib.Path(r).exists()]
    assert not missing, f"not in ONI_MANAGED: {missing}"
    sources = sorted((MOD / "core").glob("*.cs")) + sorted(GLUE.glob("*.cs"))
    r = compile_against(refs, sources, tmp_path / "OniAgentMod.dll")
    assert r.returncode == 0, r.stdout + r.stderr


def test_foreach_over_components_never_casts() -> None:
    """`foreach (CreatureBrain c in Components.Brains.Items)` compiles (foreach casts) and throws
    InvalidCastException at the first duplicant: Brains holds every Brain (issue 28, item 2). Each
    foreach over a Components collection must declare the collection's own element type and
    narrow with `as` inside."""
    stubs = (STUBS / "AssemblyCSharp.cs").read_text()
    element = dict((name, t) for t, name in re.findall(r"Components\.Cmps(?:ByWorld)?<(\w+)> (\w+);", stubs))
    assert element["Brains"] == "Brain"
    loops = re.findall(
        r"foreach \((\w+) \w+ in Components\.(\w+)\.", "\n".join(p.read_text() for p in GLUE.glob("*.cs"))
    )
    assert loops
    for declared, name in loops:
        assert declared == element[name], (
            f"foreach ({declared} ... in Components.{name}): the elements are {element[name]}"
        )
