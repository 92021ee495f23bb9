"""The semantic model's tables by node (parents, order, end of subtree, frame) answer as
dicts keyed by node did, though they are keyed by node identity."""

from __future__ import annotations

import libcst as cst
import pytest

from ddplint.engine import SemanticModel

SOURCE = """\
def f(x):
    return [y for y in x]


z = f([1])
"""


def test_tables_answer_for_the_nodes_of_the_module():
    module = cst.parse_module(SOURCE)
    model = SemanticModel(module)
    func = module.body[0]
    assert isinstance(func, cst.FunctionDef)
    comp = next(n for n in model.nodes if isinstance(n, cst.ListComp))
    assert model.order[module] == 0
    assert model.subtree_end[module] == len(model.nodes)
    assert [model.order[n] for n in model.nodes] == list(range(len(model.nodes)))
    assert model.frame_of[comp] is func
    assert model.frame(comp) is func
    assert list(model.ancestors(comp))[-1] is module
    assert model.parent(func) is model.parents[func]
    assert model.is_inside(comp, func) and not model.is_inside(func, comp)
    assert model.before(func, comp)
    assert model.walk(func)[-1] is model.nodes[model.subtree_end[func] - 1]
    assert len(model.parents) == len(model.nodes) - 1
    assert set(map(id, model.parents)) == set(map(id, model.nodes[1:]))


def test_the_module_has_no_parent_and_other_trees_are_not_found():
    module = cst.parse_module(SOURCE)
    model = SemanticModel(module)
    other = cst.parse_module(SOURCE)
    assert module not in model.parents
    assert model.parents.get(module) is None
    assert model.parent(module) is None
    assert list(model.ancestors(module)) == []
    with pytest.raises(KeyError):
        model.parents[module]
    assert other.body[0] not in model.order
    assert model.parents.get(other.body[0]) is None
    assert model.frame(other.body[0]) is module
    with pytest.raises(KeyError):
        model.order[other.body[0]]
