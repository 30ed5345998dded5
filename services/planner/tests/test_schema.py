"""RECIPE_SCHEMA (what the bridge shows the agent) agrees with the planner's parser."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcb_common.errors import ErrorCode, McbError
from mcb_common.recipe_schema import RECIPE_SCHEMA
from mcb_planner.recipe import parse_recipe
from planner_cases import BAD, PARSER_ONLY, rev2, rev3, seed

VALIDATOR = jsonschema.Draft202012Validator(RECIPE_SCHEMA)


def test_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(RECIPE_SCHEMA)
    assert RECIPE_SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_schema_accepts_the_seed_example_and_the_optional_keys():
    VALIDATOR.validate(seed())
    VALIDATOR.validate(seed() | {"params": {"floors": 2}, "palette": {"wall": "stone"}, "seed": 7})


@pytest.mark.parametrize(("case", "recipe", "path"), BAD, ids=[c[0] for c in BAD])
def test_schema_rejects_what_the_parser_rejects(case, recipe, path):
    assert not VALIDATOR.is_valid(recipe), case


@pytest.mark.parametrize(("case", "recipe", "path"), PARSER_ONLY, ids=[c[0] for c in PARSER_ONLY])
def test_parser_only_refusals_carry_a_reason_the_schema_cannot_check(case, recipe, path):
    with pytest.raises(McbError) as ei:
        parse_recipe(recipe)
    assert ei.value.details.get("reason") in ("expression", "palette_ref"), ei.value


# -- fuzz: mutate the seed anywhere, and the two must agree --------------------------------


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-40_000_000, 40_000_000),
    st.sampled_from([0, 1, 2, 3, 1024, 1025, -1, 64, 1.0, 64.0, 2.5, -0.5]),
    st.sampled_from(
        [
            "box",
            "line",
            "cylinder",
            "repeat",
            "arch",
            "transform",
            "replace",
            "paste",
            "",
            "minecraft:stone",
            "!stone",
            "*",
            "!",
            "pt_1",
            "a/b",
            "x",
            "z",
            "w",
            "w + 1",
            "7 / 2",
            "$wall",
            "$nope",
            90,
            45,
            270,
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["x", "y", "z", "type", "block", "w"]), inner, max_size=4),
    ),
    max_leaves=6,
)
keys = st.sampled_from(
    [
        "x",
        "y",
        "z",
        "type",
        "block",
        "hollow",
        "from",
        "to",
        "min",
        "max",
        "center",
        "radius",
        "height",
        "count",
        "offset",
        "operations",
        "extra",
        "axis",
        "width",
        "depth",
        "filled",
        "rotate",
        "mirror",
        "anchor",
        "translate",
        "weight",
        "asset",
        "part",
        "at",
        "rotation",
    ]
)


@st.composite
def mutated(draw, base=seed) -> Any:
    doc = base()
    paths = _paths(doc)
    n = draw(st.integers(1, 3))
    for _ in range(n):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if not path:
            if action == "replace":
                doc = draw(values)
            continue
        parent = doc
        try:
            for k in path[:-1]:
                parent = parent[k]
            if action == "replace":
                parent[path[-1]] = draw(values)
            elif action == "delete":
                del parent[path[-1]]
            else:
                target = parent[path[-1]]
                if isinstance(target, dict):
                    target[draw(keys)] = draw(values)
                elif isinstance(target, list):
                    target.append(copy.deepcopy(draw(st.sampled_from(base()["operations"]))))
        except (KeyError, IndexError, TypeError):
            continue
    return doc


def _agree(doc):
    schema_ok = VALIDATOR.is_valid(doc)
    try:
        parse_recipe(doc, max_depth=64)
        parser_ok = True
    except McbError as e:
        # Checks the schema cannot express (docs/recipes.md): corner order, expressions,
        # palette references.
        if e.details.get("reason") in ("corner_order", "expression", "palette_ref"):
            return
        assert e.code == ErrorCode.INVALID_REQUEST, e
        parser_ok = False
    assert parser_ok == schema_ok, (doc, list(VALIDATOR.iter_errors(doc))[:1])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_parser_and_schema_agree_on_mutations_of_the_seed(doc):
    _agree(doc)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(rev2))
def test_parser_and_schema_agree_on_mutations_of_a_revision_2_recipe(doc):
    _agree(doc)


def test_the_revision_2_fixture_is_valid_for_both():
    VALIDATOR.validate(rev2())
    parse_recipe(rev2())


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(rev3))
def test_parser_and_schema_agree_on_mutations_of_a_revision_3_recipe(doc):
    _agree(doc)


def test_the_revision_3_fixture_is_valid_for_both():
    VALIDATOR.validate(rev3())
    parse_recipe(rev3())
