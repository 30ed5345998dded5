"""Hypothesis strategies for tool arguments, read from the JSON Schemas ``tools/list`` gives.

A small generator for the part of JSON Schema 2020-12 the bridge's tools use (``$ref`` into
the root, ``anyOf``/``oneOf``/``allOf``, ``const``, ``enum``, integer/number bounds, string
``pattern``/lengths, arrays, objects with ``required`` and ``additionalProperties: false``).
hypothesis-jsonschema is not used: it is not a dependency of this workspace and does not cover
2020-12 (``$defs``, ``dependentRequired``); this keeps the lock unchanged.

``arguments(schema)`` mixes schema-valid arguments with hostile variants of them: a value
replaced by arbitrary JSON, an unknown key (e.g. ``project_id``), a required key dropped,
boundary numbers, or arbitrary JSON objects.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
ANY_JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12,
)
SMUGGLED_KEYS = ["project_id", "player_id", "world", "__proto__", "recipe_json", ""]


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = root
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return node


def from_schema(schema: Any, root: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    if not isinstance(schema, dict) or not schema:
        return ANY_JSON
    if "$ref" in schema:
        if depth > 6 and schema["$ref"].endswith(("/operations", "/operation")):  # stop the recursion
            box = {
                "type": "box",
                "min": {"x": 0, "y": 64, "z": 0},
                "max": {"x": 0, "y": 64, "z": 0},
                "block": "minecraft:stone",
            }
            return st.just([box] if schema["$ref"].endswith("s") else box)
        target = _resolve(root, schema["$ref"])
        return from_schema({**target, **{k: v for k, v in schema.items() if k != "$ref"}}, root, depth + 1)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            rest = {k: v for k, v in schema.items() if k not in (key, "description")}

            def merged(alt: dict[str, Any]) -> dict[str, Any]:
                if "$ref" in alt:
                    return alt
                both = {**alt, **rest}
                both["required"] = list(dict.fromkeys(rest.get("required", []) + alt.get("required", [])))
                return both

            return st.one_of([from_schema(merged(alt), root, depth + 1) for alt in schema[key]])
    if "allOf" in schema:
        return from_schema(schema["allOf"][0], root, depth + 1)
    kind = schema.get("type")
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "integer":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        edges = [v for v in (lo, hi) if v is not None]
        ints = st.integers(lo, hi)
        return st.one_of(ints, st.sampled_from(edges)) if edges else ints
    if kind == "number":
        return st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        lo, hi = schema.get("minLength", 0), min(schema.get("maxLength", 64), 64)
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True).filter(lambda s: lo <= len(s) <= hi)
        return st.text(min_size=lo, max_size=hi)
    if kind == "array":
        lo = schema.get("minItems", 0)
        hi = max(lo, min(schema.get("maxItems", 3), 3 if depth < 4 else 1))
        return st.lists(from_schema(schema.get("items", {}), root, depth + 1), min_size=lo, max_size=hi)
    if kind == "object":
        props = schema.get("properties", {})
        required = [k for k in schema.get("required", []) if k in props]
        optional = {k: from_schema(v, root, depth + 1) for k, v in props.items() if k not in required}
        return st.fixed_dictionaries({k: from_schema(props[k], root, depth + 1) for k in required}, optional=optional)
    return ANY_JSON


def _hostile(valid: dict[str, Any], data: st.DataObject, schema: dict[str, Any]) -> dict[str, Any]:
    args = dict(valid)
    how = data.draw(st.sampled_from(["replace", "smuggle", "drop", "arbitrary"]))
    keys = sorted(set(args) | set(schema.get("properties", {})))
    if how == "replace" and keys:
        args[data.draw(st.sampled_from(keys))] = data.draw(ANY_JSON)
    elif how == "smuggle":
        args[data.draw(st.sampled_from(SMUGGLED_KEYS))] = data.draw(ANY_JSON)
    elif how == "drop" and args:
        args.pop(data.draw(st.sampled_from(sorted(args))))
    else:
        args = data.draw(st.dictionaries(st.text(max_size=12), ANY_JSON, max_size=4))
    return args


def arguments(schema: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """One call's arguments: schema-valid (about half the time) or a hostile variant."""
    valid = data.draw(from_schema(schema, schema), label="valid")
    if data.draw(st.booleans(), label="hostile"):
        return _hostile(valid, data, schema)
    return valid
