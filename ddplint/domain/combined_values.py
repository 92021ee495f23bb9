"""Which values of a function the ranks combine, value by value: those that reach a call
combining the ranks' values (`dist.all_reduce(t)` with `t = torch.tensor([correct,
total])`: `t`, `correct`, `total`), and those computed from what such a call returns
(`preds = gather_all(preds)`, then `acc = (preds == labels).float().mean()`). A gather of
the predictions does not vouch for the loss summed beside them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext, Scope
from ddplint.names import dotted


@dataclass(frozen=True)
class Combined:
    """The combined values of one function (`combined_values`)."""

    ctx: FileContext
    frame: Scope
    fed: frozenset[str]  # names whose values reach a combining call
    # names computed from what one returns, each with the statement that first binds so
    results: dict[str, cst.CSTNode]

    def holds(self, names: Iterable[str]) -> bool:
        """One of `names` holds a combined value."""
        return bool(set(names) & (self.fed | set(self.results)))

    def counts(self, count: cst.AugAssign) -> bool:
        """The running count `count` (`x += v`) is combined: `x` reaches a combining call,
        or `v` is computed from what one returned before."""
        if dotted(count.target) in self.fed:
            return True
        return any(self._result_at(n, count) for n in self.ctx.names_in(count.value))

    def _result_at(self, name: str, at: cst.CSTNode, through_items: bool = True) -> bool:
        """`name` holds a combined result where `at` reads it (bound so before it), or an
        item of one (`for key, value in losses.items():` after `losses =
        reduce_loss(losses)`)."""
        bound = self.results.get(name)
        if bound is not None and self.ctx.before(bound, at):
            return True
        if not through_items:
            return False
        loops = [b for b in self.ctx.resolver.reaching(name, at) if b.kind == "for"]
        return bool(loops) and all(
            b.value is not None
            and any(self._result_at(n, b.statement, False) for n in _roots(self.ctx, b.value))
            for b in loops
        )

    def fed_by(self, loop: cst.For, methods: tuple[str, ...] = ("append", "extend")) -> set[str]:
        """The combined names, with the objects `loop` hands combined values through
        `methods` (`all_preds.extend(preds.cpu())` after `preds = gather(preds)`,
        `top1.update(reduced_acc1.item())` after `reduced_acc1 = reduce_mean(acc1)`)."""
        ctx = self.ctx
        found = set(self.fed) | set(self.results)
        for call in ctx.calls_within(loop.body):
            func = call.func
            if not (type(func) is cst.Attribute and func.attr.value in methods):
                continue
            held = func.value.value if type(func.value) is cst.Subscript else func.value
            if (
                type(held) is cst.Name
                and ctx.scope(call) is self.frame
                and any(self._result_at(n, call) for a in call.args for n in ctx.names_in(a.value))
            ):
                found.add(held.value)
        return found


def combined_values(
    ctx: FileContext,
    frame: Scope,
    combines: Callable[[FileContext, cst.Call], bool],
    trusted: cst.FunctionDef | None = None,
) -> Combined | None:
    """The combined values of `frame` (`Combined`), the combining calls being those
    `combines` accepts; None when one names nothing of the frame (`sync_metrics()`):
    what it combines is out of sight. What a collective, a helper named for combining
    (`gather_all(x)`) or another helper issuing collectives returns is combined (`loss,
    correct = get_loss(model, batch)` may return counts over every rank's batch);
    `trusted`'s is not (the evaluation function whose returns the caller asks about)."""
    fed: list[str] = []
    results: dict[str, cst.CSTNode] = {}
    for call in ctx.model.calls_by_frame(frame):
        if not combines(ctx, call):
            continue
        named = [n for a in call.args for n in ctx.names_in(a.value)]
        if type(call.func) is cst.Attribute:
            named.extend(ctx.names_in(call.func.value))
        if not named:
            return None
        fed.extend(named)
        statement = ctx.statement(call)
        if type(statement) is cst.Assign and not (
            trusted is not None and trusted in ctx.resolver.callees(call)
        ):
            for target in statement.targets:
                for name in bound_names(target.target):
                    results.setdefault(name, statement)
        for name in _written_in_place(ctx, call):
            results.setdefault(name, statement)
    return Combined(ctx, frame, frozenset(_back(ctx, frame, fed)), _on(ctx, frame, results))


# Collectives that leave their result in their first argument (`dist.all_reduce(loss)`:
# `loss` holds the sum over the ranks from there on).
_IN_PLACE = frozenset(
    f"torch.distributed.{name}"
    for name in ("all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor")
)


def _written_in_place(ctx: FileContext, call: cst.Call) -> list[str]:
    """The name a collective writes its result into (`dist.all_reduce(loss)`: `loss`),
    and the names a loop variable so written stands for (`for t in [loss, correct]:`)."""
    if ctx.call_name(call) not in _IN_PLACE or not call.args or call.args[0].keyword:
        return []
    name = dotted(call.args[0].value)
    if name is None:
        return []
    return [name, *_listed(ctx, ctx.scope(call), name)]


def _listed(ctx: FileContext, frame: Scope, name: str) -> list[str]:
    """The names a loop variable `name` of `frame` takes in turn, where each of its loops
    runs over a list, tuple or set written out, there or in every value of a name
    (`for metric in [val_loss, val_acc]:`, `stats = [total, count]` then `for stat in
    stats:`)."""
    loops = [b for b in ctx.model.bindings_in(frame).get(name, ()) if b.kind == "for"]
    found: list[str] = []
    for binding in loops:
        if binding.index is not None:
            continue
        for listed in _written_out(ctx, binding.value, binding.statement):
            found.extend(n for e in listed.elements if (n := dotted(e.value)) is not None)
    return found


_WRITTEN_OUT = (cst.List, cst.Tuple, cst.Set)


def _written_out(
    ctx: FileContext, iterable: cst.BaseExpression, at: cst.CSTNode
) -> list[cst.List | cst.Tuple | cst.Set]:
    """The list, tuple or set literals `iterable` stands for at `at`: itself, or every value
    the resolver follows a name to (none where one of them is anything else)."""
    if isinstance(iterable, _WRITTEN_OUT):
        return [iterable]
    if type(iterable) is not cst.Name:
        return []
    leaves = [v.expr for v in ctx.resolver.values(iterable, at) if v.leaf]
    written = [leaf for leaf in leaves if isinstance(leaf, _WRITTEN_OUT)]
    return written if len(written) == len(leaves) else []


def _back(ctx: FileContext, frame: Scope, names: list[str]) -> set[str]:
    """`names`, and back through the assignments of `frame` the names they were computed
    from."""
    found: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        root = name.split(".")[0]
        if root != name:
            todo.append(root)
        for binding in ctx.model.bindings_in(frame).get(name, ()):
            if binding.kind in ("assign", "augassign"):
                todo.extend(ctx.names_in(binding.value))
        todo.extend(_listed(ctx, frame, name))
    return found


def _on(ctx: FileContext, frame: Scope, results: dict[str, cst.CSTNode]) -> dict[str, cst.CSTNode]:
    """`results`, and on through the later assignments of `frame` the names computed from
    them (`acc = correct / total` after `correct = reduce(correct)`; not `loss =
    criterion(out, labels)` before `labels = gather(labels)`)."""
    found = dict(results)
    bindings = [
        (name, b)
        for name, bound in ctx.model.bindings_in(frame).items()
        for b in bound
        if b.kind == "assign"
    ]
    changed = True
    while changed:
        changed = False
        for name, binding in bindings:
            if name in found:
                continue
            if any(
                n in found and ctx.before(found[n], binding.statement)
                for n in ctx.names_in(binding.value)
            ):
                found[name] = binding.statement
                changed = True
    return found


def bound_names(target: cst.BaseExpression) -> list[str]:
    """The names (or attribute chains) an assignment target binds (`a, b = ...`: both)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in bound_names(e.value)]
    name = dotted(target)
    return [name] if name is not None else []


def _roots(ctx: FileContext, expr: cst.BaseExpression) -> list[str]:
    """The name an iterable is read from through its methods (`losses` of
    `losses.items()`, `batch_losses` of `batch_losses`)."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        expr = expr.func.value
    return [expr.value] if type(expr) is cst.Name else []
