"""Bounded numeric expressions over recipe params — a hand-written tokenizer and a
recursive-descent evaluator. Never ``eval``.

Grammar (docs/recipes.md, "Expressions")::

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "/" | "%") unary)*
    unary   := ("+" | "-") unary | primary
    primary := NUMBER | NAME | NAME "(" expr ("," expr)* ")" | "(" expr ")"
    NUMBER  := digits ["." digits]          NAME := [A-Za-z_][A-Za-z0-9_]{0,31}

Functions: ``min(a, b, …)``, ``max(a, b, …)``, ``abs(a)``, ``floor(a)``, ``ceil(a)``,
``round(a)`` (halves toward +∞). Arithmetic is exact (rationals): ``7/2`` is 3.5, ``%`` is the
floored remainder (``-1 % 4`` = 3, like Python). Bounds: text ≤ 256 characters, ≤ 128 tokens,
nesting ≤ 32, every intermediate |value| ≤ 10^15 and denominators ≤ 10^12. Every refusal is
``invalid_request`` with ``details.reason = "expression"`` and the path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction

from mcb_common.errors import ErrorCode, McbError
from mcb_common.recipe_schema import EXPR_PATTERN  # noqa: F401 - re-exported for the parser

MAX_EXPR_TEXT = 256
MAX_TOKENS = 128
MAX_DEPTH = 32
MAX_MAGNITUDE = 10**15
MAX_DENOMINATOR = 10**12
FUNCTIONS = ("min", "max", "abs", "floor", "ceil", "round")

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


def _err(path: str, message: str, **details) -> McbError:
    return McbError(
        ErrorCode.INVALID_REQUEST, f"{path}: {message}", details={"path": path, "reason": "expression", **details}
    )


def tokenize(text: str, path: str) -> list[tuple[str, str]]:
    if len(text) > MAX_EXPR_TEXT:
        raise _err(path, f"expression is {len(text)} characters; at most {MAX_EXPR_TEXT}")
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m is not None  # the last alternative matches any character
        num, name, other = m.groups()
        if num is not None:
            out.append(("num", num))
        elif name is not None:
            if len(name) > 32:
                raise _err(path, f"name {name[:40]!r} is longer than 32 characters")
            out.append(("name", name))
        elif other in "+-*/%(),":
            out.append(("op", other))
        else:
            raise _err(
                path,
                f"unexpected character {other!r} at {m.start(3) + 1} in {text!r}; "
                "expressions use numbers, param names, + - * / % ( ) and "
                f"{', '.join(FUNCTIONS)}",
            )
        pos = m.end()
        if len(out) > MAX_TOKENS:
            raise _err(path, f"expression has more than {MAX_TOKENS} tokens")
    if not out:
        raise _err(path, "expression is empty")
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], env: Mapping[str, Fraction], path: str, text: str):
        self.t = tokens
        self.i = 0
        self.env = env
        self.path = path
        self.text = text
        self.depth = 0

    # -- helpers
    def peek(self) -> tuple[str, str] | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, value: str) -> bool:
        tok = self.peek()
        if tok is not None and tok[0] == "op" and tok[1] == value:
            self.i += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.take(value):
            got = self.peek()
            raise _err(self.path, f"expected {value!r} in {self.text!r}, got {repr(got[1]) if got else 'the end'}")

    def check(self, v: Fraction) -> Fraction:
        if abs(v) > MAX_MAGNITUDE:
            raise _err(self.path, f"{self.text!r}: an intermediate value exceeds {MAX_MAGNITUDE:.0e}")
        if v.denominator > MAX_DENOMINATOR:
            raise _err(self.path, f"{self.text!r}: a fraction's denominator exceeds {MAX_DENOMINATOR:.0e}")
        return v

    # -- grammar
    def expr(self) -> Fraction:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _err(self.path, f"expression nests deeper than {MAX_DEPTH}")
        v = self.term()
        while True:
            if self.take("+"):
                v = self.check(v + self.term())
            elif self.take("-"):
                v = self.check(v - self.term())
            else:
                break
        self.depth -= 1
        return v

    def term(self) -> Fraction:
        v = self.unary()
        while True:
            if self.take("*"):
                v = self.check(v * self.unary())
            elif self.take("/"):
                d = self.unary()
                if d == 0:
                    raise _err(self.path, f"{self.text!r} divides by zero")
                v = self.check(v / d)
            elif self.take("%"):
                d = self.unary()
                if d == 0:
                    raise _err(self.path, f"{self.text!r} takes a remainder by zero")
                v = self.check(v - d * math.floor(v / d))
            else:
                return v

    def unary(self) -> Fraction:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _err(self.path, f"expression nests deeper than {MAX_DEPTH}")
        if self.take("-"):
            v = -self.unary()
        elif self.take("+"):
            v = self.unary()
        else:
            v = self.primary()
        self.depth -= 1
        return v

    def primary(self) -> Fraction:
        tok = self.peek()
        if tok is None:
            raise _err(self.path, f"{self.text!r} ends where a number, name or '(' is expected")
        kind, val = tok
        if kind == "num":
            self.i += 1
            return self.check(Fraction(val))
        if kind == "name":
            self.i += 1
            if self.take("("):
                if val not in FUNCTIONS:
                    raise _err(self.path, f"unknown function {val!r}; use {', '.join(FUNCTIONS)}")
                args = [self.expr()]
                while self.take(","):
                    args.append(self.expr())
                self.expect(")")
                return self.call(val, args)
            if val in FUNCTIONS:
                raise _err(self.path, f"{val} is a function; call it like {val}(x)")
            if val not in self.env:
                known = ", ".join(sorted(self.env)) or "none"
                raise _err(self.path, f"unknown param {val!r} in {self.text!r}; params: {known}", name=val)
            return self.env[val]
        if self.take("("):
            v = self.expr()
            self.expect(")")
            return v
        raise _err(self.path, f"unexpected {val!r} in {self.text!r}")

    def call(self, fn: str, args: list[Fraction]) -> Fraction:
        if fn in ("min", "max"):
            return min(args) if fn == "min" else max(args)
        if len(args) != 1:
            raise _err(self.path, f"{fn}() takes one argument, got {len(args)}")
        (a,) = args
        if fn == "abs":
            return abs(a)
        if fn == "floor":
            return Fraction(math.floor(a))
        if fn == "ceil":
            return Fraction(math.ceil(a))
        return Fraction(math.floor(a + Fraction(1, 2)))  # round: halves toward +inf


def evaluate(text: str, env: Mapping[str, Fraction], path: str) -> Fraction:
    """The exact value of ``text`` with ``env``'s params; ``invalid_request`` otherwise."""
    tokens = tokenize(text, path)
    p = _Parser(tokens, env, path, text)
    v = p.expr()
    if p.i != len(tokens):
        raise _err(path, f"unexpected {tokens[p.i][1]!r} after a complete expression in {text!r}")
    return v


def names_in(text: str, path: str) -> set[str]:
    """Param names an expression references (for resolving params in dependency order)."""
    toks = tokenize(text, path)
    out = set()
    for i, (kind, val) in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if kind == "name" and not (nxt and nxt == ("op", "(")):
            out.add(val)
    return out


def number_from_json(value: int | float) -> Fraction:
    """A JSON number as an exact rational (0.1 is one tenth, as written)."""
    if isinstance(value, int):
        return Fraction(value)
    return Fraction(repr(value))


def resolve_params(raw: Mapping[str, int | float | str], path: str = "params") -> dict[str, Fraction]:
    """Params may be numbers or expressions over other params; cycles are refused."""
    out: dict[str, Fraction] = {}
    visiting: list[str] = []

    def visit(name: str) -> Fraction:
        if name in out:
            return out[name]
        if name in visiting:
            cycle = " → ".join([*visiting[visiting.index(name) :], name])
            raise _err(f"{path}.{name}", f"params refer to each other in a cycle: {cycle}")
        v = raw[name]
        if isinstance(v, str):
            visiting.append(name)
            for dep in sorted(names_in(v, f"{path}.{name}")):
                if dep in raw:
                    visit(dep)
            visiting.pop()
            out[name] = evaluate(v, out, f"{path}.{name}")
        else:
            out[name] = number_from_json(v)
        return out[name]

    for name in sorted(raw):
        visit(name)
    return out


def fraction_json(v: Fraction) -> int | str:
    """A param's value in the normal form: an int, or "p/q"."""
    return int(v) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
