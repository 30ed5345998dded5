"""Issue 12 item 8 (kill -9 part), bounded for CI: one kill -9 round per victim (world host,
journal, Redis) at a random moment of a 6,400-block apply with a scripted player editing the
region; 0 lost, 0 duplicated, 0 clobbered player blocks, and every operation ends applied,
conflict or recovery_required (a recovery_required one is reviewed and abandoned). The long
version with many rounds is ``bench/fault_rounds.py``; ``MCB_FAULT_SEED`` replays a seed."""

from __future__ import annotations

import os
import random

import pytest
from e2e.components import start_components
from hardening.faultrounds import VICTIMS, run_round, summary


@pytest.fixture(scope="module")
def comp(tmp_path_factory):
    c = start_components(tmp_path_factory.mktemp("kill9") / "rt")
    try:
        yield c
    finally:
        c.stop_all()


@pytest.mark.timeout(240)
def test_kill9_of_each_service_mid_apply(comp):
    seed = int(os.environ.get("MCB_FAULT_SEED") or random.SystemRandom().randrange(1 << 30))
    rng = random.Random(seed)
    results = [run_round(comp, r, rng, victim) for r, victim in enumerate(VICTIMS)]
    s = summary(results)
    print(f"seed {seed}: {s}")
    for x in results:
        print(x.as_dict())
    assert not s["problems"], (seed, s["problems"])
    assert (s["lost"], s["duplicated"], s["clobbered"]) == (0, 0, 0), (seed, s)
    assert sum(s["by_state"].get(k, 0) for k in ("applied", "conflict", "recovery_required")) == len(results)
    assert s["host_written"] > 0 and s["player_edits"] > 0  # the round did write, and the player did edit
