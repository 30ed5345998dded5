"""The core imports no transport (STYLE habit 1): checked in a fresh interpreter where
importing grpc, redis, fastapi, uvicorn or mcp fails."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CORE = [
    "mcb_planner",
    "mcb_planner.recipe",
    "mcb_planner.shapes",
    "mcb_planner.compile",
    "mcb_planner.sources",
    "mcb_planner.solids",
    "mcb_planner.connect",
    "mcb_planner.grammar",
    "mcb_planner.ops",
    "mcb_planner.placement",
    "mcb_planner.build",
    "mcb_common.recipe_schema",
]
BLOCKED = ["grpc", "redis", "fastapi", "uvicorn", "mcp", "starlette", "httpx"]

PROGRAM = textwrap.dedent("""
    import importlib, importlib.abc, sys
    BLOCKED = {blocked!r}

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"core imported transport module {{name}}")
            return None

    sys.meta_path.insert(0, Block())
    for mod in {core!r}:
        importlib.import_module(mod)
    from mcb_planner.compile import compile_recipe
    r = compile_recipe({{"version": 1, "operations": [{{"type": "box", "min": {{"x": 0, "y": 0, "z": 0}},
                        "max": {{"x": 1, "y": 1, "z": 1}}, "block": "stone"}}]}})
    assert len(r) == 8
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    assert not leaked, leaked
    print("ok")
""")


def run(core: list[str]) -> subprocess.CompletedProcess:
    code = PROGRAM.format(blocked=BLOCKED, core=core)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_core_modules_import_and_compile_without_transport():
    res = run(CORE)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"


def test_the_guard_itself_catches_a_transport_import():
    res = run([*CORE, "mcb_planner.servicer"])
    assert res.returncode != 0
    assert "core imported transport module grpc" in res.stderr
