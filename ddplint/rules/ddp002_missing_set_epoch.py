"""DDP002: a shuffling DistributedSampler iterated epoch after epoch without `set_epoch`.

The helpers here (samplers, the loaders built on them) are shared with DDP003.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from ddplint.context import FileContext, Scope
from ddplint.diagnostics import Applicability, Severity
from ddplint.facts import LOADER_CLASSES, SAMPLER_CLASSES, argument, is_false, is_true
from ddplint.names import dotted
from ddplint.rule import Finding, FixSpec, Rule, register

# Positions in `DistributedSampler(dataset, num_replicas, rank, shuffle, seed, drop_last)`
# and `DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
# collate_fn, pin_memory, drop_last)`.
SAMPLER_SHUFFLE = 3
SAMPLER_DROP_LAST = 5
LOADER_SAMPLER = 3
LOADER_BATCH_SAMPLER = 4
LOADER_DROP_LAST = 8


_CALLS_BY_SCOPE: weakref.WeakKeyDictionary[FileContext, dict[int, list[cst.Call]]] = (
    weakref.WeakKeyDictionary()
)


def calls_in_function(ctx: FileContext, func: Scope) -> list[cst.Call]:
    """Calls whose innermost enclosing function is `func`, from an index built once per
    file (`FileContext.calls_within` rescans every call of the file at each use)."""
    index = _CALLS_BY_SCOPE.get(ctx)
    if index is None:
        index = defaultdict(list)
        for call in ctx.calls:
            index[id(ctx.scope(call))].append(call)
        _CALLS_BY_SCOPE[ctx] = index
    return index.get(id(func), [])


def calls_under(ctx: FileContext, node: cst.CSTNode) -> list[cst.Call]:
    """Calls below `node` in the same function (not in nested definitions)."""
    scope = ctx.scope(node)
    return [n for n in ctx.walk(node) if isinstance(n, cst.Call) and ctx.scope(n) is scope]


@dataclass
class LoaderUse:
    """A `DataLoader(...)` built on a sampler."""

    call: cst.Call
    name: str | None
    via: str  # "sampler", "batch_sampler", or "returned_sampler" (a helper's return value)


@dataclass
class SamplerUse:
    """A `DistributedSampler(...)` call, the name it is bound to and its loaders."""

    call: cst.Call
    name: str | None
    binding_value: cst.BaseExpression | None
    loaders: list[LoaderUse] = field(default_factory=list)


def shuffle_of(call: cst.Call) -> bool | None:
    """True / False when the sampler's shuffling is known, None when it is computed."""
    value = argument(call, SAMPLER_SHUFFLE, "shuffle")
    if value is None or is_true(value):
        return True
    if is_false(value):
        return False
    return None


def bound_name(ctx: FileContext, node: cst.BaseExpression) -> tuple[str | None, cst.CSTNode]:
    """The dotted name `node` is assigned to (through `x if c else y`), and the value
    expression of that assignment."""
    current: cst.CSTNode = node
    parent = ctx.parent(current)
    while isinstance(parent, (cst.IfExp, cst.BooleanOperation)):
        current = parent
        parent = ctx.parent(current)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        return dotted(parent.targets[0].target), current
    if isinstance(parent, cst.AnnAssign):
        return dotted(parent.target), current
    return None, current


def _refers_to(ctx: FileContext, expr: cst.BaseExpression | None, sampler: SamplerUse) -> bool:
    if expr is None:
        return False
    for node in ctx.walk(expr):
        if node is sampler.call:
            return True
        if (
            sampler.name is not None
            and isinstance(node, (cst.Name, cst.Attribute))
            and dotted(node) == sampler.name
        ):
            return True
    return False


def distributed_samplers(ctx: FileContext) -> list[SamplerUse]:
    """Every DistributedSampler of the file with the DataLoaders built on it."""
    samplers = []
    for call in ctx.calls_to(*SAMPLER_CLASSES):
        name, value = bound_name(ctx, call)
        samplers.append(SamplerUse(call, name, value if name else None))
    if not samplers:
        return samplers
    # `return dataset, train_sampler` in a data helper, the loader built by its caller
    # (torchvision's `load_data`): the caller's names for the returned sampler.
    returned = {
        id(s): _returned_names(ctx, s.name, ctx.scope(s.call)) if s.name is not None else []
        for s in samplers
    }
    for loader in ctx.calls_to(*LOADER_CLASSES):
        direct = argument(loader, LOADER_SAMPLER, "sampler")
        batch = argument(loader, LOADER_BATCH_SAMPLER, "batch_sampler")
        for sampler in samplers:
            via = None
            if sampler.name is None or _same_scope_or_module(ctx, sampler.call, loader):
                if _refers_to(ctx, direct, sampler):
                    via = "sampler"
                elif any(_refers_to(ctx, b, sampler) for b in _with_values(ctx, batch, loader)):
                    via = "batch_sampler"
            else:
                for alias, scope in returned[id(sampler)]:
                    if scope is not ctx.scope(loader):
                        continue
                    if direct is not None and dotted(direct) == alias:
                        via = "returned_sampler"
                    elif any(dotted(b) == alias for b in _with_values(ctx, batch, loader)):
                        via = "batch_sampler"
            if via is not None:
                loader_name, _ = bound_name(ctx, loader)
                sampler.loaders.append(LoaderUse(loader, loader_name, via))
    return samplers


def _with_values(
    ctx: FileContext, expr: cst.BaseExpression | None, at: cst.CSTNode
) -> list[cst.BaseExpression]:
    if expr is None:
        return []
    name = dotted(expr)
    return [expr, *(ctx.values_of(name, at) if name else ())]


def _same_scope_or_module(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    scope_a = ctx.scope(a)
    return scope_a is ctx.scope(b) or scope_a is ctx.module


# -- DDP002 proper -------------------------------------------------------------------------


@dataclass
class _EpochLoop:
    loop: cst.For
    name: str  # the loader's (or sampler's) name in the loop's scope
    is_sampler: bool


def _enclosing_loop(ctx: FileContext, node: cst.CSTNode) -> cst.For | cst.While | None:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.For, cst.While)):
            return ancestor
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
    return None


_READS: weakref.WeakKeyDictionary[FileContext, dict[str, list[cst.BaseExpression]]] = (
    weakref.WeakKeyDictionary()
)


def _outer_loops(ctx: FileContext, node: cst.CSTNode) -> list[cst.For | cst.While]:
    """Loops around `node` in the same function, innermost first."""
    found = []
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(ancestor, (cst.For, cst.While)):
            found.append(ancestor)
    return found


def _reads(ctx: FileContext) -> dict[str, list[cst.BaseExpression]]:
    """Whole dotted names read in the file (`loader`, `self.loader`; not the `loader`
    inside `loader.sampler`), indexed once per file."""
    index = _READS.get(ctx)
    if index is None:
        index = defaultdict(list)
        for node in ctx.nodes:
            if not isinstance(node, (cst.Name, cst.Attribute)):
                continue
            parent = ctx.parent(node)
            if isinstance(parent, (cst.Attribute, cst.AssignTarget, cst.Param)):
                continue
            name = dotted(node)
            if name is not None:
                index[name].append(node)
        _READS[ctx] = index
    return index


def _usages(ctx: FileContext, name: str, scope: Scope) -> Iterator[cst.BaseExpression]:
    attribute = name.startswith("self.")
    for node in _reads(ctx).get(name, ()):
        if attribute or ctx.scope(node) is scope:
            yield node


def _for_iterating(ctx: FileContext, node: cst.CSTNode) -> cst.For | None:
    """The `for` statement whose iterable holds `node` (`for b in loader`,
    `for i, b in enumerate(tqdm(loader))`)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.For):
            return ancestor if child is ancestor.iter else None
        if isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return None
        child = ancestor
    return None


def _param_for(func: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> str | None:
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    if arg.keyword is not None:
        names = params + [p.name.value for p in func.params.kwonly_params]
        return arg.keyword.value if arg.keyword.value in names else None
    if arg.star:
        return None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    index = positional.index(arg)
    if isinstance(call.func, cst.Attribute) and params and params[0] in ("self", "cls"):
        index += 1
    return params[index] if index < len(params) else None


class _Finder:
    """Epoch loops iterating one loader (or sampler), following helpers of this file and
    project helpers; and whether each calls `set_epoch`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._setters: set[str] | None = None

    @property
    def setters(self) -> set[str]:
        """Functions of this file that call `set_epoch`, directly or through another."""
        if self._setters is None:
            ctx = self.ctx
            found: set[str] = set()
            changed = True
            while changed:
                changed = False
                for name, defs in ctx.functions.items():
                    if name in found:
                        continue
                    for func in defs:
                        if any(self._sets_epoch(c, found) for c in calls_in_function(ctx, func)):
                            found.add(name)
                            changed = True
                            break
            self._setters = found
        return self._setters

    def _sets_epoch(self, call: cst.Call, known: set[str]) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "set_epoch":
            return True
        if isinstance(func, cst.Name) and func.value in known:
            return True
        project = self.ctx.project
        return project is not None and bool(project.helper_set_epoch_positions(self.ctx, call))

    def loop_sets_epoch(self, loop: cst.For) -> bool:
        setters = self.setters
        return any(self._sets_epoch(c, setters) for c in calls_under(self.ctx, loop))

    def epoch_loops(
        self, name: str, scope: Scope, depth: int = 2
    ) -> Iterator[tuple[_EpochLoop | None, cst.CSTNode]]:
        """(epoch loop or None, iteration site) for each place `name` is iterated."""
        ctx = self.ctx
        for node in _usages(ctx, name, scope):
            loop = _for_iterating(ctx, node)
            if loop is not None:
                outer = _enclosing_loop(ctx, loop)
                yield self._epoch(outer, name), loop
                continue
            arg = ctx.parent(node)
            call = ctx.parent(arg) if isinstance(arg, cst.Arg) else None
            if not isinstance(call, cst.Call) or not isinstance(arg, cst.Arg):
                continue
            helper = self._helper(call)
            if helper is not None and depth > 0:
                param = _param_for(helper, call, arg)
                if param is None:
                    continue
                for inner, site in self.epoch_loops(param, helper, depth - 1):
                    if inner is not None:
                        yield inner, site
                    else:
                        yield self._epoch(_enclosing_loop(ctx, call), name), call
            elif helper is None and self._project_helper(call):
                yield self._epoch(_enclosing_loop(ctx, call), name), call

    def _epoch(self, loop: cst.For | cst.While | None, name: str) -> _EpochLoop | None:
        if isinstance(loop, cst.For):
            return _EpochLoop(loop, name, is_sampler=False)
        return None

    def _helper(self, call: cst.Call) -> cst.FunctionDef | None:
        func = call.func
        if isinstance(func, cst.Name):
            defs = self.ctx.functions.get(func.value)
            if defs and len(defs) == 1 and isinstance(self.ctx.scope(defs[0]), cst.Module):
                return defs[0]
        return None

    def _project_helper(self, call: cst.Call) -> bool:
        project = self.ctx.project
        return project is not None and project.resolve(self.ctx, call) is not None


def _returned_names(ctx: FileContext, name: str, scope: Scope) -> list[tuple[str, Scope]]:
    """Names bound by callers of `scope` to the value `name` it returns (by position in
    a returned tuple)."""
    if not isinstance(scope, cst.FunctionDef):
        return []
    positions: set[int | None] = set()
    for node in ctx.walk(scope):
        if isinstance(node, cst.Return) and node.value is not None and ctx.scope(node) is scope:
            value = node.value
            if dotted(value) == name:
                positions.add(None)
            elif isinstance(value, cst.Tuple):
                for index, element in enumerate(value.elements):
                    if dotted(element.value) == name:
                        positions.add(index)
    if not positions:
        return []
    found: list[tuple[str, Scope]] = []
    for call in ctx.calls:
        if not (isinstance(call.func, cst.Name) and call.func.value == scope.name.value):
            continue
        parent = ctx.parent(call)
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
            continue
        target = parent.targets[0].target
        for position in positions:
            if position is None:
                bound = dotted(target)
            elif isinstance(target, (cst.Tuple, cst.List)) and position < len(target.elements):
                bound = dotted(target.elements[position].value)
            else:
                bound = None
            if bound is not None:
                found.append((bound, ctx.scope(call)))
    return found


def _names_for(ctx: FileContext, sampler: SamplerUse) -> list[tuple[str, Scope, str, bool]]:
    """(name, scope, loader name or "", is the sampler itself) to follow."""
    names: list[tuple[str, Scope, str, bool]] = []
    for loader in sampler.loaders:
        if loader.name is None:
            continue
        scope = ctx.scope(loader.call)
        names.append((loader.name, scope, loader.via, False))
        for bound, where in _returned_names(ctx, loader.name, scope):
            names.append((bound, where, loader.via, False))
    return names


def _visible_in(ctx: FileContext, name: str, binding_node: cst.CSTNode, loop: cst.For) -> bool:
    scope = ctx.scope(binding_node)
    if scope is ctx.scope(loop) or scope is ctx.module:
        return ctx.before(binding_node, loop) or name.startswith("self.")
    if name.startswith("self."):
        return isinstance(ctx.scope(loop), cst.FunctionDef)
    return False


@register
class MissingSetEpoch(Rule):
    code = "DDP002"
    name = "missing-set-epoch"
    severity = Severity.ERROR
    summary = "Shuffling DistributedSampler iterated every epoch without set_epoch(epoch)"
    fixable = Applicability.SAFE
    explanation = """
## What it does
Finds an epoch loop that iterates a DataLoader built on a shuffling `DistributedSampler`
(`shuffle` defaults to `True`) and never calls `set_epoch` on it: not on the sampler, not
through `loader.sampler.set_epoch(...)`, and not in a function called from the loop
(in this file or, when several files are linted together, in a sibling module such as
`engine.train_one_epoch`). Samplers built with `shuffle=False` (evaluation) are left alone.

## Why is this bad?
`DistributedSampler` seeds its permutation with `seed + epoch`, and `epoch` only changes
through `set_epoch`. Without it every epoch visits the samples in the same order on every
rank: the shuffling you asked for happens once. Training still runs, and the model is
silently worse.

## Example
```python
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=32, sampler=sampler)
for epoch in range(epochs):
    for x, y in loader:
        train_step(x, y)
```

## Use instead
```python
for epoch in range(epochs):
    sampler.set_epoch(epoch)
    for x, y in loader:
        train_step(x, y)
```

## Fix safety
The fix inserts `sampler.set_epoch(epoch)` (or `loader.sampler.set_epoch(epoch)` when the
sampler has no name) as the first statement of the epoch loop, using the loop variable.
It is safe: it only changes the order of samples between epochs, which is the intent of
`shuffle=True`. No fix is offered when the loop variable is not a plain name or the
sampler may be `None`/another sampler class at that point.

## References
- https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
- https://pytorch.org/tutorials/intermediate/ddp_series_multigpu.html
"""
    flag = (
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(train_set, model, epochs):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        for x, y in loader:
            model(x).sum().backward()
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler as DS

def train_one_epoch(model, loader):
    for batch in loader:
        model(batch).sum().backward()

def main(ds, model):
    dist.init_process_group("nccl")
    loader = DataLoader(ds, batch_size=8, sampler=DS(ds, shuffle=True), drop_last=True)
    for epoch in range(10):
        train_one_epoch(model, loader)
""",
        """
import torch
import torch.distributed as dist

def build(ds):
    sampler = torch.utils.data.DistributedSampler(ds, drop_last=True)
    loader = torch.utils.data.DataLoader(ds, batch_size=4, sampler=sampler)
    return loader, sampler

def main(ds, step):
    dist.init_process_group("nccl")
    train_loader, train_sampler = build(ds)
    for epoch in range(5):
        for i, batch in enumerate(train_loader):
            step(batch)
""",
        """
import torch
import torch.distributed as dist

def load_data(ds, args):
    if args.distributed:
        train_sampler = torch.utils.data.distributed.DistributedSampler(ds, drop_last=True)
    else:
        train_sampler = torch.utils.data.RandomSampler(ds)
    return ds, train_sampler

def main(ds, args, step):
    dist.init_process_group("nccl")
    dataset, train_sampler = load_data(ds, args)
    loader = torch.utils.data.DataLoader(dataset, batch_size=4, sampler=train_sampler)
    for epoch in range(5):
        for batch in loader:
            step(batch)
""",
    )
    allow = (
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(train_set, model, epochs):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            model(x).sum().backward()
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def train_one_epoch(model, loader, epoch):
    loader.sampler.set_epoch(epoch)
    for batch in loader:
        model(batch).sum().backward()

def main(ds, val_ds, model):
    dist.init_process_group("nccl")
    loader = DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds), drop_last=True)
    val_loader = DataLoader(val_ds, sampler=DistributedSampler(val_ds, shuffle=False))
    for epoch in range(10):
        train_one_epoch(model, loader, epoch)
        for batch in val_loader:
            model(batch)
""",
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(ds, model):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(ds, drop_last=True)
    loader = DataLoader(ds, batch_size=8, sampler=sampler)
    for x, y in loader:  # a single pass: the first epoch's order is shuffled already
        model(x).sum().backward()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        finder = _Finder(ctx)
        reported: set[int] = set()
        for sampler in distributed_samplers(ctx):
            if shuffle_of(sampler.call) is not True:
                continue
            for name, scope, via, _ in _names_for(ctx, sampler):
                for epoch, _site in finder.epoch_loops(name, scope):
                    if epoch is None or id(epoch.loop) in reported:
                        continue
                    loop = epoch.loop
                    loops = [loop, *_outer_loops(ctx, loop)]
                    if any(ctx.is_inside(sampler.call, outer) for outer in loops):
                        continue
                    if any(finder.loop_sets_epoch(outer) for outer in loops):
                        continue
                    reported.add(id(loop))
                    yield self._finding(ctx, sampler, epoch, via)

    def _finding(
        self, ctx: FileContext, sampler: SamplerUse, epoch: _EpochLoop, via: str
    ) -> Finding:
        loop = epoch.loop
        receiver = self._receiver(ctx, sampler, epoch, via)
        if receiver:
            shown = f"`{receiver}.set_epoch(epoch)`"
        else:
            shown = "`set_epoch(epoch)` on the sampler"
        fix = None
        if (
            receiver is not None
            and isinstance(loop.target, cst.Name)
            and isinstance(loop.body, cst.IndentedBlock)
            and loop.body.body
        ):
            line = f"{receiver}.set_epoch({loop.target.value})"
            fix = FixSpec(
                f"Call `{line}` at the start of each epoch",
                insertions=((loop.body.body[0], line),),
                applicability=Applicability.SAFE,
            )
        return Finding(
            loop,
            f"Epoch loop iterates a shuffling DistributedSampler without calling "
            f"{shown}: every epoch repeats the same sample order",
            fix=fix,
        )

    def _receiver(
        self, ctx: FileContext, sampler: SamplerUse, epoch: _EpochLoop, via: str
    ) -> str | None:
        """What to call `set_epoch` on at the top of the loop, if it is certainly the
        DistributedSampler there."""
        value = sampler.binding_value
        if (
            sampler.name is not None
            and value is sampler.call
            and _visible_in(ctx, sampler.name, sampler.call, epoch.loop)
        ):
            return sampler.name
        inline = sampler.name is None and isinstance(ctx.parent(sampler.call), cst.Arg)
        if via == "sampler" and (inline or value is sampler.call):
            return f"{epoch.name}.sampler"
        return None


__all__ = [
    "LOADER_DROP_LAST",
    "SAMPLER_DROP_LAST",
    "LoaderUse",
    "SamplerUse",
    "calls_in_function",
    "calls_under",
    "distributed_samplers",
    "shuffle_of",
]
