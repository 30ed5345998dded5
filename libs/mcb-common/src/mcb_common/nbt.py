"""Java-edition NBT: a typed codec whose read -> write round trip is byte-identical.

Format (big-endian throughout): a named root tag ``type:u8, name:string, payload``.
Strings are ``u16 length`` + Java *modified* UTF-8 (NUL as ``C0 80``, characters beyond the
BMP as two 3-byte surrogates). The 13 tag types are kept distinct on the Python side:

    0 End        (only inside List as an element type of an empty list)
    1 Byte       Byte(int)          -128..127
    2 Short      Short(int)
    3 Int        Int(int)
    4 Long       Long(int)
    5 Float      Float(float)       32-bit on disk
    6 Double     Double(float)
    7 ByteArray  ByteArray(bytes)   raw (signed on the Java side; kept as raw bytes here)
    8 String     String(str)        a plain ``str`` is accepted when writing
    9 List       List(elem_type, items)  keeps its element type even when empty
   10 Compound   Compound(dict)     keeps key order
   11 IntArray   IntArray(array 'i')
   12 LongArray  LongArray(array 'q')

``bool`` is written as Byte. Any other plain Python value (int, float, list, dict) is
refused when writing: the caller must say which NBT type it means.

Helpers: ``read``/``write`` for uncompressed bytes, ``read_compressed`` (auto gzip/zlib/raw),
``gzip_bytes``/``zlib_bytes``. No third-party dependency.
"""

from __future__ import annotations

import gzip
import re
import struct
import sys
import zlib
from array import array
from collections.abc import Iterable
from typing import Any, cast

END, BYTE, SHORT, INT, LONG, FLOAT, DOUBLE, BYTE_ARRAY, STRING, LIST, COMPOUND, INT_ARRAY, LONG_ARRAY = range(13)

TAG_NAMES = {
    END: "End",
    BYTE: "Byte",
    SHORT: "Short",
    INT: "Int",
    LONG: "Long",
    FLOAT: "Float",
    DOUBLE: "Double",
    BYTE_ARRAY: "ByteArray",
    STRING: "String",
    LIST: "List",
    COMPOUND: "Compound",
    INT_ARRAY: "IntArray",
    LONG_ARRAY: "LongArray",
}

_LITTLE = sys.byteorder == "little"
MAX_DEPTH = 512


class NbtError(ValueError):
    """Malformed NBT (truncated, unknown tag type, bad string, too deep)."""


# ---- typed values ------------------------------------------------------------------------
class _IntTag(int):
    tag_id = -1
    _bits = 0

    def __new__(cls, value: int = 0) -> Any:
        v = int(value)
        lo, hi = -(1 << (cls._bits - 1)), (1 << (cls._bits - 1)) - 1
        if not lo <= v <= hi:
            raise OverflowError(f"{cls.__name__} out of range: {v}")
        return super().__new__(cls, v)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({int(self)})"


class Byte(_IntTag):
    tag_id, _bits = BYTE, 8


class Short(_IntTag):
    tag_id, _bits = SHORT, 16


class Int(_IntTag):
    tag_id, _bits = INT, 32


class Long(_IntTag):
    tag_id, _bits = LONG, 64


class Float(float):
    tag_id = FLOAT

    def __repr__(self) -> str:
        return f"Float({float(self)!r})"


class Double(float):
    tag_id = DOUBLE

    def __repr__(self) -> str:
        return f"Double({float(self)!r})"


class String(str):
    tag_id = STRING


class ByteArray(bytes):
    tag_id = BYTE_ARRAY

    def __repr__(self) -> str:
        return f"ByteArray(<{len(self)} bytes>)"


class IntArray(array):
    tag_id = INT_ARRAY

    def __new__(cls, values: Iterable[int] = ()) -> IntArray:
        return cast("IntArray", super().__new__(cls, "i", values))

    def __repr__(self) -> str:
        return f"IntArray({list(self)[:8]}{'...' if len(self) > 8 else ''})"


class LongArray(array):
    tag_id = LONG_ARRAY

    def __new__(cls, values: Iterable[int] = ()) -> LongArray:
        return cast("LongArray", super().__new__(cls, "q", values))

    def __repr__(self) -> str:
        return f"LongArray(<{len(self)} longs>)"


class List(list):
    """An NBT list: ``elem_type`` is kept even when the list is empty."""

    tag_id = LIST

    def __init__(self, elem_type: int = END, items: Iterable[Any] = ()):
        super().__init__(items)
        self.elem_type = int(elem_type)

    def __repr__(self) -> str:
        return f"List({TAG_NAMES.get(self.elem_type, self.elem_type)}, {list.__repr__(self)})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, List):
            return self.elem_type == other.elem_type and list.__eq__(self, other)
        return list.__eq__(self, other)

    __hash__ = None


class Compound(dict):
    tag_id = COMPOUND

    def __repr__(self) -> str:
        return f"Compound({dict.__repr__(self)})"


def tag_type(value: Any) -> int:
    """The NBT type id of a Python value (typed classes, ``str``, ``bool``)."""
    t = getattr(type(value), "tag_id", None)
    if t is not None and t >= 0:
        return t
    if isinstance(value, bool):
        return BYTE
    if isinstance(value, str):
        return STRING
    raise TypeError(
        f"cannot write {type(value).__name__} {value!r:.60} as NBT: wrap it in an NBT type "
        "(Byte, Short, Int, Long, Float, Double, String, List, Compound, ...)"
    )


# ---- modified UTF-8 ----------------------------------------------------------------------
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _join_pair(m: re.Match[str]) -> str:
    hi, lo = ord(m.group(0)[0]), ord(m.group(0)[1])
    return chr(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))


def _split_astral(m: re.Match[str]) -> str:
    c = ord(m.group(0)) - 0x10000
    return chr(0xD800 + (c >> 10)) + chr(0xDC00 + (c & 0x3FF))


def decode_mutf8(raw: bytes) -> str:
    if raw.isascii():
        return raw.decode("ascii")
    try:
        s = raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise NbtError(f"invalid modified UTF-8 string: {exc}") from None
    return _PAIR.sub(_join_pair, s)


def encode_mutf8(s: str) -> bytes:
    if s.isascii() and "\x00" not in s:
        return s.encode("ascii")
    s = _ASTRAL.sub(_split_astral, s)
    return s.encode("utf-8", "surrogatepass").replace(b"\x00", b"\xc0\x80")


# ---- reading -----------------------------------------------------------------------------
_S_B, _S_H, _S_I, _S_Q = struct.Struct(">b"), struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")
_S_F, _S_D, _S_US = struct.Struct(">f"), struct.Struct(">d"), struct.Struct(">H")


class _Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes):
        self.buf = buf
        self.pos = 0

    def take(self, n: int) -> bytes:
        p = self.pos
        end = p + n
        if n < 0 or end > len(self.buf):
            raise NbtError(f"truncated NBT: needed {n} bytes at offset {p}, have {len(self.buf) - p}")
        self.pos = end
        return self.buf[p:end]

    def unpack(self, st: struct.Struct) -> Any:
        p = self.pos
        if p + st.size > len(self.buf):
            raise NbtError(f"truncated NBT at offset {p}")
        self.pos = p + st.size
        return st.unpack_from(self.buf, p)[0]

    def string(self) -> str:
        n = self.unpack(_S_US)
        return decode_mutf8(self.take(n))

    def payload(self, t: int, depth: int) -> Any:
        if t == COMPOUND:
            if depth > MAX_DEPTH:
                raise NbtError("NBT nested too deeply")
            out = Compound()
            while True:
                ct = self.unpack(_S_B)
                if ct == END:
                    return out
                name = self.string()
                out[name] = self.payload(ct, depth + 1)
        if t == STRING:
            return String(self.string())
        if t == BYTE:
            return Byte(self.unpack(_S_B))
        if t == INT:
            return Int(self.unpack(_S_I))
        if t == LIST:
            if depth > MAX_DEPTH:
                raise NbtError("NBT nested too deeply")
            et = self.unpack(_S_B)
            n = self.unpack(_S_I)
            if et < 0 or et > 12:
                raise NbtError(f"unknown NBT list element type {et} at offset {self.pos}")
            if n < 0:
                raise NbtError(f"negative NBT list length {n}")
            lst = List(et)
            if n and et == END:
                raise NbtError("non-empty NBT list of End tags")
            for _ in range(n):
                lst.append(self.payload(et, depth + 1))
            return lst
        if t == SHORT:
            return Short(self.unpack(_S_H))
        if t == LONG:
            return Long(self.unpack(_S_Q))
        if t == FLOAT:
            return Float(self.unpack(_S_F))
        if t == DOUBLE:
            return Double(self.unpack(_S_D))
        if t == BYTE_ARRAY:
            n = self.unpack(_S_I)
            return ByteArray(self.take(n))
        if t == INT_ARRAY:
            n = self.unpack(_S_I)
            a = IntArray()
            a.frombytes(self.take(4 * n))
            if _LITTLE:
                a.byteswap()
            return a
        if t == LONG_ARRAY:
            n = self.unpack(_S_I)
            la = LongArray()
            la.frombytes(self.take(8 * n))
            if _LITTLE:
                la.byteswap()
            return la
        raise NbtError(f"unknown NBT tag type {t} at offset {self.pos}")


def read_named(data: bytes) -> tuple[str, Any]:
    """Decode an uncompressed NBT blob: returns (root name, root value)."""
    r = _Reader(bytes(data))
    t = r.unpack(_S_B)
    if t == END:
        raise NbtError("NBT starts with an End tag (empty document)")
    if t < 0 or t > 12:
        raise NbtError(f"not NBT: first byte is tag type {t}")
    name = r.string()
    value = r.payload(t, 0)
    if r.pos != len(r.buf):
        raise NbtError(f"{len(r.buf) - r.pos} trailing bytes after the NBT root")
    return name, value


def read(data: bytes) -> Compound:
    """Decode an uncompressed NBT blob whose root is a compound (use ``read_named`` to also
    get the root's name, which is almost always "")."""
    _, value = read_named(data)
    if not isinstance(value, Compound):
        raise NbtError(f"NBT root is a {TAG_NAMES[tag_type(value)]}, expected a Compound")
    return value


# ---- writing -----------------------------------------------------------------------------
def _w_string(out: list[bytes], s: str) -> None:
    raw = encode_mutf8(s)
    if len(raw) > 0xFFFF:
        raise NbtError(f"string too long for NBT ({len(raw)} bytes > 65535)")
    out.append(_S_US.pack(len(raw)))
    out.append(raw)


def _w_payload(out: list[bytes], t: int, v: Any, depth: int) -> None:
    if t == COMPOUND:
        if depth > MAX_DEPTH:
            raise NbtError("NBT nested too deeply")
        for k, child in v.items():
            if not isinstance(k, str):
                raise TypeError(f"compound key must be str, got {k!r}")
            ct = tag_type(child)
            out.append(bytes((ct,)))
            _w_string(out, k)
            _w_payload(out, ct, child, depth + 1)
        out.append(b"\x00")
    elif t == STRING:
        _w_string(out, v)
    elif t == BYTE:
        out.append(_S_B.pack(int(v)))
    elif t == INT:
        out.append(_S_I.pack(v))
    elif t == LIST:
        et = v.elem_type if isinstance(v, List) else END
        if len(v) and et == END:
            raise TypeError("a non-empty NBT List needs an element type")
        out.append(bytes((et,)))
        out.append(_S_I.pack(len(v)))
        for item in v:
            it = tag_type(item)
            if it != et:
                raise TypeError(f"List of {TAG_NAMES[et]} holds a {TAG_NAMES[it]}: {item!r:.60}")
            _w_payload(out, et, item, depth + 1)
    elif t == SHORT:
        out.append(_S_H.pack(v))
    elif t == LONG:
        out.append(_S_Q.pack(v))
    elif t == FLOAT:
        out.append(_S_F.pack(v))
    elif t == DOUBLE:
        out.append(_S_D.pack(v))
    elif t == BYTE_ARRAY:
        out.append(_S_I.pack(len(v)))
        out.append(bytes(v))
    elif t in (INT_ARRAY, LONG_ARRAY):
        out.append(_S_I.pack(len(v)))
        a = array(v.typecode, v)
        if _LITTLE:
            a.byteswap()
        out.append(a.tobytes())
    else:  # pragma: no cover - tag_type() never returns anything else
        raise TypeError(f"unknown NBT tag type {t}")


def payload_bytes(value: Any) -> bytes:
    """The payload of ``value`` alone (no type byte, no name): e.g. one element of a List."""
    out: list[bytes] = []
    _w_payload(out, tag_type(value), value, 1)
    return b"".join(out)


def named_bytes(name: str, value: Any) -> bytes:
    """``value`` as a named tag (type byte, name, payload): one entry of a Compound."""
    t = tag_type(value)
    out: list[bytes] = [bytes((t,))]
    _w_string(out, name)
    _w_payload(out, t, value, 1)
    return b"".join(out)


def list_header(name: str, elem_type: int, length: int) -> bytes:
    """The named List tag's header; its ``length`` element payloads follow."""
    out: list[bytes] = [bytes((LIST,))]
    _w_string(out, name)
    out.append(bytes((elem_type,)))
    out.append(_S_I.pack(length))
    return b"".join(out)


def write(value: Any, name: str = "") -> bytes:
    """Encode ``value`` (normally a Compound) as an uncompressed named root tag."""
    t = tag_type(value)
    out: list[bytes] = [bytes((t,))]
    _w_string(out, name)
    _w_payload(out, t, value, 0)
    return b"".join(out)


# ---- compression -------------------------------------------------------------------------
def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


def zlib_bytes(data: bytes, level: int = 6) -> bytes:
    return zlib.compress(data, level)


def decompress(data: bytes) -> bytes:
    """gzip (1F 8B) or zlib (78 xx) -> raw; anything else is returned unchanged."""
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if len(data) >= 2 and data[0] == 0x78 and (data[0] << 8 | data[1]) % 31 == 0:
        return zlib.decompress(data)
    return data


def read_compressed(data: bytes) -> Compound:
    return read(decompress(data))


def read_file(path: Any) -> tuple[str, Compound]:
    with open(path, "rb") as f:
        name, value = read_named(decompress(f.read()))
    if not isinstance(value, Compound):
        raise NbtError(f"{path}: NBT root is not a Compound")
    return name, value


# ---- inspection --------------------------------------------------------------------------
def to_plain(value: Any) -> Any:
    """A JSON-friendly view (types dropped) for debugging and docs."""
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, array):
        return list(value)
    if isinstance(value, bytes):
        return list(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        return int(value)
    return str(value)


def snbt(value: Any, indent: int = 0) -> str:
    """A readable SNBT-like rendering with type suffixes (for dumps in docs and tests)."""
    pad = "  " * indent
    t = tag_type(value)
    if t == COMPOUND:
        if not value:
            return "{}"
        inner = ",\n".join(f"{pad}  {k}: {snbt(v, indent + 1)}" for k, v in value.items())
        return "{\n" + inner + "\n" + pad + "}"
    if t == LIST:
        if not value:
            return f"[] /*{TAG_NAMES[value.elem_type]}*/"
        if value.elem_type in (COMPOUND, LIST):
            inner = ",\n".join(f"{pad}  {snbt(v, indent + 1)}" for v in value)
            return "[\n" + inner + "\n" + pad + "]"
        return "[" + ", ".join(snbt(v, indent) for v in value) + "]"
    suffix = {BYTE: "b", SHORT: "s", INT: "", LONG: "L", FLOAT: "f", DOUBLE: "d"}
    if t in suffix:
        return f"{int(value)}{suffix[t]}" if t not in (FLOAT, DOUBLE) else f"{float(value)!r}{suffix[t]}"
    if t == STRING:
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
    if t == BYTE_ARRAY:
        return f"[B; <{len(value)} bytes>]"
    if t == INT_ARRAY:
        return "[I; " + ", ".join(str(x) for x in value) + "]" if len(value) <= 16 else f"[I; <{len(value)}>]"
    return f"[L; <{len(value)} longs>]"
