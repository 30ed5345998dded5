from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mcb_common.registry import Registry

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO.parent / "shared" / "fixtures"


@pytest.fixture(scope="session")
def registry() -> Registry:
    return Registry.load()


@pytest.fixture
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"third-party fixtures not present at {FIXTURES} (CI provides ../shared/fixtures)")
    return FIXTURES


@pytest.fixture
def vanilla_copy(fixtures_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the vanilla 1.21.11 fixture world (never write into ../shared)."""
    dst = tmp_path / "vanilla"
    shutil.copytree(fixtures_dir / "world" / "minestom_vanilla_1.21.11", dst)
    for p in dst.rglob("*"):
        p.chmod(0o644 if p.is_file() else 0o755)
    dst.chmod(0o755)
    return dst


import sys  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # anvil_check
