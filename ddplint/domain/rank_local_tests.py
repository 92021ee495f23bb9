"""Decisions that can differ between ranks: a test on values only this rank computed that
no collective made common, and an exception handler for an error only this rank raised."""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.command_line import same_on_every_rank
from ddplint.domain.data_sized import data_sized
from ddplint.domain.oom import handler_types
from ddplint.names import dotted

# What a loader fixes alike on every rank: the batch's shape, type and device.
_SHAPE_METHODS = frozenset({"size", "numel", "dim"})
_SHAPE_ATTRIBUTES = _SHAPE_METHODS | {"shape", "ndim", "dtype", "device"}
# Exceptions every rank meets alike: the end of the data, an interrupt, an exit.
_RAISED_ALIKE = frozenset({"StopIteration", "KeyboardInterrupt", "SystemExit"})


def under_test(ctx: FileContext, node: cst.CSTNode, region: cst.CSTNode) -> bool:
    """`node` sits under an `if` or `while` inside `region`: a test may keep it from
    running on some ranks (`rank_local_test` says which)."""
    for ancestor in ctx.ancestors(node):
        if ancestor is region:
            return False
        if isinstance(ancestor, (cst.If, cst.While)):
            return True
    return False


def rank_local_test(
    ctx: FileContext, node: cst.CSTNode, local: Set[str], region: cst.CSTNode
) -> cst.BaseExpression | None:
    """The test of the innermost `if` / `while` around `node` (inside `region`) that reads
    one of the rank-local names `local` not agreed through a collective before it."""
    for ancestor in ctx.ancestors(node):
        if ancestor is region:
            return None
        if isinstance(ancestor, (cst.If, cst.While)):
            if any(
                type(n) is cst.Call and domain_of(ctx).collectives.issues(n)
                for n in ctx.walk(ancestor.test)
            ):
                continue  # `if any_rank_bad(loss):` decides through a collective
            if _none_identity(ancestor.test):
                continue  # whether a callee returned None: not shown to follow the batch
            if same_on_every_rank(ctx, ancestor.test, ancestor):
                continue  # `if args.tp > 1:`: options the launcher gives every rank alike
            names = {n.split(".")[0] for n in ctx.names_in(ancestor.test)}
            read = names & local
            if read and not agreed(ctx, read, ancestor, region):
                return ancestor.test
    return None


def reads_only_shapes(ctx: FileContext, test: cst.BaseExpression, local: Set[str]) -> bool:
    """Every read of the rank-local names `local` in `test` reads a shape or structure
    (`len(loss_list) > 1`, `out.shape[0]`, `"aux" in outputs`), or a name holding only a
    size (`_size_bound`: `bsz != args.batch_size`, `bsz = images[0].shape[0]`), of a
    collection whose size no mask or filter in sight decides (`data_sized`): what a
    forward returns is shaped by the model and its configuration, alike on every rank,
    unless the data decides it (detections kept per image): unknown, where a value read
    is not."""
    reads = [
        node
        for node in ctx.walk(test)
        if type(node) is cst.Name
        and node.value in local
        and not (type(parent := ctx.parent(node)) is cst.Attribute and parent.attr is node)
    ]
    return bool(reads) and all(
        (_shape_read(ctx, _field(ctx, node)) or _size_bound(ctx, node))
        and not data_sized(ctx, node, node)
        for node in reads
    )


def _size_bound(ctx: FileContext, name: cst.Name) -> bool:
    """`name` holds only a size read off a value (`bsz = images[0].shape[0]`, `n =
    len(batch)`), through integer indexes: one view of a multi-crop batch, or one sample,
    whose size may be the batch's (alike on every rank) or what that sample holds."""
    bindings = ctx.resolver.reaching(name.value, name)
    return bool(bindings) and all(
        b.kind == "assign" and _size_of_element(ctx, b.value) for b in bindings
    )


def _size_of_element(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """`len(x)`, `x.shape`, `x.shape[0]`, `x.size(0)`, `x.numel()`, with `x` a name or a
    name indexed by integers (`images[0]`)."""
    while type(value) is cst.Subscript and type(value.value) is cst.Attribute:
        value = value.value  # `x.shape[0]`, `x.shape[-2:]`
    if type(value) is cst.Call:
        if type(value.func) is cst.Name and value.func.value == "len" and len(value.args) == 1:
            return _indexed_name(value.args[0].value)
        value = value.func
        if type(value) is not cst.Attribute or value.attr.value not in _SHAPE_METHODS:
            return False
    elif type(value) is not cst.Attribute or value.attr.value != "shape":
        return False
    return _indexed_name(value.value)


def _indexed_name(node: cst.BaseExpression) -> bool:
    while type(node) is cst.Subscript:
        if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
            return False
        index = node.slice[0].slice.value
        if type(index) is cst.UnaryOperation:
            index = index.expression
        if type(index) is not cst.Integer:
            return False
        node = node.value
    return type(node) is cst.Name


def _none_identity(test: cst.BaseExpression) -> bool:
    """`x is None` / `x is not None` (also negated): a test of whether a value exists, which
    a callee decides (a two-stage schedule returning no loss before a step), not of what
    this rank's batch holds."""
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test = test.expression
    return (
        type(test) is cst.Comparison
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
        and type(test.comparisons[0].comparator) is cst.Name
        and test.comparisons[0].comparator.value == "None"
    )


@dataclass(frozen=True)
class BatchTest:
    """A test on what the batch holds; `opaque` when it reads a field of the batch as a
    value of its own (`batch["n_valid"] == 0`): what that field means is the collate
    function's (a count, perhaps), out of sight."""

    test: cst.BaseExpression
    opaque: bool


def batch_content_test(
    ctx: FileContext, node: cst.CSTNode, batch: Set[str], region: cst.CSTNode
) -> BatchTest | None:
    """The test of the innermost `if` / `while` around `node` (inside `region`) that reads
    what the batch holds (`any(len(t) < 1 for t in targets)`, `batch is None`,
    `mask.sum() == 0`, what one sample holds): each rank reads its own shard, so the test
    can differ between ranks. The batch's shape (`len(images)`, `x.size(0)`,
    `x.numel() == 0`) is not read as content: a `DistributedSampler` gives every rank the
    same sample count, and the transforms fix the sizes."""
    for ancestor in ctx.ancestors(node):
        if ancestor is region:
            return None
        if isinstance(ancestor, (cst.If, cst.While)):
            read = _reads_content(ctx, ancestor.test, batch)
            if read is not None:
                return BatchTest(ancestor.test, opaque=read)
    return None


def _reads_content(ctx: FileContext, test: cst.BaseExpression, batch: Set[str]) -> bool | None:
    """None when `test` reads nothing the batch holds; else whether every such read is
    opaque (a field compared or tested as it is)."""
    elements: set[str] = set()
    for comp in ctx.walk(test):
        if type(comp) is cst.CompFor and _root(comp.iter) in batch:
            elements.update(n.value for n in ctx.walk(comp.target) if type(n) is cst.Name)
    found: bool | None = None
    for name in ctx.walk(test):
        if type(name) is not cst.Name:
            continue
        if name.value in elements:
            return False
        if name.value not in batch or _iterated(ctx, name):
            continue
        field = _field(ctx, name)
        if _shape_read(ctx, field):
            continue
        if not _opaque(ctx, field):
            return False
        found = True
    return found


def _opaque(ctx: FileContext, field: cst.BaseExpression) -> bool:
    """`field` is an operand of a comparison other than `is`, of `not`/`and`/`or`, or the
    whole test: read as a value the collate function chose, not computed from samples."""
    parent = ctx.parent(field)
    if type(parent) is cst.ComparisonTarget:
        return not isinstance(parent.operator, (cst.Is, cst.IsNot))
    if type(parent) is cst.Comparison:
        return not all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in parent.comparisons)
    return isinstance(parent, (cst.UnaryOperation, cst.BooleanOperation, cst.If, cst.While))


def _root(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if type(expr) is cst.Name else None


def _iterated(ctx: FileContext, name: cst.Name) -> bool:
    """`name` is what a comprehension iterates (`for t in targets`): its elements are
    judged where they are read."""
    parent = ctx.parent(name)
    return type(parent) is cst.CompFor and parent.iter is name


def _field(ctx: FileContext, name: cst.Name) -> cst.BaseExpression:
    """`batch["images"]`, `batch.images` for the name `batch`: a field of the batch, read
    through string keys and attributes (not `batch[0]`, one sample of a list)."""
    node: cst.BaseExpression = name
    while True:
        parent = ctx.parent(node)
        keyed = (
            type(parent) is cst.Subscript
            and len(parent.slice) == 1
            and type(parent.slice[0].slice) is cst.Index
            and type(parent.slice[0].slice.value) is cst.SimpleString
        )
        named = (
            type(parent) is cst.Attribute
            and parent.attr.value not in _SHAPE_ATTRIBUTES
            and type(ctx.parent(parent)) is not cst.Call
        )
        if not (keyed or named) or getattr(parent, "value", None) is not node:
            return node
        assert isinstance(parent, (cst.Subscript, cst.Attribute))
        node = parent


def _shape_read(ctx: FileContext, node: cst.BaseExpression) -> bool:
    """`len(node)`, `node.shape...`, `node.ndim`, `node.dtype`, `node.size(...)`,
    `node.numel()`, `node.dim()`, `"key" in node`, and its type (`torch.is_tensor(node)`,
    `isinstance(node, ...)`): the batch's shape and structure, which the loader fixes (the
    sample count a `DistributedSampler` gives every rank alike, the size its transforms
    give, the keys of its collate function), and which kind of value the model returns,
    which its configuration fixes."""
    parent = ctx.parent(node)
    if type(parent) is cst.ComparisonTarget and isinstance(parent.operator, (cst.In, cst.NotIn)):
        return True  # `"labels" in batch`: the keys the collate function gives every batch
    if type(parent) is cst.Arg:
        call = ctx.parent(parent)
        if type(call) is not cst.Call or not call.args or call.args[0] is not parent:
            return False
        if type(call.func) is cst.Name and call.func.value == "len":
            return len(call.args) == 1
        return (type(call.func) is cst.Name and call.func.value == "isinstance") or ctx.call_name(
            call
        ) == "torch.is_tensor"
    if type(parent) is not cst.Attribute or parent.value is not node:
        return False
    if parent.attr.value in _SHAPE_ATTRIBUTES - _SHAPE_METHODS:
        return True
    return parent.attr.value in _SHAPE_METHODS and type(ctx.parent(parent)) is cst.Call


def agreed(ctx: FileContext, names: set[str], before: cst.CSTNode, region: cst.CSTNode) -> bool:
    """Each of `names` went through a collective (`dist.all_reduce(flag)`) in `region`
    before `before`, or is computed from values that did alone (`flag.item() > 0`): it is
    the same on every rank."""
    if not names:
        return False
    reduced: set[str] = set()
    collectives = domain_of(ctx).collectives
    for call in ctx.calls_within(region):
        if not ctx.before(call, before) or not collectives.issues(call):
            continue
        parent = ctx.parent(call)
        statement = ctx.statement(call)
        if collectives.is_collective(call) or type(parent) is cst.Expr:
            # `dist.all_reduce(flag)` (in place), or a helper whose result is dropped
            for arg in call.args:
                if arg.keyword is None or arg.keyword.value == "tensor":  # not `op=`, `group=`
                    reduced.update(ctx.names_in(arg.value))
        elif type(statement) is cst.Assign and ctx.is_inside(call, statement.value):
            # `loss_dict_reduced = utils.reduce_dict(loss_dict)`, `loss_float =
            # comm.all_reduce(loss.clone()).item()`: the result is reduced, the argument
            # (`loss_dict`) is still this rank's own
            for target in statement.targets:
                reduced.update(ctx.names_in(target.target))
    if names <= reduced:
        return True
    # `flag = reduced_tensor.item()`: a value computed from a reduced tensor.
    dependencies = domain_of(ctx).backward.dependencies
    for name in names - reduced:
        steps = [
            s
            for b in ctx.resolver.reaching(name, before)
            if b.kind == "assign"
            for s in dependencies(b.value, b.statement)
        ]
        if not any(_reads_only(ctx, s.node, reduced) for s in steps):
            return False
    return True


def _reads_only(ctx: FileContext, node: cst.CSTNode, reduced: set[str]) -> bool:
    """`node` is a reduced value (`flag`), or an expression whose every name is one
    (`flag.item() > 0`): the same on every rank."""
    if isinstance(node, (cst.Name, cst.Attribute)) and dotted(node) in reduced:
        return True
    heads = {name.split(".")[0] for name in ctx.names_in(node)}
    return bool(heads) and heads <= {name.split(".")[0] for name in reduced}


def enclosing_handler(
    ctx: FileContext, node: cst.CSTNode, stop: cst.CSTNode
) -> cst.ExceptHandler | None:
    """The `except` clause around `node`, below `stop`."""
    for ancestor in ctx.ancestors(node):
        if ancestor is stop:
            return None
        if type(ancestor) is cst.ExceptHandler:
            return ancestor
    return None


def catches_rank_local_error(handler: cst.ExceptHandler) -> bool:
    """The handler may catch an error only this rank raised (not `StopIteration`,
    `KeyboardInterrupt` or `SystemExit`, which every rank meets alike)."""
    caught = {(dotted(k) or "").rpartition(".")[2] for k in handler_types(handler)}
    return not caught & _RAISED_ALIKE
