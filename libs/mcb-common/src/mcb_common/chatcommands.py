"""The one rule deciding whether an ``/ai`` line is a command or a prompt.

A line is a command only when it is *exactly* one of the forms below; anything else is a prompt
for the AI ("stop the tower at y=80" is a prompt). Keywords are case-insensitive, runs of spaces
count as one, and a leading ``/ai`` is ignored. The Java core has the same rule
(``paper-plugin/core/.../ChatCommands.java``); the embedded host and the bridge use this module,
and tests/contract/test_world_chat.py checks both hosts give every line the same type.

    stop | cancel                          stop
    resume | status                        resume, status
    project create NAME | project use NAME NAME: [A-Za-z0-9][A-Za-z0-9_-]{0,39}
    area set R                             R: an integer (blocks around the player)
    area set X1 Y1 Z1 X2 Y2 Z2             integers, or ~ / ~N relative to the player
    undo [OP]                              OP: op_ + letters/digits
    protect PART [off]                     PART: pt_ + letters/digits
    camera save NAME
    who | who X1 Y1 Z1 X2 Y2 Z2            the block looked at, or a box (integers, or ~ / ~N)
    preview | apply | reject               the player's prepared plan (docs/chat.md, Previews)
    rollback WHO [since T] [R | X1 Y1 Z1 X2 Y2 Z2]
                                           WHO: a player (name or id) or an environment cause; T: N s|m|h|d;
                                           R: blocks around the player; args: WHO, then T or "", then the box
                                           (offered as the player's plan: apply / reject decide)

Values are only checked for their shape here; ranges and existence are the bridge's business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NAME = r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}"
TARGET = r"[A-Za-z0-9_][A-Za-z0-9_-]{0,39}"  # a player's name (3..16 of A-Za-z0-9_), an id, or a cause
_COORD = r"(?:-?\d{1,8}|~(?:-?\d{1,8})?)"
_FORM = re.compile(
    r"(?:/ai\s+)?(?:"
    r"(?P<stop>stop|cancel)"
    r"|(?P<resume>resume)"
    r"|(?P<status>status)"
    r"|(?P<plan>preview|apply|reject)"
    rf"|project\s+(?P<project>create|use)\s+(?P<pname>{NAME})"
    r"|area\s+set\s+(?P<radius>\d{1,8})"
    rf"|area\s+set\s+(?P<box>{_COORD}(?:\s+{_COORD}){{5}})"
    r"|undo(?:\s+(?P<op>op_[A-Za-z0-9]{1,64}))?"
    r"|protect\s+(?P<part>pt_[A-Za-z0-9]{1,64})(?:\s+(?P<off>off))?"
    rf"|camera\s+save\s+(?P<cname>{NAME})"
    rf"|(?P<who>who)(?:\s+(?P<wbox>{_COORD}(?:\s+{_COORD}){{5}}))?"
    rf"|rollback\s+(?P<rwho>{TARGET})(?:\s+since\s+(?P<rsince>\d{{1,6}}[smhd]))?"
    rf"(?:\s+(?P<rbox>{_COORD}(?:\s+{_COORD}){{5}}|\d{{1,8}}))?"
    r")",
    re.IGNORECASE | re.ASCII,
)

NAMES = (
    "stop",
    "resume",
    "status",
    "project create",
    "project use",
    "area set",
    "undo",
    "protect",
    "camera save",
    "who",
    "preview",
    "apply",
    "reject",
    "rollback",
)


@dataclass(frozen=True)
class Command:
    name: str  # one of NAMES
    args: tuple[str, ...] = ()


def parse(text: str | None) -> Command | None:
    """The command the whole line is, or None when it is a prompt."""
    m = _FORM.fullmatch((text or "").strip())
    if m is None:
        return None
    g = m.groupdict()
    if g["stop"]:
        return Command("stop")
    if g["resume"]:
        return Command("resume")
    if g["status"]:
        return Command("status")
    if g["plan"]:
        return Command(g["plan"].lower())
    if g["project"]:
        return Command("project " + g["project"].lower(), (g["pname"],))
    if g["radius"]:
        return Command("area set", (g["radius"],))
    if g["box"]:
        return Command("area set", tuple(g["box"].split()))
    if g["part"]:
        return Command("protect", (g["part"], "off") if g["off"] else (g["part"],))
    if g["cname"]:
        return Command("camera save", (g["cname"],))
    if g["who"]:
        return Command("who", tuple(g["wbox"].split()) if g["wbox"] else ())
    if g["rwho"]:
        return Command("rollback", (g["rwho"], (g["rsince"] or "").lower(), *(g["rbox"] or "").split()))
    return Command("undo", (g["op"],) if g["op"] else ())


def message_type(text: str | None, may_stop_all: bool = True) -> str:
    """The ChatMessage type of a line: "cancel" (a stop by someone who may stop everything: the host
    pauses writes at once), "command" (any other exact command) or "prompt"."""
    cmd = parse(text)
    if cmd is None:
        return "prompt"
    return "cancel" if cmd.name == "stop" and may_stop_all else "command"
