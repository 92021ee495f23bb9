"""Answers the engine remembers per file (`Flow.conditions`, `Resolver.reaching` and
`values`, `ImportMap.resolve`): asking again gives the same answer, a caller that changes
an answer it got changes nothing else, and no partial answer is kept."""

from __future__ import annotations

import textwrap

import libcst as cst

from ddplint.engine import Flow, Resolver, SemanticModel
from ddplint.names import ImportMap


def build(source: str) -> tuple[SemanticModel, Resolver, Flow]:
    model = SemanticModel(cst.parse_module(textwrap.dedent(source)))
    return model, Resolver(model), Flow(model)


def call_named(model: SemanticModel, name: str) -> cst.Call:
    return next(c for c in model.calls if model.module.code_for_node(c.func) == name)


def code(model: SemanticModel, node: cst.CSTNode) -> str:
    return model.module.code_for_node(node).strip()


EXITS = """\
def step(rank, ready):
    if rank != 0:
        return
    first()
    if not ready:
        continue_later()
    else:
        return
    second()
    while ready:
        if rank:
            break
        third()

if skip:
    raise SystemExit
top()
"""


def test_conditions_count_the_exits_before_each_statement_of_a_block():
    model, _, flow = build(EXITS)
    seen = {
        name: [(code(model, c.test), c.holds) for c in flow.conditions(call_named(model, name))]
        for name in ("first", "second", "third", "top")
    }
    assert seen["first"] == [("rank != 0", False)]
    assert seen["second"] == [("not ready", True), ("rank != 0", False)]
    assert seen["third"] == [
        ("rank", False),
        ("ready", True),
        ("not ready", True),
        ("rank != 0", False),
    ]
    assert seen["top"] == [("skip", False)]


def test_a_changed_answer_does_not_change_the_next_one():
    model, resolver, flow = build(EXITS)
    call = call_named(model, "second")
    flow.conditions(call).clear()
    assert len(flow.conditions(call)) == 2
    model, resolver, _ = build("x = 1\nif c:\n    x = 2\nuse(x)\n")
    read = call_named(model, "use").args[0].value
    resolver.reaching("x", read).clear()
    assert len(resolver.reaching("x", read)) == 2
    resolver.values(read, read).clear()
    assert [code(model, v.expr) for v in resolver.values(read, read)] == ["x", "1", "2"]


def test_values_worked_out_during_a_callee_look_up_are_not_kept():
    # Finding what `node.next()` runs follows `node`, whose later value is that same call,
    # still being worked out (no callee yet): that partial answer must not be reused.
    model, resolver, _ = build(
        """\
        class Node:
            def next(self):
                return self

        node = Node()
        while running:
            node = node.next()
        """
    )
    call = call_named(model, "node.next")
    assert [f.name.value for f in resolver.callees(call)] == ["next"]
    receiver = call.func.value  # type: ignore[attr-defined]
    held = [code(model, v.expr) for v in resolver.values(receiver, call, 5)]
    assert "self" in held  # through the callee, known once the look-up is done


def test_an_import_added_later_changes_what_a_name_resolves_to():
    imports = ImportMap()
    name = cst.Name("dist")
    assert imports.resolve(name) is None
    statement = cst.parse_statement("import torch.distributed as dist\n")
    imports.add(statement.body[0])  # type: ignore[attr-defined]
    assert imports.resolve(name) == "torch.distributed"
