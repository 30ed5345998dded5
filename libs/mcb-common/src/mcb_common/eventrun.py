"""A run of block events (the world protocol's ``EventRun``, issue 29): events of one writer at one
time with the consecutive seqs ``first``, ``first`` + 1, ..., as columns. The embedded host keeps
what it records as runs and pages them; the journal's observer reads them. Each side expands a run
into its own event tuples."""

from __future__ import annotations

from typing import NamedTuple


class EventRun(NamedTuple):
    first: int
    source: str
    player_id: str
    at_millis: int
    operation_id: str
    player_name: str
    cause: str
    x: list[int]
    y: list[int]
    z: list[int]
    before: list[str]
    after: list[str]

    def part(self, i: int, j: int) -> EventRun:
        """Its events i..j-1 as a run of their own."""
        return self._replace(
            first=self.first + i,
            x=self.x[i:j],
            y=self.y[i:j],
            z=self.z[i:j],
            before=self.before[i:j],
            after=self.after[i:j],
        )
