"""Values one training step computes: the loss a `backward()` call differentiates, what it
is computed from inside the step (a loop body or a function), and the values derived from
them before the backward (and, for what the step decides once its backward ran, after it).
What the step is handed is not among them: the batch it starts
from, its parameters, and what it only reads off an object it does not feed (a pipeline
state holding activations that a forward elsewhere registered)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from ddplint.context import Binding, FileContext
from ddplint.domain import domain_of
from ddplint.domain.project_view import project_of
from ddplint.names import dotted

# Methods that only move or reshape the batch (`x = x.cuda(non_blocking=True)`).
_DATA_METHODS = frozenset(
    {
        "to",
        "cuda",
        "cpu",
        "float",
        "half",
        "bfloat16",
        "long",
        "int",
        "contiguous",
        "view",
        "reshape",
        "squeeze",
        "unsqueeze",
        "permute",
        "pin_memory",
        "items",
        "get",
        "keys",
        "values",
        "flatten",
        "transpose",
        "clone",
        "detach",
    }
)


@dataclass(frozen=True)
class StepValues:
    """Names holding results of the step's forward, and the first statement computing one
    of them (where the forward starts; None when nothing in the step computes the loss).
    `later`: `names` and the names the step derives from them after its backward too
    (`running += loss.item()`)."""

    names: frozenset[str]
    start: cst.CSTNode | None
    later: frozenset[str] = frozenset()


def step_values(ctx: FileContext, region: cst.CSTNode, backward: cst.Call) -> StepValues:
    """The forward results of the step `region` (a loop or a function) that ends in the
    `backward` call: the names inside the step the differentiated value is computed from
    (`ddplint.domain.backward`, not following the batch), and names derived from those
    before the backward (`bad = torch.isnan(loss).any()`)."""
    site = domain_of(ctx).backward.site_of(backward)
    if site is None:
        return StepValues(frozenset(), None)
    local = _region_bindings(ctx, region)
    in_step = {id(b) for bindings in local.values() for b in bindings}
    counters = _counters(ctx, local)
    sources = [
        b
        for b in domain_of(ctx).backward.sources(
            site, stop=frozenset(_handed_in(ctx, region, local))
        )
        if id(b) in in_step
        and b.target not in counters
        and b.kind in ("assign", "augassign", "with")
        and ctx.before(b.statement, backward)
    ]
    start = min((b.statement for b in sources), key=ctx.order.__getitem__, default=None)

    def derived(before: cst.CSTNode | None) -> Callable[[str, list[Binding], set[str]], bool]:
        """A name assigned from names found (only before `before`, when given)."""

        def joins(name: str, bindings: list[Binding], found: set[str]) -> bool:
            return any(
                b.kind in ("assign", "augassign")
                and (before is None or ctx.before(b.statement, before))
                and found.intersection(ctx.names_in(b.value))
                for b in bindings
            )

        return joins

    found = _closure({b.target for b in sources}, local, derived(backward))
    later = _closure(set(found), local, derived(None))
    return StepValues(frozenset(found), start, frozenset(later))


def _closure(
    start: set[str],
    local: dict[str, list[Binding]],
    joins: Callable[[str, list[Binding], set[str]], bool],
) -> set[str]:
    """`start`, grown by every name of `local` that `joins` admits given the names found
    so far, until no more join."""
    found = set(start)
    changed = True
    while changed:
        changed = False
        for name, bindings in local.items():
            if name not in found and joins(name, bindings, found):
                found.add(name)
                changed = True
    return found


# Calls of a counter that give the same answer on every rank given the same arguments.
_COUNTING_CALLS = frozenset({"int", "float", "min", "max", "round", "abs", "len"})


def _counters(ctx: FileContext, local: dict[str, list[Binding]]) -> set[str]:
    """Names of the step computed only by arithmetic on counters (`curr_step = start_step
    + i` in `for i in range(n)`, `weight = 0.8 * curr_step / total_step`): what they read is
    a constant, a value from outside the step, an index of `range(...)` or of
    `enumerate(...)`, or another such name. The loss may be computed from them, but every
    rank holds the same values (the largest such set: counters may read each other). A
    bare alias (`loss = out`) and what an object holds (`model.last_loss`) are not counts.
    A call of a function of the project on such values (`metadata =
    curriculums.extract_metadata(curriculum, discriminator.step)`) is one too: every rank
    calls it with the same arguments (`_project_call`)."""
    found = {
        name
        for name, bindings in local.items()
        if all(_counts(b) or _project_call(ctx, b) for b in bindings)
    }
    changed = True
    while changed:
        changed = False
        for name in list(found):
            reads = {n for b in local[name] if b.kind != "for" for n in _names_read(b.value)}
            if any(n in local and n not in found for n in reads):
                found.discard(name)
                changed = True
    return found


def _counts(binding: Binding) -> bool:
    """A binding of a counter: arithmetic (`_arithmetic`), or the index of a loop over
    `range(...)` (or the first target of `enumerate(...)`)."""
    if binding.kind == "for":
        it = binding.value
        if type(it) is not cst.Call or type(it.func) is not cst.Name:
            return False
        called = it.func.value
        return called == "range" or (called == "enumerate" and binding.index == 0)
    value = binding.value
    if binding.kind not in ("assign", "augassign") or not _arithmetic(value):
        return False
    return type(value) is not cst.Name  # `loss = out`: an alias, not a count


def _project_call(ctx: FileContext, binding: Binding) -> bool:
    """`name = f(a, b)`: a function of this file or of another project module, or of a
    module imported from outside the standard library, torch and NumPy (a clock, a memory
    query or a random draw there gives each rank its own), handed
    at least one argument, each built of literals and of names and attributes read whole
    (`discriminator.step`, `cfg["stage"]`); the names must be counters in turn."""
    value = binding.value
    if binding.kind != "assign" or type(value) is not cst.Call or not value.args:
        return False
    if any(a.star or not _plain(a.value) for a in value.args):
        return False
    if ctx.resolver.callees(value):
        return True
    qualified = ctx.call_name(value)
    if qualified is None or "." not in qualified:
        return False
    project = project_of(ctx)
    if project is not None and project.function_at(os.path.abspath(ctx.path), qualified):
        return True
    # A module the project does not resolve (on a `sys.path` the scripts extend, say) and
    # that is not where per-process state is read (clocks, memory, random draws).
    return qualified.split(".")[0] not in _PER_PROCESS_PACKAGES


# Packages whose functions may answer differently in each process given the same
# arguments: the standard library's clocks, random and system queries, torch's memory
# and random calls, NumPy's random module, process and GPU monitors.
_PER_PROCESS_PACKAGES = frozenset(
    {*sys.stdlib_module_names, "torch", "numpy", "psutil", "pynvml", "GPUtil", "nvidia_smi"}
)


def _plain(expr: cst.BaseExpression) -> bool:
    """Literals, names, attributes of names and string-keyed subscripts of them."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.Name)):
        return True
    if type(expr) is cst.Attribute:
        return _plain(expr.value)
    if type(expr) is cst.Subscript and len(expr.slice) == 1:
        index = expr.slice[0].slice
        return (
            type(index) is cst.Index
            and type(index.value) is cst.SimpleString
            and _plain(expr.value)
        )
    return False


def _arithmetic(expr: cst.BaseExpression) -> bool:
    """Numbers and names combined by operators or counting calls; not an attribute (what an
    object holds: `model.last_loss`)."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.Name)):
        return True
    if type(expr) is cst.BinaryOperation:
        return _arithmetic(expr.left) and _arithmetic(expr.right)
    if type(expr) is cst.UnaryOperation:
        return _arithmetic(expr.expression)
    if type(expr) is cst.Call and type(expr.func) is cst.Name:
        return expr.func.value in _COUNTING_CALLS and all(_arithmetic(a.value) for a in expr.args)
    return False


def _names_read(expr: cst.BaseExpression) -> set[str]:
    """The names an arithmetic expression reads."""
    if type(expr) is cst.Name:
        return {expr.value}
    if type(expr) is cst.BinaryOperation:
        return _names_read(expr.left) | _names_read(expr.right)
    if type(expr) is cst.UnaryOperation:
        return _names_read(expr.expression)
    if type(expr) is cst.Call:
        return {n for a in expr.args for n in _names_read(a.value)}
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return _names_read(expr.value)
    return set()


def _region_bindings(ctx: FileContext, region: cst.CSTNode) -> dict[str, list[Binding]]:
    """Bindings of plain names whose statement lies inside `region`, by name."""
    start, end = ctx.order[region], ctx.subtree_end[region]
    frame = region if type(region) is cst.FunctionDef else ctx.scope(region)
    local: dict[str, list[Binding]] = {}
    for name, bindings in ctx.model.bindings_in(frame).items():
        for binding in bindings:
            if start <= ctx.order[binding.statement] < end:
                local.setdefault(name, []).append(binding)
    return local


def batch_names(ctx: FileContext, loop: cst.For) -> frozenset[str]:
    """The names holding the batch a `for` loop over a loader hands each pass: its targets
    (not the index of `enumerate(...)`, also inside `tqdm(enumerate(...))`), and names
    only moved or reshaped from them
    (`images = images.to(device)`)."""
    target: cst.BaseExpression = loop.target
    it = loop.iter
    while (
        type(it) is cst.Call
        and it.args
        and type(it.args[0].value) is cst.Call
        and not (type(it.func) is cst.Name and it.func.value == "enumerate")
    ):
        it = it.args[0].value  # `tqdm(enumerate(loader), total=n)`
    if (
        type(it) is cst.Call
        and type(it.func) is cst.Name
        and it.func.value == "enumerate"
        and type(target) is cst.Tuple
        and len(target.elements) == 2
    ):
        target = target.elements[1].value
    data = {n.value for n in ctx.walk(target) if type(n) is cst.Name}
    local = _region_bindings(ctx, loop)

    def moved(name: str, bindings: list[Binding], found: set[str]) -> bool:
        return all(_moves_data(ctx, b.value, found | {name}, local) for b in bindings)

    return frozenset(_closure(data, local, moved))


def moves_batch(ctx: FileContext, loop: cst.For, batch: frozenset[str]) -> bool:
    """The loop moves its batch to a device (`images.to(device)`, `x.cuda()`, `{k:
    v.to(device) for k, v in batch.items()}`): it iterates data, not a list of settings."""
    elements = set(batch)
    for comp in ctx.nodes_within(loop.body, cst.CompFor):
        assert type(comp) is cst.CompFor
        if _root(comp.iter) in batch:
            elements.update(n.value for n in ctx.walk(comp.target) if type(n) is cst.Name)
    for call in ctx.calls_within(loop.body):
        func = call.func
        if (
            type(func) is cst.Attribute
            and func.attr.value in ("to", "cuda")
            and _root(func.value) in elements
        ):
            return True
    return False


def _root(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
        expr = expr.func if isinstance(expr, cst.Call) else expr.value
    return expr.value if type(expr) is cst.Name else None


def _handed_in(ctx: FileContext, region: cst.CSTNode, local: dict[str, list[Binding]]) -> set[str]:
    """What the step is handed rather than computes: the batch (the targets of the `for`
    loop of `region`, and names only moved or reshaped from it: `x = x.cuda()`, `images,
    labels = batch`), and names only read off an object the step is handed and does not
    feed (`activations = state.pop_activations()`: a forward elsewhere filled `state`)."""
    data: set[str] = set()
    if type(region) is cst.For:
        data = {n.value for n in ctx.walk(region.target) if type(n) is cst.Name}
    fed = _fed_objects(ctx, region)

    def handed(name: str, bindings: list[Binding], data: set[str]) -> bool:
        if all(
            b.kind == "assign" and _reads_handed(ctx, b.value, data, local, fed) for b in bindings
        ):
            return True
        return any(_moves_data(ctx, b.value, data, local) for b in bindings) and all(
            _moves_data(ctx, b.value, data | {name}, local) for b in bindings
        )

    return _closure(data, local, handed)


def _moves_data(
    ctx: FileContext,
    value: cst.BaseExpression,
    data: set[str],
    local: dict[str, list[Binding]],
) -> bool:
    roots = {n.split(".")[0] for n in ctx.names_in(value)}
    if not roots & data:
        return False
    for node in ctx.walk(value):
        if type(node) is cst.Call:
            func = node.func
            if not (type(func) is cst.Attribute and func.attr.value in _DATA_METHODS):
                return False
    return all(root in data or root not in local for root in roots)


def _reads_handed(
    ctx: FileContext,
    value: cst.BaseExpression,
    data: set[str],
    local: dict[str, list[Binding]],
    fed: set[str],
) -> bool:
    """`value` only reads an object the step is handed (a parameter, a name bound outside
    the step, the batch) and does not feed: its attributes, its items at constant keys,
    the results of its methods called with constant arguments (not `self.net()`, perhaps
    a model's forward)."""
    node: cst.BaseExpression = value
    while type(node) is not cst.Name:
        if type(node) is cst.Attribute:
            node = node.value
        elif type(node) is cst.Subscript:
            if not all(_constant(ctx, s) for s in node.slice):
                return False
            node = node.value
        elif type(node) is cst.Call and type(node.func) is cst.Attribute:
            receiver = node.func.value
            if (
                node.func.attr.value == "forward"
                or (type(receiver) is cst.Name and receiver.value == "self")
                or not all(_constant(ctx, a.value) for a in node.args)
            ):
                return False
            node = receiver
        else:
            return False
    root = node.value
    outside = all(b.kind == "param" for b in local.get(root, []))
    return (root in data or outside) and root not in fed


def _fed_objects(ctx: FileContext, region: cst.CSTNode) -> set[str]:
    """Names of objects the step hands a value to: called with arguments
    (`trainer.run(batch)`, `model(x)`), or passed to a call (`fill(state, batch)`)."""
    fed: set[str] = set()
    for call in ctx.calls_within(region):
        root = (dotted(call.func) or "").split(".")[0]
        if root and not all(_constant(ctx, a.value) for a in call.args):
            fed.add(root)
        fed.update(a.value.value for a in call.args if type(a.value) is cst.Name)
    return fed


def _constant(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` reads no name (`0`, `"loss"`, `None`)."""
    return all(name in ("None", "True", "False") for name in ctx.names_in(node))
