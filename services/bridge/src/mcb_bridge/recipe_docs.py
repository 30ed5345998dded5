"""The agent's texts about recipe operations, generated from the recipe JSON Schema.

The schema (``mcb_common.recipe_schema.RECIPE_SCHEMA``) is the most authoritative statement of
the recipe grammar (the planner's parser imports its bounds, and a planner test checks that both
accept and refuse the same inputs). Every operation's ``$defs`` entry carries a ``description``
and one ``examples`` entry (``_op`` requires it), so from it come, for every operation:

* a row of the operations table in ``mcb://guides/recipes`` (:func:`operations_table`);
* a whole recipe to copy in ``mcb://guides/examples`` (:func:`operation_examples`), marked
  ``<!-- operation: NAME -->`` so tests find them (one test builds each on the embedded host);
* its signature in ``build_prepare``'s description (:func:`signatures`).

An operation the schema accepts without a description or an example is an error here
(:class:`MissingOperationDoc`), so a new operation cannot reach the agent undocumented.
"""

from __future__ import annotations

import json
from typing import Any

# Where the generated parts go in the hand-written guides (guides/recipes.md, guides/examples.md).
TABLE_MARK = "<!-- generated: operations table -->"
EXAMPLES_MARK = "<!-- generated: one example per operation -->"


class MissingOperationDoc(ValueError):
    """An operation of the schema has no description or no example."""


def operation_defs(recipe: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(type, definition) of every operation the schema's ``$defs/operation`` union accepts, in
    the schema's order."""
    defs = recipe.get("$defs") or {}
    out = []
    for alt in (defs.get("operation") or {}).get("oneOf") or ():
        ref = alt.get("$ref", "")
        body = defs.get(ref[len("#/$defs/") :], {}) if ref.startswith("#/$defs/") else alt
        const = ((body.get("properties") or {}).get("type") or {}).get("const")
        if isinstance(const, str):
            out.append((const, body))
    return out


def _documented(recipe: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    ops = operation_defs(recipe)
    for name, body in ops:
        missing = [k for k in ("description", "examples") if not body.get(k)]
        if missing:
            raise MissingOperationDoc(
                f"recipe operation {name!r} has no {' and no '.join(missing)} in the recipe schema "
                "(mcb_common.recipe_schema): the agent's guides are generated from it"
            )
        if body["examples"][0].get("type") != name:
            raise MissingOperationDoc(
                f"the example of recipe operation {name!r} is of type {body['examples'][0].get('type')!r}"
            )
    return ops


def _alternatives(body: dict[str, Any]) -> list[str]:
    """Properties of which exactly one is required (``oneOf: [{required: [a]}, {required: [b]}]``)."""
    alts = body.get("oneOf") or ()
    names = [a["required"][0] for a in alts if len(a.get("required") or ()) == 1]
    return names if len(names) == len(alts) else []


def _args(body: dict[str, Any]) -> list[tuple[str, bool, dict[str, Any]]]:
    """(name, required, schema) of an operation's arguments, the required ones first; a group of
    alternatives (dome's radius|radii, paste's asset|part) is one required argument."""
    props = {k: v for k, v in (body.get("properties") or {}).items() if k != "type"}
    required = [k for k in body.get("required") or () if k != "type"]
    alts = _alternatives(body)
    out: list[tuple[str, bool, dict[str, Any]]] = [(k, True, props[k]) for k in required]
    if alts:
        out.append(("|".join(alts), True, {}))
    out += [(k, False, v) for k, v in props.items() if k not in required and k not in alts]
    return out


def signatures(recipe: dict[str, Any]) -> str:
    """``box(min,max,block,hollow?,block_entity?), line(from,to,block), …``: every operation.
    ``thickness`` goes unsaid where ``hollow`` is (it implies hollow; the guide has both):
    tools/list stays within its budget."""

    def shown(body: dict[str, Any]) -> str:
        args = _args(body)
        names = {a for a, _, _ in args}
        return ",".join(a + ("" if req else "?") for a, req, _ in args if not (a == "thickness" and "hollow" in names))

    return ", ".join(f"{name}({shown(body)})" for name, body in _documented(recipe))


def _arg_text(name: str, required: bool, schema: dict[str, Any]) -> str:
    # "asset|part" as two code spans: a "|" would end the table cell even inside one
    text = " or ".join(f"`{n}{'' if required else '?'}`" for n in name.split("|"))
    notes = []
    if "enum" in schema:
        notes.append("/".join(str(v) for v in schema["enum"]))
    if "default" in schema:
        notes.append(f"default {json.dumps(schema['default'])}")
    return text + (f" ({', '.join(notes)})" if notes else "")


def operations_table(recipe: dict[str, Any]) -> str:
    """The Markdown table of every operation: type, arguments, what it does."""
    rows = ["| type | arguments | what it does |", "|---|---|---|"]
    for name, body in _documented(recipe):
        args = ", ".join(_arg_text(a, req, s) for a, req, s in _args(body))
        what = " ".join(body["description"].split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {args} | {what} |")
    return "\n".join(rows)


def example_recipe(op: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "operations": [op]}


def operation_examples(recipe: dict[str, Any]) -> str:
    """A section per operation: what it does and one whole recipe, marked for tests."""
    parts = []
    for name, body in _documented(recipe):
        op = body["examples"][0]
        what = " ".join(body["description"].split())
        needs = (
            f" It needs the library asset `{op['asset']}` (see `asset_list`; `schematic_export` saves one)."
            if "asset" in op
            else ""
        )
        parts.append(
            f"### `{name}`\n\n{what}{needs}\n\n<!-- operation: {name} -->\n```json\n"
            f"{json.dumps(example_recipe(op), ensure_ascii=False)}\n```"
        )
    return "\n\n".join(parts)


def fill(text: str, recipe: dict[str, Any]) -> str:
    """A guide's text with its generated parts put in at their marks."""
    if TABLE_MARK in text:
        text = text.replace(TABLE_MARK, operations_table(recipe))
    if EXAMPLES_MARK in text:
        text = text.replace(EXAMPLES_MARK, operation_examples(recipe))
    return text
