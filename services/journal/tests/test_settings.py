"""The journal's tunables are read in one place (settings.py), once at start, and checked: a bad
value stops the journal naming the variable (it used to be a ValueError traceback at import for
MCB_LINK_RETRY_SECONDS and a silent default for MCB_JOURNAL_PACK_AFTER_S)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from mcb_journal.settings import JournalSettings

SRC = Path(__file__).resolve().parents[1] / "src" / "mcb_journal"


def test_defaults_and_values_from_the_environment() -> None:
    assert JournalSettings.from_env({}) == JournalSettings(link_retry_s=10.0, pack_after_s=30.0)
    s = JournalSettings.from_env({"MCB_LINK_RETRY_SECONDS": " 180 ", "MCB_JOURNAL_PACK_AFTER_S": "-1"})
    assert (s.link_retry_s, s.pack_after_s) == (180.0, -1.0)  # negative packing delay: never automatically
    assert JournalSettings.from_env({"MCB_LINK_RETRY_SECONDS": ""}).link_retry_s == 10.0


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"MCB_LINK_RETRY_SECONDS": "ten"}, "MCB_LINK_RETRY_SECONDS"),
        ({"MCB_LINK_RETRY_SECONDS": "-5"}, "MCB_LINK_RETRY_SECONDS"),
        ({"MCB_LINK_RETRY_SECONDS": "inf"}, "MCB_LINK_RETRY_SECONDS"),
        ({"MCB_JOURNAL_PACK_AFTER_S": "30s"}, "MCB_JOURNAL_PACK_AFTER_S"),
        ({"MCB_JOURNAL_PACK_AFTER_S": "nan"}, "MCB_JOURNAL_PACK_AFTER_S"),
    ],
)
def test_a_bad_value_stops_the_journal_naming_the_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(SystemExit, match=named):
        JournalSettings.from_env(env)


def test_no_module_but_settings_reads_a_journal_tunable() -> None:
    readers = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name in ("settings.py", "faults.py"):  # faults.py: test-only fault injection
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb"):
                readers.append(f"{path.name}:{node.lineno}")
    assert readers == [], f"read the environment in settings.py (JournalSettings), not in {readers}"
