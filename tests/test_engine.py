"""The semantic model (`ddplint.engine`): source order, scopes, the value resolver and the
conditions control flow puts on a node."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from ddplint.engine import MAX_DEPTH, Flow, Resolver, SemanticModel
from ddplint.engine.flow import fixed_terms
from ddplint.engine.tree import children


def build(source: str) -> tuple[SemanticModel, Resolver, Flow]:
    model = SemanticModel(cst.parse_module(textwrap.dedent(source)))
    return model, Resolver(model), Flow(model)


def find(model: SemanticModel, kind: type[cst.CSTNode], code: str) -> cst.CSTNode:
    """The first node of `kind` whose source is `code`."""
    for node in model.by_type[kind]:
        if model.module.code_for_node(node).strip() == code:
            return node
    raise AssertionError(f"no {kind.__name__} `{code}`")


def code(model: SemanticModel, node: cst.CSTNode) -> str:
    return model.module.code_for_node(node).strip()


ORDER_SAMPLE = """\
@decorate(arg)
def f(a: int = 1, *, b: str = "x") -> Result:
    try:
        g(key=value)
    except (OSError, KeyError) as error:
        h(error)
    match command:
        case [x, y] if x > y:
            pass
    return lambda q=default: q

class C(Base, metaclass=Meta):
    field: int = 3
"""


def test_children_follow_the_source_for_every_node_type():
    module = cst.parse_module(ORDER_SAMPLE)
    wrapper = MetadataWrapper(module)
    positions = wrapper.resolve(PositionProvider)
    checked = 0
    stack: list[cst.CSTNode] = [wrapper.module]
    while stack:
        node = stack.pop()
        starts = [
            (positions[c].start.line, positions[c].start.column)
            for c in children(node)
            if c in positions
        ]
        assert starts == sorted(starts), type(node).__name__
        checked += len(starts)
        stack.extend(children(node))
    assert checked > 50


def test_model_orders_except_types_bases_annotations_and_guards_before_bodies():
    model, _, _ = build(ORDER_SAMPLE)
    before = model.before
    assert before(find(model, cst.Tuple, "(OSError, KeyError)"), find(model, cst.Call, "h(error)"))
    assert before(find(model, cst.Name, "Result"), find(model, cst.Call, "g(key=value)"))
    assert before(find(model, cst.Comparison, "x > y"), find(model, cst.Pass, "pass"))
    assert before(find(model, cst.Name, "Base"), find(model, cst.AnnAssign, "field: int = 3"))
    assert before(find(model, cst.Call, "decorate(arg)"), find(model, cst.Name, "f"))


def test_class_body_names_are_not_seen_from_methods():
    model, resolver, _ = build(
        """\
        rank = 0
        class Trainer:
            rank = 5
            def step(self):
                return rank
        """
    )
    read = find(model, cst.Return, "return rank").value
    [binding] = resolver.reaching("rank", read)
    assert code(model, binding.value) == "0"


def test_comprehension_variables_stay_in_the_comprehension_and_its_iterable_is_outside():
    model, resolver, _ = build(
        """\
        x = 1
        def f(xs):
            ys = [x for x in xs]
            return x
        """
    )
    [binding] = resolver.reaching("x", find(model, cst.Return, "return x"))
    assert binding.kind == "assign"
    comprehension = find(model, cst.ListComp, "[x for x in xs]")
    assert model.owner(comprehension.for_in.iter) is find(model, cst.FunctionDef, code_of_f())


def code_of_f() -> str:
    return "def f(xs):\n    ys = [x for x in xs]\n    return x"


def test_branch_bindings_all_reach_and_a_plain_one_kills_earlier_ones():
    model, resolver, _ = build(
        """\
        def f(flag):
            mode = "a"
            mode = "b"
            if flag:
                mode = "c"
            use(mode)
        """
    )
    reached = resolver.reaching("mode", find(model, cst.Call, "use(mode)"))
    assert [code(model, b.value) for b in reached] == ['"b"', '"c"']


def test_loop_carried_binding_reaches_the_top_of_the_loop():
    model, resolver, _ = build(
        """\
        def f(items):
            last = None
            for item in items:
                use(last)
                last = item
        """
    )
    reached = resolver.reaching("last", find(model, cst.Call, "use(last)"))
    assert [code(model, b.value) for b in reached] == ["None", "item"]


def test_loop_carried_binding_is_replaced_by_one_every_pass_makes_first():
    model, resolver, _ = build(
        """\
        def f(items, flag):
            for item in items:
                path = f"step_{item}.pt"
                save(path)
                if flag:
                    check(path)
                path = "latest.pt"
                save(path)
        """
    )
    for use in ("save(path)", "check(path)"):
        reached = resolver.reaching("path", find(model, cst.Call, use))
        assert [code(model, b.value) for b in reached] == ['f"step_{item}.pt"']


def test_loop_carried_binding_reaches_past_a_binding_in_a_branch():
    model, resolver, _ = build(
        """\
        def f(items, flag):
            path = "first.pt"
            for item in items:
                if flag:
                    path = f"step_{item}.pt"
                save(path)
                path = "latest.pt"
        """
    )
    reached = resolver.reaching("path", find(model, cst.Call, "save(path)"))
    assert sorted(code(model, b.value) for b in reached) == [
        '"first.pt"',
        '"latest.pt"',
        'f"step_{item}.pt"',
    ]


def test_an_if_binding_in_every_branch_replaces_what_came_before_and_the_loop_carried():
    model, resolver, _ = build(
        """\
        def f(batches, fsdp, amp):
            loss = None
            for x in batches:
                if fsdp:
                    loss = a(x)
                elif amp:
                    with ctx():
                        loss = b(x)
                else:
                    loss = c(x)
                step(loss)
                loss = loss / 8
        """
    )
    reached = resolver.reaching("loss", find(model, cst.Call, "step(loss)"))
    assert sorted(code(model, b.value) for b in reached) == ["a(x)", "b(x)", "c(x)"]


def test_an_if_without_else_or_under_a_condition_replaces_nothing():
    model, resolver, _ = build(
        """\
        def f(batches, fsdp, warm):
            for x in batches:
                if warm:
                    if fsdp:
                        loss = a(x)
                    else:
                        loss = b(x)
                step(loss)
                if fsdp:
                    loss = c(x)
                step(loss)
                loss = loss / 8
        """
    )
    first, second = [n for n in model.calls if code(model, n) == "step(loss)"]
    assert sorted(code(model, b.value) for b in resolver.reaching("loss", first)) == [
        "a(x)",
        "b(x)",
        "c(x)",
        "loss / 8",
    ]
    assert sorted(code(model, b.value) for b in resolver.reaching("loss", second)) == [
        "a(x)",
        "b(x)",
        "c(x)",
        "loss / 8",
    ]


def test_values_through_unpacking_attributes_dicts_returns_and_conditional_expressions():
    model, resolver, _ = build(
        """\
        import os
        import torch.distributed as dist

        def ranks():
            return dist.get_rank(), int(os.environ["LOCAL_RANK"])

        class Trainer:
            def __init__(self, gpu):
                self.gpu_id = gpu

            def save(self):
                use(self.gpu_id)

        def main(args):
            rank, local = ranks()
            cfg = {"rank": rank if args.x else 0}
            use(cfg["rank"])
            Trainer(local)
        """
    )

    def texts(expr_code: str) -> list[str]:
        call = find(model, cst.Call, f"use({expr_code})")
        return [code(model, v.expr) for v in resolver.values(call.args[0].value, call)]

    assert "dist.get_rank()" in texts('cfg["rank"]')
    assert 'int(os.environ["LOCAL_RANK"])' in texts("self.gpu_id")


def test_an_element_unpacked_from_a_call_out_of_sight_stays_a_leaf():
    # `model, opt = engine_init(...)` on one branch: what `model` holds there is unknown,
    # and a question over every value (is it always a wrapped model?) must see that.
    model, resolver, _ = build(
        """\
        def main(args, net):
            model = Net()
            if args.distributed:
                model = DDP(model)
            else:
                model, opt, _, _ = engine_init(model=model)
            use(model)
        """
    )
    call = find(model, cst.Call, "use(model)")
    leaves = [v for v in resolver.values(call.args[0].value, call) if v.leaf]
    assert [code(model, v.expr) for v in leaves] == ["DDP(model)", "model"]
    assert type(leaves[-1].at) is cst.Assign


def test_a_returned_tuple_element_is_followed_where_the_callee_returns_it():
    model, resolver, _ = build(
        """\
        def build(flag):
            model = Net()
            if flag:
                model = DDP(model)
                return model, 1
            return model, 2

        def main():
            model = Plain()
            wrapped, step = build(True)
            use(wrapped)
        """
    )

    def texts(expr_code: str) -> list[str]:
        call = find(model, cst.Call, f"use({expr_code})")
        return [code(model, v.expr) for v in resolver.values(call.args[0].value, call) if v.leaf]

    # the callee's own `model` at each `return`, not the caller's `model = Plain()`
    assert sorted(texts("wrapped")) == ["DDP(model)", "Net()"]


def test_sources_reach_through_names_helpers_and_file_handles():
    model, resolver, _ = build(
        """\
        import os
        import torch
        import torch.distributed as dist

        def shard_tag():
            return f"part{dist.get_rank()}"

        def save(state, folder, device):
            name = f"{shard_tag()}.bin"
            target = os.path.join(folder, name)
            with open(target, "wb") as handle:
                torch.save(state, handle)
            torch.save(state, os.path.join(folder, f"{device}.bin"))
            torch.save(state, os.path.join(folder, "common.bin", device=True))
        """
    )
    saves = model.calls_by_name["save"]

    def sources(index: int, depth: int = 4) -> set[str]:
        call = saves[index]
        return {code(model, v.expr) for v in resolver.sources(call.args[1].value, call, depth)}

    found = sources(0)
    assert 'open(target, "wb")' in found  # `with ... as handle` is followed
    assert "dist.get_rank()" in found  # through `target`, `name` and the helper's return
    assert "dist.get_rank()" not in sources(0, depth=2)  # nesting is bounded
    assert "device" in sources(1)
    assert "device" not in sources(2)  # an argument's keyword is not a name read


def test_properties_of_the_enclosing_class_are_followed_to_their_returns():
    model, resolver, _ = build(
        """\
        import torch.distributed as dist

        class Trainer:
            @property
            def leader(self):
                return dist.get_rank() == 0

            def plain(self):
                return 1

            def save(self):
                use(self.leader)
                use(self.plain)
        """
    )

    def texts(expr_code: str) -> list[str]:
        call = find(model, cst.Call, f"use({expr_code})")
        return [code(model, v.expr) for v in resolver.values(call.args[0].value, call)]

    assert texts("self.leader") == ["self.leader", "dist.get_rank() == 0"]
    assert texts("self.plain") == ["self.plain"]  # a method, not a property: no value


def test_environment_reads_through_copies_and_comprehensions():
    model, resolver, _ = build(
        """\
        import os
        env = {k: os.environ[k] for k in ("RANK", "WORLD_SIZE")}
        copy = dict(os.environ)
        a = int(env["RANK"])
        b = copy.get("WORLD_SIZE")
        use(a, b)
        """
    )
    call = find(model, cst.Call, "use(a, b)")
    assert resolver.environ_key(call.args[0].value, call) == "RANK"
    assert resolver.environ_key(call.args[1].value, call) == "WORLD_SIZE"


def test_setdefault_reads_the_environment_variable():
    model, resolver, _ = build(
        """\
        import os
        rank = int(os.environ.setdefault("RANK", os.environ.get("SLURM_PROCID", "0")))
        local = os.environ.copy().setdefault("LOCAL_RANK", "0")
        other = {}.setdefault("RANK", 0)
        use(rank, local, other)
        """
    )
    call = find(model, cst.Call, "use(rank, local, other)")
    assert resolver.environ_key(call.args[0].value, call) == "RANK"
    assert resolver.environ_key(call.args[1].value, call) == "LOCAL_RANK"
    assert resolver.environ_key(call.args[2].value, call) is None


def test_callees_through_partial_methods_and_classes():
    model, resolver, _ = build(
        """\
        import functools

        def save(path, rank):
            pass

        class Tracker:
            def update(self):
                self.flush()
            def flush(self):
                pass

        saver = functools.partial(save, rank=0)
        saver("x")
        tracker = Tracker()
        tracker.update()
        """
    )
    names = lambda call_code: [  # noqa: E731
        f.name.value for f in resolver.callees(find(model, cst.Call, call_code))
    ]
    assert names('saver("x")') == ["save"]
    assert names("tracker.update()") == ["update"]
    assert names("self.flush()") == ["flush"]
    assert names("Tracker()") == []


def test_one_depth_limit_bounds_long_chains():
    lines = ["v0 = seed()"] + [f"v{i} = v{i - 1}" for i in range(1, 3 * MAX_DEPTH)]
    model, resolver, _ = build("\n".join([*lines, f"use(v{3 * MAX_DEPTH - 1})"]) + "\n")
    call = model.calls[-1]
    values = resolver.values(call.args[0].value, call)
    assert len(values) == MAX_DEPTH + 1
    assert "seed()" not in [code(model, v.expr) for v in values]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("if rank != 0:\n    return\nbarrier()\n", [("rank != 0", False, True)]),
        ("if world_size == 1:\n    return t\nbarrier()\n", [("world_size == 1", False, True)]),
        ("if ok:\n    pass\nelse:\n    raise E\nbarrier()\n", [("ok", True, True)]),
        ("if a:\n    return\nelif b:\n    pass\nbarrier()\n", [("a", False, True)]),
        ("if a:\n    x = 1\nbarrier()\n", []),
        ("if a:\n    barrier()\nelse:\n    pass\n", [("a", True, False)]),
        ("if a:\n    pass\nelif b:\n    barrier()\n", [("b", True, False), ("a", False, False)]),
        ("while a:\n    barrier()\n", [("a", True, False)]),
        ("for x in y:\n    if x:\n        continue\n    barrier()\n", [("x", False, True)]),
        ("if a:\n    sys.exit(1)\nbarrier()\n", [("a", False, True)]),
    ],
)
def test_conditions_after_early_exits_are_negated(source, expected):
    model, _, flow = build("import sys\ndef f(t):\n" + textwrap.indent(source, "    "))
    barrier = find(model, cst.Call, "barrier()")
    found = [(code(model, c.test), c.holds, c.early_exit) for c in flow.conditions(barrier)]
    assert found == expected


def test_conditions_stop_at_the_function():
    model, _, flow = build("if rank == 0:\n    def f():\n        barrier()\n")
    assert flow.conditions(find(model, cst.Call, "barrier()")) == []


@pytest.mark.parametrize(
    ("block", "leaves"),
    [
        ("return 1", True),
        ("x = 1", False),
        ("if a:\n    return\nelse:\n    raise E", True),
        ("if a:\n    return", False),
        ("try:\n    return f()\nexcept E:\n    raise", True),
        ("try:\n    return f()\nexcept E:\n    pass", False),
        ("with lock:\n    continue", True),
        ("for x in y:\n    break", False),
    ],
)
def test_leaves(block, leaves):
    model, _, flow = build("for i in items:\n" + textwrap.indent(block, "    ") + "\n")
    loop = model.by_type[cst.For][0]
    assert isinstance(loop, cst.For)
    assert flow.leaves(loop.body) is leaves


def test_within_gives_the_nodes_below_a_root_in_source_order():
    model, _, _ = build(
        """\
        def first():
            a()
            for x in y:
                b(c())
        def second():
            d()
        e()
        """
    )
    loop = model.by_type[cst.For][0]
    second = model.functions["second"][0]
    names = [code(model, call) for call in model.within(loop, model.calls)]
    assert names == ["b(c())", "c()"]
    assert [code(model, call) for call in model.within(second, model.calls)] == ["d()"]
    assert model.within(model.by_type[cst.Name][0], model.calls) == []
    everything = model.within(model.module, model.calls)
    assert everything == model.calls and len(everything) == 5


@pytest.mark.parametrize(
    ("test", "holds", "fixed"),
    [
        ("(rank == 0) & (epoch % k == 0)", True, ["(rank == 0)", "(epoch % k == 0)"]),
        ("(rank == 0) | (epoch == 1)", False, ["(rank == 0)", "(epoch == 1)"]),
        ("(rank == 0) & (epoch == 1)", False, ["(rank == 0) & (epoch == 1)"]),
        ("mask & flags", True, ["mask & flags"]),  # integers: a bitwise and, no logic
    ],
)
def test_bitwise_operators_on_booleans_fix_their_terms(test, holds, fixed):
    terms = fixed_terms(cst.parse_expression(test), holds)
    assert [cst.Module(body=[]).code_for_node(term) for term, _ in terms] == fixed
    assert all(value == holds for _, value in terms)


def test_self_calls_reach_inherited_methods_and_the_overrides_of_subclasses():
    model, resolver, _ = build(
        """\
        class Base:
            def fit(self, loader):
                self.validate(loader)
                self.log()
            def validate(self, loader):
                pass
            def log(self):
                pass

        class Regression(Base):
            def validate(self, loader):
                self.log()

        class Ranking(Regression):
            def validate(self, loader):
                pass

        class Other:
            def validate(self, loader):
                pass
        """
    )
    called = [
        model.enclosing_class(f).name.value
        for f in resolver.callees(find(model, cst.Call, "self.validate(loader)"))
    ]
    assert called == ["Base", "Regression", "Ranking"]
    (log_call,) = [
        c
        for c in model.calls
        if code(model, c) == "self.log()" and model.frame(c).name.value == "validate"
    ]
    assert [model.enclosing_class(f).name.value for f in resolver.callees(log_call)] == ["Base"]


def test_calls_of_a_function_include_calls_through_names_bound_to_it():
    model, resolver, _ = build(
        """\
        import functools

        def train(loader):
            pass

        def test(epoch, loader):
            pass

        train_fn, test_fn = train, test
        quick_test = functools.partial(test, 0)
        test_fn(1, "a")
        quick_test("b")
        test(2, "c")
        train_fn("d")
        """
    )
    (test,) = model.functions["test"]
    assert sorted(code(model, c) for c in resolver.calls_of(test)) == [
        'quick_test("b")',
        'test(2, "c")',
        'test_fn(1, "a")',
    ]


def test_sources_follow_the_text_a_string_method_cuts():
    model, resolver, _ = build(
        """\
        def save(state, path=None, tag="latest"):
            if path is None:
                path = f"checkpoints/{tag}.pth.tar"
            weights = path.split(".pth.tar")[0] + "_weights.pth.tar"
            write(state, weights)
        """
    )
    call = find(model, cst.Call, "write(state, weights)")
    found = [code(model, v.expr) for v in resolver.sources(call.args[1].value, call, depth=3)]
    assert 'f"checkpoints/{tag}.pth.tar"' in found
    assert "tag" in found
