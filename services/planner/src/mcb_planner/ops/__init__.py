"""Recipe operations, one class per file (base.py says what each knows).

A new shape is one file here (a ``Shape`` subclass: its dataclass fields, ``parse``,
``to_json``, ``local_bounds``, ``count``, ``cells``; ``write`` when it does more than place
its cells) plus its ``$defs`` entry in
``mcb_common.recipe_schema`` (the grammar, which the bridge serves) and its tests.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Iterator

from .arch import ArchOp
from .base import Container, Op, Placer, Shape
from .box import BoxOp
from .cylinder import CylinderOp
from .foundation import FoundationOp
from .line import LineOp
from .overlay import OverlayOp
from .paste import PasteOp
from .repeat import RepeatOp
from .replace import ReplaceOp
from .solid import SolidOp
from .transform import TransformOp

for _m in pkgutil.iter_modules(__path__):  # every file here, a new one included
    importlib.import_module(f"{__name__}.{_m.name}")


def _classes(cls: type[Op]) -> Iterator[type[Op]]:
    for sub in cls.__subclasses__():
        # (a slots dataclass is a new class: count the one its module holds)
        if "TYPES" in vars(sub) and getattr(sys.modules[sub.__module__], sub.__name__, None) is sub:
            yield sub
        yield from _classes(sub)


# JSON "type" → the class that parses it (recipe.py checks the schema names the same ones)
KINDS: dict[str, type[Op]] = {t: cls for cls in _classes(Op) for t in cls.TYPES}

Operation = Op

__all__ = [
    "KINDS",
    "ArchOp",
    "Container",
    "BoxOp",
    "CylinderOp",
    "FoundationOp",
    "LineOp",
    "Op",
    "Operation",
    "OverlayOp",
    "PasteOp",
    "Placer",
    "RepeatOp",
    "ReplaceOp",
    "Shape",
    "SolidOp",
    "TransformOp",
]
