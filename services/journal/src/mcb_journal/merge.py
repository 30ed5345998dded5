"""The three-way merge for regenerating a part (seed design §10 v0.2). Pure.

For each position, with G0 the part's previously generated state, C the current world and
G1 the newly generated state:

    G1 == G0  → keep C            (the design did not change here: manual edits survive)
    C  == G0  → write G1          (untouched since we generated it)
    C  == G1  → nothing to do     (already what the new design wants)
    otherwise → conflict          (both the design and the world changed: a person decides)

Positions only in G1 are new: they follow the ordinary write rule (C is the base).
Positions only in G0 leave the design: their G1 is the state our original write replaced
("before"), so an old roof is removed unless someone changed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Pos = tuple[int, int, int]


@dataclass
class MergeResult:
    writes: dict[Pos, tuple[str, str]] = field(default_factory=dict)  # pos -> (base=C, desired=G1)
    kept: list[Pos] = field(default_factory=list)  # G1 == G0: C stays, whatever it is
    already: list[Pos] = field(default_factory=list)  # C == G1
    conflicts: dict[Pos, tuple[str, str, str]] = field(default_factory=dict)  # pos -> (G0, C, G1)


def merge_rule(g0: str, c: str, g1: str) -> str:
    """'keep' | 'write' | 'nothing' | 'conflict' for one position (the table above)."""
    if g1 == g0:
        return "keep"
    if c == g0:
        return "write"
    if c == g1:
        return "nothing"
    return "conflict"


def three_way(g0: dict[Pos, str], before: dict[Pos, str], current: dict[Pos, str], g1: dict[Pos, str]) -> MergeResult:
    out = MergeResult()
    for p in sorted(set(g0) | set(g1)):
        c = current[p]
        if p not in g0:  # new in the design: ordinary write (base = what is there now)
            if c == g1[p]:
                out.already.append(p)
            else:
                out.writes[p] = (c, g1[p])
            continue
        target = g1[p] if p in g1 else before[p]
        verdict = merge_rule(g0[p], c, target)
        if verdict == "keep":
            out.kept.append(p)
        elif verdict == "write":
            out.writes[p] = (c, target)
        elif verdict == "nothing":
            out.already.append(p)
        else:
            out.conflicts[p] = (g0[p], c, target)
    return out
