"""DDP002: a shuffling DistributedSampler iterated epoch after epoch without `set_epoch`."""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Container, Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.analysis.samplers import (
    SamplerUse,
    distributed_samplers,
    is_evaluation_sampler,
    names_bound_to,
    returned_names,
    shuffle_of,
)
from ddplint.context import FileContext, Scope
from ddplint.diagnostics import Applicability, Severity
from ddplint.names import dotted
from ddplint.rule import Finding, FixSpec, Rule, register

# -- DDP002 proper -------------------------------------------------------------------------


@dataclass
class _EpochLoop:
    loop: cst.For
    name: str  # the loader's (or sampler's) name in the loop's scope
    is_sampler: bool


_READS: weakref.WeakKeyDictionary[FileContext, dict[str, list[cst.BaseExpression]]] = (
    weakref.WeakKeyDictionary()
)
_READS_BY_SCOPE: weakref.WeakKeyDictionary[
    FileContext, dict[str, dict[Scope, list[cst.BaseExpression]]]
] = weakref.WeakKeyDictionary()


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
        for node in ctx.nodes_of(cst.Name, cst.Attribute):
            parent = ctx.parent(node)
            if not isinstance(node, (cst.Name, cst.Attribute)) or isinstance(
                parent, (cst.Attribute, cst.AssignTarget, cst.Param)
            ):
                continue
            name = dotted(node)
            if name is not None:
                index[name].append(node)
        _READS[ctx] = index
    return index


def _usages(ctx: FileContext, name: str, scope: Scope) -> Iterator[cst.BaseExpression]:
    reads = _reads(ctx).get(name, [])
    if name.startswith("self."):
        return iter(reads)
    by_scope = _READS_BY_SCOPE.get(ctx)
    if by_scope is None:
        by_scope = _READS_BY_SCOPE[ctx] = {}
    local = by_scope.get(name)
    if local is None:  # grouped once per name, so that asking in every scope stays linear
        local = by_scope[name] = defaultdict(list)
        for node in reads:
            local[ctx.scope(node)].append(node)
    return iter(local.get(scope, []))


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
            self._setters = set(self.ctx.facts.functions_reaching(self._sets_epoch))
        return self._setters

    def _sets_epoch(self, call: cst.Call, known: Container[str]) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "set_epoch":
            return True
        if isinstance(func, cst.Name) and func.value in known:
            return True
        project = self.ctx.project
        return project is not None and bool(project.helper_set_epoch_positions(self.ctx, call))

    def loop_sets_epoch(self, loop: cst.For | cst.While) -> bool:
        setters = self.setters
        return any(self._sets_epoch(c, setters) for c in self.ctx.calls_within(loop))

    def epoch_loops(
        self, name: str, scope: Scope, depth: int = 2
    ) -> Iterator[tuple[_EpochLoop | None, cst.CSTNode]]:
        """(epoch loop or None, iteration site) for each place `name` is iterated."""
        ctx = self.ctx
        for node in _usages(ctx, name, scope):
            loop = _for_iterating(ctx, node)
            if loop is not None:
                outer = ctx.enclosing_loop(loop)
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
                        yield self._epoch(ctx.enclosing_loop(call), name), call
            elif helper is None and self._project_helper(call):
                yield self._epoch(ctx.enclosing_loop(call), name), call

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


def _names_for(ctx: FileContext, sampler: SamplerUse) -> list[tuple[str, Scope, str, bool]]:
    """(name, scope, loader name or "", is the sampler itself) to follow."""
    names: list[tuple[str, Scope, str, bool]] = []
    for loader in sampler.loaders:
        scope = ctx.scope(loader.call)
        if loader.name is not None:
            names.append((loader.name, scope, loader.via, False))
        for bound, where in returned_names(ctx, loader.name, scope, loader.call):
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
            if shuffle_of(sampler.call) is not True or is_evaluation_sampler(ctx, sampler):
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
        yield from self._project_loaders(ctx, finder, reported)

    def _project_loaders(
        self, ctx: FileContext, finder: _Finder, reported: set[int]
    ) -> Iterator[Finding]:
        """`loader = data.build_loader(...)`, a project helper returning a loader built on
        a shuffling DistributedSampler, iterated epoch after epoch without `set_epoch`."""
        project = ctx.project
        if project is None:
            return
        for call in ctx.calls:
            positions = project.helper_returned_loader(ctx, call)
            for name in names_bound_to(ctx, call, positions):
                for epoch, _site in finder.epoch_loops(name, ctx.scope(call)):
                    if epoch is None or id(epoch.loop) in reported:
                        continue
                    loops = [epoch.loop, *_outer_loops(ctx, epoch.loop)]
                    if any(ctx.is_inside(call, outer) for outer in loops):
                        continue
                    if any(finder.loop_sets_epoch(outer) for outer in loops):
                        continue
                    reported.add(id(epoch.loop))
                    helper = ctx.code(call.func).strip()
                    yield self._message(
                        epoch.loop,
                        f"{epoch.name}.sampler",
                        f" (`{helper}()` builds it on one)",
                    )

    def _finding(
        self, ctx: FileContext, sampler: SamplerUse, epoch: _EpochLoop, via: str
    ) -> Finding:
        return self._message(epoch.loop, self._receiver(ctx, sampler, epoch, via))

    @staticmethod
    def _message(loop: cst.For, receiver: str | None, origin: str = "") -> Finding:
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
            f"Epoch loop iterates a shuffling DistributedSampler{origin} without calling "
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
