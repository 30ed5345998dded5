"""The recipe's structure is defined once: the planner's parser finds each operation's type and
children through ``mcb_common.recipe_syntax`` (grammar.Parser), and the journal lists the parts a
recipe pastes with ``recipe_syntax.walk`` (mcb_journal.recipeparts). So on every recipe the
repository shows a person (the golden set), the parser's tree and the walk visit the same
operations in the same order, and every part a parsed paste names is one the walk found."""

from __future__ import annotations

import json

import pytest
from mcb_common.recipe_syntax import walk
from mcb_planner.recipe import PasteOp, parse_recipe
from test_golden_recipes import recipes

RECIPES = recipes()


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_the_parser_and_the_syntax_walk_see_the_same_operations(name):
    text = RECIPES[name]
    parsed = [o for top in parse_recipe(text).operations for o in top.walk()]
    walked = list(walk(json.loads(text)))
    assert [o.path for o in parsed] == [n.path for n in walked]
    assert [o.part for o in parsed if isinstance(o, PasteOp) and o.part] == [
        n.sources()["part"] for n in walked if "part" in n.sources()
    ]


def test_the_golden_set_pastes_parts_inside_containers():
    """The check above covers nesting: some shown recipe holds a container, and some pastes a part."""
    walked = [n for text in RECIPES.values() for n in walk(json.loads(text))]
    assert any(n.depth > 0 for n in walked) and any("part" in n.sources() for n in walked)
