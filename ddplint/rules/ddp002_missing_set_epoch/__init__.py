"""DDP002: a shuffling DistributedSampler iterated epoch after epoch without `set_epoch`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain.arguments_in_sight import true_at_every_call
from ddplint.domain.ddp_facts import is_false
from ddplint.domain.epoch_setting import builder_named_with_loop, epoch_loop_near, epoch_never_set
from ddplint.domain.loops import named_for
from ddplint.domain.object_reads import never_trained_on
from ddplint.domain.project_view import ProjectView, project_of
from ddplint.domain.random_draws import draws_an_order
from ddplint.domain.runners import one_process
from ddplint.domain.samplers import (
    SAMPLER_SHUFFLE,
    SamplerUse,
    assigned_alone,
    distributed_samplers,
    is_alias_call,
    is_evaluation_sampler,
    names_bound_to,
    returned_positions,
    shuffles,
)
from ddplint.domain.synthetic_data import synthetic_dataset
from ddplint.engine.model import all_params
from ddplint.engine.resolve import argument
from ddplint.names import dotted
from ddplint.project_files import project_root
from ddplint.rule import Finding, FixSpec, Rule, register
from ddplint.rules.ddp002_missing_set_epoch.epoch_loops import (
    EpochLoop,
    EpochLoops,
    LoaderName,
    loader_names,
    outer_loops,
)
from ddplint.rules.ddp002_missing_set_epoch.late_set_epoch import first_epoch, late_set_epochs
from ddplint.rules.ddp002_missing_set_epoch.order_free import only_order_free_passes
from ddplint.rules.ddp002_missing_set_epoch.unread_loaders import stored_unread

_SEED = 4  # DistributedSampler(dataset, num_replicas, rank, shuffle, seed, drop_last)
# What an Accelerate `Accelerator` prepares a loader with: the loader it returns sets its
# sampler's epoch at the start of every pass (`DataLoaderShard.__iter__`).
_ACCELERATOR = "accelerate.Accelerator"
_PREPARE = frozenset({"prepare", "prepare_data_loader"})


def _visible_in(ctx: FileContext, name: str, binding_node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    scope = ctx.scope(binding_node)
    if scope is ctx.scope(loop) or scope is ctx.module:
        return ctx.before(binding_node, loop) or name.startswith("self.")
    if name.startswith("self."):
        return type(ctx.scope(loop)) is cst.FunctionDef
    return False


def _rebuilt_each_pass(
    ctx: FileContext, finder: EpochLoops, sampler: SamplerUse, held: LoaderName
) -> Iterator[cst.For]:
    """Epoch loops that build `sampler` anew in every pass (themselves, or through the
    function of this file whose call in their body returns or yields the loader), over the
    same dataset with the same seed, iterate the loader `held` names, and call no
    `set_epoch`."""
    for epoch, _site in finder.epoch_loops(held.name, held.scope):
        if epoch is None or type(epoch.loop) is not cst.For or not sampler.arguments_known:
            continue
        loops = [epoch.loop, *outer_loops(ctx, epoch.loop)]
        rebuilding = _rebuilding_loop(ctx, sampler, held, loops)
        if rebuilding is None:
            continue
        if any(finder.loop_sets_epoch(loop) for loop in loops):
            continue
        dataset = argument(sampler.call, 0, "dataset")
        seed = argument(sampler.call, _SEED, "seed")
        if (
            dataset is not None
            and isinstance(dataset, (cst.Name, cst.Attribute))
            and _same_each_pass(ctx, dataset, sampler.call, rebuilding)
            and (seed is None or _same_each_pass(ctx, seed, sampler.call, rebuilding))
            and not _changed_in(ctx, dotted(dataset), rebuilding)
            and (
                not _built_by_helper(ctx, sampler, held)
                or _same_arguments(ctx, held.made, rebuilding)
            )
        ):
            yield rebuilding


def _rebuilding_loop(
    ctx: FileContext, sampler: SamplerUse, held: LoaderName, loops: list[cst.For | cst.While]
) -> cst.For | None:
    """The innermost of `loops` whose passes each build the sampler anew: the sampler's
    call is in it, or the helper call that makes the loader is in its body (not in its
    iterable: `for _, _, loader in get_loaders(files)` reads one call's loaders)."""
    helper = _built_by_helper(ctx, sampler, held)
    for loop in loops:
        if type(loop) is not cst.For:
            continue
        if ctx.is_inside(sampler.call, loop):
            return loop
        if helper and ctx.is_inside(held.made, loop.body):
            return loop
    return None


def _built_by_helper(ctx: FileContext, sampler: SamplerUse, held: LoaderName) -> bool:
    """The loader `held` names comes from a call of the function of this file that builds
    the sampler itself: each call makes a new one."""
    scope = ctx.scope(sampler.call)
    return held.made is not sampler.call and scope in ctx.resolver.callees(held.made)


def _rebound_in(ctx: FileContext, held: LoaderName, loop: cst.CSTNode) -> bool:
    """`loop` binds `held`'s name by another statement than the one that makes it (`loader =
    build_loader(stage_set)` in each pass): the loader it iterates is not that one."""
    own = ctx.statement(held.made)
    for node in ctx.nodes_within(loop, cst.Assign):
        if type(node) is not cst.Assign or node is own or ctx.scope(node) is not held.scope:
            continue
        if any(dotted(target.target) == held.name for target in node.targets):
            return True
    return False


def _prepared_by_accelerate(ctx: FileContext, held: LoaderName, loop: cst.CSTNode) -> bool:
    """Every binding of `held`'s name that reaches `loop` is what an Accelerate
    `Accelerator`'s `prepare(...)` returned (`model, opt, loader = accelerator.prepare(model,
    opt, loader)`): Accelerate's loader calls `set_epoch` on its sampler at the start of
    every pass over it."""
    bindings = ctx.resolver.reaching(held.name, loop)
    return bool(bindings) and all(
        type(b.value) is cst.Call and _accelerate_prepare(ctx, b.value) for b in bindings
    )


def _accelerate_prepare(ctx: FileContext, call: cst.Call) -> bool:
    func = call.func
    if not (type(func) is cst.Attribute and func.attr.value in _PREPARE):
        return False
    return any(
        type(v.expr) is cst.Call and ctx.call_name(v.expr) == _ACCELERATOR
        for v in ctx.resolver.values(func.value, call)
    )


def _same_arguments(ctx: FileContext, made: cst.Call, loop: cst.For) -> bool:
    """The helper call that builds the sampler is given the same values in every pass of
    `loop` (`get_loaders(train_files, args)`; not `build_loader(stages[epoch])`)."""
    return all(not arg.star and _same_each_pass(ctx, arg.value, made, loop) for arg in made.args)


def _other_samplers(
    samplers: Sequence[SamplerUse],
    held: Callable[[SamplerUse], frozenset[str]],
    sampler: SamplerUse,
) -> frozenset[str]:
    """The names that hold only other samplers of the file (`self.aux_sampler`,
    `aux_loader.sampler`): a `set_epoch` on one of them leaves `sampler`'s epoch as it is.
    `held`: a sampler's own name and `loader.sampler` for each name holding its loaders."""
    found: set[str] = set()
    for other in samplers:
        if other is not sampler and other.call is not sampler.call:
            found.update(held(other))
    return frozenset(found - held(sampler) - {""})


class _HeldNames:
    """By sampler, its own name and `loader.sampler` for each name holding one of its
    loaders (`loader_names`), each computed once."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._known: dict[int, frozenset[str]] = {}

    def __call__(self, sampler: SamplerUse) -> frozenset[str]:
        if id(sampler) not in self._known:
            loaders = loader_names(self.ctx, sampler)
            names = {sampler.name or "", *(f"{held.name}.sampler" for held in loaders)}
            self._known[id(sampler)] = frozenset(names)
        return self._known[id(sampler)]


def _dataset_changed_in(ctx: FileContext, sampler: SamplerUse, loop: cst.CSTNode) -> bool:
    """A method of the sampler's dataset is called in `loop` (`train_dataset.shuffle()`,
    `resample()`): the same indices may read other samples in each pass."""
    dataset = argument(sampler.call, 0, "dataset") if sampler.arguments_known else None
    name = dotted(dataset) if dataset is not None else None
    return name is not None and type(loop) is cst.For and _changed_in(ctx, name, loop)


def _changed_in(ctx: FileContext, name: str | None, loop: cst.For) -> bool:
    """A method of the object `name` is called in `loop` (`train_set.resample()`): each
    pass may read different samples."""
    return name is None or any(
        type(call.func) is cst.Attribute and dotted(call.func.value) == name
        for call in ctx.calls_within(loop)
    )


def _same_each_pass(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, loop: cst.For
) -> bool:
    """Nothing `expr` is computed from is bound inside `loop` (the loop variable, a
    dataset rebuilt each pass)."""
    for value in ctx.resolver.sources(expr, at):
        if type(value.expr) is cst.Call and ctx.is_inside(value.expr, loop):
            return False  # built (or computed by a call) anew in each pass
        key = dotted(value.expr) if isinstance(value.expr, (cst.Name, cst.Attribute)) else None
        if key is None:
            continue
        if any(ctx.is_inside(b.statement, loop) for b in ctx.resolver.reaching(key, value.at)):
            return False
    return True


@register
class MissingSetEpoch(Rule):
    code = "DDP002"
    name = "missing-set-epoch"
    severity = Severity.ERROR
    needs_several = False  # one process repeats its order too
    summary = "Shuffling DistributedSampler iterated every epoch without set_epoch(epoch)"
    fixable = Applicability.SAFE
    explanation = """
## What it does
Finds an epoch loop that iterates a DataLoader built on a shuffling `DistributedSampler`
(`shuffle` defaults to `True`) and never calls `set_epoch` on it: not on the sampler, not
through `loader.sampler.set_epoch(...)`, and not in a function called from the loop
(in this file or, when several files are linted together, in a sibling module such as
`engine.train_one_epoch`). Samplers built with `shuffle=False` (evaluation) are left alone,
and so is an epoch loop that goes round at most once (`range(num_epochs)` with
`num_epochs = 1`): no second epoch repeats an order, and a sampler over a dataset of a
class of this file whose `__getitem__` never reads its index (a fresh random crop on every
call): the order changes nothing. A loader the loop reads as Accelerate's
`accelerator.prepare(...)` returned it is left alone too: Accelerate's loader calls
`set_epoch` on its sampler at the start of every pass. So is a loader each of whose passes
sums over the whole of it before one optimizer step after the pass (no step inside it, nor
in what it calls: an importance estimate, a full-batch gradient): its order changes
nothing. So is a loader a project helper
builds on a DistributedSampler only under a test of one of its parameters, where the call
leaves that parameter at its default or passes the other literal (`build_dataloader(args)`
with `def build_dataloader(args, dist=False)`: a plain loader).
Also flags an epoch loop that builds a new shuffling sampler in every pass, over the same
dataset and with a seed that does not change from pass to pass, and never calls
`set_epoch` on it: in the loop itself, or through a function of the file that the loop
calls with the same arguments each pass and that returns (or, a generator, yields) a
loader on a sampler it builds (`for _, _, loader in get_loaders(files):`).
A sampler whose class a name picks on the distributed path (`sampler_cls =
DistributedSampler if distributed else RandomSampler`) counts, and so does a DataLoader
subclass of the file that builds the sampler in its `__init__` and hands it to
`super().__init__(...)`, at each construction that does not pass a flag of `__init__`
the way that skips the sampler (`TrainLoader(root, train=False)`).
An epoch loop that calls a method of the sampler's dataset in every pass
(`train_set.shuffle()`, `resample()`) is left alone: the same indices may read other
samples each time. A loader kept in a dict literal is followed to each read of its key
(`loaders["train"]`, and `loaders[phase]` in `for phase in ("train", "val"):`, whose
passes read one loader each: the loop around it is the epoch loop), unless an entry is
ever stored again or the dict changed (`loaders.update(...)`); so is a progress bar
entered as `with tqdm(loader) as bar:`, which iterates the loader it wraps.
Loaders read pass after pass with no epoch counter in sight count too: a `while` loop
around the iteration, an endless generator (`while True: for batch in loader: yield
batch`), `itertools.cycle(loader)`, or `iter(loader)` made anew inside a loop; these are
reported only when nothing in the file calls `set_epoch`. A sampler that a small factory
(of the file, or a function of another project module named for a sampler) returns as
built (`return DistributedSampler(ds, shuffle=shuffle)`) is followed to each call of the
factory, with the `shuffle` that call passes. A loader handed to a class of the file and
stored on `self` (also straight from a helper call: `Trainer(build_loader())`) is
followed into the methods reading it, and from them to the loop that calls them
(`self.train_epoch(epoch)`, or `trainer.train_epoch(epoch)` on an object of the class);
a helper that returns another helper's loader as it stands is followed too, three
returns deep. A project helper's loader bound to a name for evaluation (`test_loader`), or
built with `training=False` / `shuffle=False`, is not a training loader, and neither is a
loader only handed to evaluations (`test_accuracy(model, loader)`) or to a project class
whose object the file uses only through methods that never read it (`runner.evaluate()`).
A training sampler whose loaders this file does not iterate (built by a dataset or loader
class of a data module, or for a loop of another module) is reported where it is built when
no code of the whole project calls `set_epoch` or assigns a sampler's `epoch`, no module
imports a framework that calls `set_epoch` for you (Lightning, Accelerate, the Hugging Face
`Trainer`, Ignite, mmengine, ...), and a loop over epochs that goes round more than once
runs in the file, or in a module whose imports reach it or its package (a computed
`import_module("data." + name)` included), or that it imports. A sampler whose `shuffle`
is out of sight (a config value) is reported under `--preview`, and so is one whose
building function first draws a new random order of its data (`torch.randperm`,
`random.shuffle`, itself or through a function of its module): each build then shards a
new order, so the epochs repeat one only if the loader is built once; one whose `shuffle`
is a parameter of its factory is left to the files calling the factory. A sampler whose
loaders are each a name of one function that only loops over it there (no return, no
attribute, no call it is handed to, no closure reading it) is not: those loops are all
its passes, and this file holds no epoch loop over them (a one-pass job). A loader a
project helper builds, iterated where the job runs in one process (a script that starts no
process group, whose helper's sampler may not even build), is reported under `--preview`.
Also flags `sampler.set_epoch(epoch)` (or `loader.sampler.set_epoch(epoch)`) called with
the loop variable after the epoch's pass over the loader, or inside it (in the batch loop:
the DataLoader asked the sampler for the pass's order when the `for` started), in a loop
that starts at 0
(`range(epochs)`): each pass then reads the epoch set by the pass before it, so epochs 0
and 1 read one order. Where the loop's start is out of sight (`range(start_epoch,
epochs)`) the finding is shown under `--preview` only; `set_epoch(epoch + 1)` after the
pass, or a loop that starts at 1 or later, orders every pass differently and is left
alone. A sampler over a dataset of a class of this file whose `__init__` draws its
samples as random tensors (`self.x = torch.randn(n, d)`) and that reads no data (a smoke
test's stand-in) is reported under `--preview` only: the order of such samples teaches
nothing.

## Why is this bad?
`DistributedSampler` seeds its permutation with `seed + epoch`, and `epoch` only changes
through `set_epoch`. Without it every epoch visits the samples in the same order on every
rank: the shuffling you asked for happens once. Training still runs, and the model is
silently worse. Building a new sampler every epoch does not help: each new one starts at
epoch 0, with the same seed, so it draws the same permutation as the one before. Calling
`set_epoch(epoch)` at the end of the epoch orders the next pass with the epoch just
finished: epoch 1 repeats epoch 0's order.
`itertools.cycle` is worse still: it saves the batches of its first pass and replays
them, so the order (and each batch's random augmentation) repeats even with `set_epoch`.

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
sampler may be `None`/another sampler class at that point (a class picked by a
conditional, a DataLoader subclass), nor when the loop builds a new sampler in every pass
(`set_epoch` belongs after that construction).

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
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(train_set, model, epochs):
    dist.init_process_group("nccl")
    for epoch in range(epochs):
        sampler = DistributedSampler(train_set, drop_last=True)
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        for x, y in loader:
            model(x).sum().backward()
""",
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
        sampler.set_epoch(epoch)
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
        for x, y in loader:
            model(x).sum().backward()
        sampler.set_epoch(epoch + 1)  # orders the next pass
""",
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
        """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(train_set, model, epochs):
    dist.init_process_group("nccl")
    for epoch in range(epochs):
        sampler = DistributedSampler(train_set, seed=epoch, drop_last=True)
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        for x, y in loader:
            model(x).sum().backward()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for finding in self._findings(ctx):
            if not _runs_once(ctx, finding.node):
                yield finding

    def _findings(self, ctx: FileContext) -> Iterator[Finding]:
        finder = EpochLoops(ctx)
        reported: set[int] = set()
        samplers = distributed_samplers(ctx)
        held_names = _HeldNames(ctx)
        untraced: list[tuple[SamplerUse, bool | None]] = []  # with how each shuffles
        for sampler in samplers:
            shuffle = shuffles(ctx, sampler)
            if shuffle is False or is_evaluation_sampler(ctx, sampler):
                continue
            if _index_ignored(ctx, sampler):
                continue  # every item is a fresh random draw: the order changes nothing
            if shuffle is None:
                untraced.append((sampler, None))
                continue
            before = len(reported)
            names = loader_names(ctx, sampler)
            others = _other_samplers(samplers, held_names, sampler)
            for held in names:
                helper = _built_by_helper(ctx, sampler, held)
                if helper and _asks_for_evaluation(held.made):
                    continue  # `create_dataloader(valid_set, cfg, train=False)`
                if named_for([held.name]) == "evaluation":
                    continue  # a validation loader: its order changes no score
                if only_order_free_passes(ctx, finder, held.name):
                    continue  # each pass sums over all of it before one step
                made = held.made if helper else sampler.call
                for epoch in finder.without_set_epoch(held.name, held.scope, made, others):
                    if _rebound_in(ctx, held, epoch.loop):
                        continue  # the loop reads a loader bound elsewhere in it
                    if _prepared_by_accelerate(ctx, held, epoch.loop):
                        continue  # Accelerate's loader sets its sampler's epoch each pass
                    if _dataset_changed_in(ctx, sampler, epoch.loop):
                        continue  # `train_set.shuffle()` each pass: the indices read anew
                    if _consumer_may_set_epoch(ctx, sampler, epoch.loop):
                        continue  # `return batches, sampler`: its consumer moves the epoch
                    if id(epoch.loop) not in reported:
                        reported.add(id(epoch.loop))
                        yield self._finding(ctx, sampler, epoch, held.via)
                for loop in _rebuilt_each_pass(ctx, finder, sampler, held):
                    if id(loop) not in reported:
                        reported.add(id(loop))
                        through = ""
                        if _built_by_helper(ctx, sampler, held):
                            through = f" (through `{ctx.code(held.made.func).strip()}()`)"
                        yield Finding(
                            loop,
                            "Epoch loop builds a new shuffling DistributedSampler in every "
                            f"pass{through} and never calls `set_epoch` on it: each new "
                            "sampler starts "
                            "at epoch 0, so every epoch repeats the same sample order; call "
                            "`set_epoch(epoch)` on it once built, or build it before the loop",
                        )
                yield from self._late(ctx, finder, sampler, held, reported)
            if len(reported) == before and not _iterated_in_file(ctx, finder, sampler, names):
                untraced.append((sampler, True))
        yield from self._project_loaders(ctx, finder, reported)
        yield from self._never_set_anywhere(ctx, untraced)

    @staticmethod
    def _never_set_anywhere(
        ctx: FileContext, samplers: list[tuple[SamplerUse, bool | None]]
    ) -> Iterator[Finding]:
        """A training sampler whose loaders this file does not iterate (a data module's, a
        dataset class's), in a project where nothing ever moves a sampler's epoch and a
        loop over epochs runs in a related file: every epoch reads one order. Unproven
        where the sampler's `shuffle` is out of sight (a config's value)."""
        stem = os.path.splitext(os.path.basename(ctx.path))[0]
        project = project_of(ctx)
        closure = project.text_closure if project is not None else None
        if (
            not samplers
            or named_for([stem]) == "evaluation"
            or not epoch_never_set(ctx.path, closure)
        ):
            return  # an evaluation or test script, or a program that moves an epoch
        for sampler, shuffle in samplers:
            if not sampler.arguments_known or argument(sampler.call, _SEED, "seed"):
                continue  # a project factory's sampler; a seed that may change each build
            if sampler.loaders and all(never_trained_on(ctx, u.call) for u in sampler.loaders):
                continue  # only evaluated, or kept by objects whose called methods never read it
            if sampler.loaders and all(stored_unread(ctx, u.call) for u in sampler.loaders):
                continue  # `self.loaders.full = DataLoader(...)` that nothing ever reads
            if project is None:  # checked before the project is known: it decides
                yield Finding(  # (`CALLERS_DECIDE`: the file waits for it)
                    sampler.site,
                    "This DistributedSampler's loaders are not iterated in this file, and "
                    "no code of this project calls `set_epoch` on a sampler: if an epoch "
                    "loop elsewhere reads them, every epoch reads the same sample order",
                    unproven=True,
                )
                return
            if shuffle is None and _shuffle_param(ctx, sampler) is not None:
                # a factory: shuffling where every call in sight makes it shuffle
                # (`get_loader(ds)` with `shuffle=True` its default); else its callers'
                # files see the loops over what they get
                shuffle = _shuffles_at_every_call(ctx, sampler) or None
                if shuffle is None:
                    continue
            frame = ctx.model.frame(sampler.call)
            builder = frame.name.value if type(frame) is cst.FunctionDef else None
            loop = epoch_loop_near(ctx.path, project.text_closure, builder)
            if loop is None:
                continue  # no second epoch in sight
            where, line = loop
            unread = _builder_unnamed(
                ctx, project, frame, os.path.join(project_root(ctx.path), where)
            )
            loop_text = f"the loop at `{where}:{line}`"
            if unread is not None:
                loop_text = (
                    f"if the loop at `{where}:{line}` reads them: no file of its program "
                    f"names `{unread}`"
                )
            how = "shuffles" if shuffle else "may shuffle (its `shuffle` is out of sight)"
            drawn = type(frame) is cst.FunctionDef and draws_an_order(ctx, frame)
            unless = (
                f" (unless each pass calls `{builder}()` anew: it draws a new random order "
                f"of its data, `{ctx.code(drawn.func)}()`)"
                if drawn
                else ""
            )
            yield Finding(
                sampler.site,
                f"This DistributedSampler {how}, and no code of this project calls "
                "`set_epoch` on a sampler (nor hands its loaders to a framework that "
                "does): its epoch stays 0, so every pass over its loaders "
                f"({loop_text}) reads the same sample order on every rank{unless}; "
                "call `sampler.set_epoch(epoch)` at the start of each epoch",
                unproven=shuffle is None or bool(drawn) or unread is not None,
            )

    @staticmethod
    def _late(
        ctx: FileContext,
        finder: EpochLoops,
        sampler: SamplerUse,
        held: LoaderName,
        reported: set[int],
    ) -> Iterator[Finding]:
        """`set_epoch(epoch)` called only after the pass over the loader, or inside it once
        its iterator drew the order: proven where the
        loop starts at 0, unproven where its start is out of sight (`range(start_epoch,
        n)`), silent where it starts later (every pass then reads its own order)."""
        receivers = frozenset(n for n in (sampler.name, f"{held.name}.sampler") if n)
        for late in late_set_epochs(ctx, finder, held.name, held.scope, receivers):
            if id(late.loop) in reported or _runs_once(ctx, late.loop):
                continue
            start = first_epoch(ctx, late.loop)
            if start not in (0, None):
                continue
            reported.add(id(late.loop))
            variable = ctx.code(late.loop.target)
            when = "" if start == 0 else f"when the loop starts at {variable} = 0, "
            where = (
                f"inside the pass over `{held.name}`, after its iterator drew the pass's order"
                if late.inside
                else f"after the pass over `{held.name}`"
            )
            yield Finding(
                late.call,
                f"`{ctx.code(late.call)}` runs {where}, so each "
                "pass reads the order of the epoch set by the pass before it: "
                f"{when}epochs 0 and 1 both read the order of epoch 0 (a RandomSampler "
                "on one process draws a new order every epoch), and each later epoch "
                "reads the previous one's; call it at the start of the epoch",
                unproven=start is None,
            )

    def _project_loaders(
        self, ctx: FileContext, finder: EpochLoops, reported: set[int]
    ) -> Iterator[Finding]:
        """`loader = data.build_loader(...)`, a project helper returning a loader built on
        a shuffling DistributedSampler, iterated epoch after epoch without `set_epoch`."""
        project = project_of(ctx)
        if project is None:
            return
        for call in ctx.calls:
            if not assigned_alone(ctx, call) or _asks_for_evaluation(call):
                continue  # binds no name (`names_bound_to`): the project is not asked
            positions = project.helper_returned_loader(ctx, call)
            if not positions:
                continue
            for name in names_bound_to(ctx, call, positions):
                if named_for([name]) == "evaluation":
                    continue  # `test_set, test_loader, _ = build_dataloader(...)`
                for epoch in finder.without_set_epoch(name, ctx.scope(call), call):
                    if id(epoch.loop) in reported:
                        continue
                    reported.add(id(epoch.loop))
                    helper = ctx.code(call.func).strip()
                    finding = self._message(
                        ctx,
                        epoch.loop,
                        f"{epoch.name}.sampler",
                        f" (`{helper}()` builds it on one)",
                    )
                    # In a program that starts no process group, the helper's sampler
                    # may not even build (it asks the group for the world size).
                    yield replace(finding, unproven=one_process(ctx, epoch.loop))

    def _finding(
        self, ctx: FileContext, sampler: SamplerUse, epoch: EpochLoop, via: str
    ) -> Finding:
        receiver = self._receiver(ctx, sampler, epoch, via)
        origin = "" if receiver or epoch.is_sampler else f" (that of `{epoch.name}`)"
        finding = self._message(ctx, epoch.loop, receiver, origin)
        finding = replace(finding, rests_on=(sampler.site,))  # no harm where never built
        dataset = argument(sampler.call, 0, "dataset") if sampler.arguments_known else None
        synthetic = dataset is not None and synthetic_dataset(ctx, dataset, sampler.call)
        if not synthetic:
            return finding
        return replace(
            finding,
            message=f"{finding.message} (unproven: its dataset is random tensors drawn by "
            f"the script, {synthetic}: a smoke test's stand-in for data, whose order "
            "teaches nothing)",
            unproven=True,
        )

    @staticmethod
    def _message(
        ctx: FileContext,
        loop: cst.For | cst.While | cst.Call,
        receiver: str | None,
        origin: str = "",
    ) -> Finding:
        if receiver:
            shown = f"`{receiver}.set_epoch(epoch)`"
        else:
            shown = "`set_epoch(epoch)` on the sampler"
        if isinstance(loop, cst.Call):
            return Finding(loop, _endless_message(loop, origin))
        if isinstance(loop, cst.While):
            frame = ctx.model.frame(loop)
            what = "Loop"
            if type(frame) is cst.FunctionDef and ctx.nodes_within(frame, cst.Yield):
                what = f"Endless generator `{frame.name.value}()`"
            return Finding(
                loop,
                f"{what} iterates a shuffling DistributedSampler{origin} pass after pass and "
                "nothing in this file calls `set_epoch` on it: every pass repeats the same "
                "sample order; count the passes and call `set_epoch(n)` at the start of each",
            )
        fix = None
        if (
            receiver is not None
            and type(loop.target) is cst.Name
            and type(loop.body) is cst.IndentedBlock
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
        self, ctx: FileContext, sampler: SamplerUse, epoch: EpochLoop, via: str
    ) -> str | None:
        """What to call `set_epoch` on at the top of the loop, if it is certainly the
        DistributedSampler there (not a factory's result, which may be another sampler)."""
        if sampler.factory is not None or not sampler.arguments_known or epoch.through_object:
            return None
        if is_alias_call(ctx, sampler.call):
            return None  # another sampler class, without `set_epoch`, on some path
        value = sampler.binding_value
        if (
            sampler.name is not None
            and value is sampler.call
            and _visible_in(ctx, sampler.name, sampler.call, epoch.loop)
        ):
            return sampler.name
        inline = sampler.name is None and type(ctx.parent(sampler.call)) is cst.Arg
        if via == "sampler" and (inline or value is sampler.call):
            return f"{epoch.name}.sampler"
        return None


def _index_ignored(ctx: FileContext, sampler: SamplerUse) -> bool:
    """The sampler's dataset is, on every path, an object of a class of this file whose
    `__getitem__` never reads the index it is given (each item a fresh random crop): the
    order the sampler deals out changes nothing."""
    dataset = argument(sampler.call, 0, "dataset")
    if dataset is None:
        return False
    made = [v.expr for v in ctx.resolver.values(dataset, sampler.call) if v.leaf]
    if not made:
        return False
    for expr in made:
        if not (type(expr) is cst.Call and type(expr.func) is cst.Name):
            return False
        classes = ctx.model.classes.get(expr.func.value, [])
        if len(classes) != 1 or not _ignores_index(ctx, classes[0]):
            return False
    return True


def _ignores_index(ctx: FileContext, cls: cst.ClassDef) -> bool:
    getters = [
        f
        for f in ctx.nodes_within(cls, cst.FunctionDef)
        if type(f) is cst.FunctionDef
        and f.name.value == "__getitem__"
        and ctx.model.enclosing_class(f) is cls
    ]
    if len(getters) != 1:
        return False
    params = getters[0].params.params
    if len(params) < 2:
        return False
    index = params[1].name.value
    return index not in ctx.names_in(getters[0].body)


def _shuffle_param(ctx: FileContext, sampler: SamplerUse) -> cst.Param | None:
    """The parameter of the function building the sampler that its `shuffle` is."""
    value = argument(sampler.call, SAMPLER_SHUFFLE, "shuffle")
    frame = ctx.model.frame(sampler.call)
    if type(value) is not cst.Name or type(frame) is not cst.FunctionDef:
        return None
    return next((p for p in all_params(frame.params) if p.name.value == value.value), None)


def _shuffles_at_every_call(ctx: FileContext, sampler: SamplerUse) -> bool:
    """The sampler's `shuffle` is a parameter whose every call in sight passes `True` for
    it or leaves its default `True` (`true_at_every_call`)."""
    value = argument(sampler.call, SAMPLER_SHUFFLE, "shuffle")
    return value is not None and true_at_every_call(ctx, value)


def _iterated_in_file(
    ctx: FileContext, finder: EpochLoops, sampler: SamplerUse, names: list[LoaderName]
) -> bool:
    """This file iterates one of the sampler's loaders in an epoch loop, or holds every
    pass over each of them (each loader a local name of a function that only loops over
    it: `EpochLoops.passes_in_sight`): what happens to its order is decided here (a single
    pass, `__iter__` of a wrapper, may be repeated elsewhere; one that stays in its
    function is not)."""
    if any(
        epoch is not None
        for held in names
        for epoch, _site in finder.epoch_loops(held.name, held.scope)
    ):
        return True
    return (
        bool(names)
        and all(loader.name is not None for loader in sampler.loaders)
        and all(finder.passes_in_sight(held.name, held.scope) for held in names)
    )


def _asks_for_evaluation(call: cst.Call) -> bool:
    """The helper is told to build an evaluation loader: a keyword named for training or
    shuffling passed a literal `False` (`build_dataloader(..., training=False)`)."""
    for arg in call.args:
        if arg.keyword is None or not is_false(arg.value):
            continue
        words = set(arg.keyword.value.lower().split("_"))
        if words & {"train", "training", "shuffle"}:
            return True
    return False


def _builder_unnamed(
    ctx: FileContext, project: ProjectView, frame: cst.CSTNode, loop: str
) -> str | None:
    """What the program of the epoch loop in the file `loop` would name if it read the
    loaders of a sampler built in `frame`, when it names it nowhere (None: it may read
    them): the function building the sampler, or for a method its class (a base class
    calling `self.setup_train_loader()` names every subclass's method alike). A sampler
    built at module level, or in the loop's own file, may be read."""
    if type(frame) is not cst.FunctionDef or os.path.abspath(ctx.path) == loop:
        return None
    cls = ctx.model.enclosing_class(frame)
    if cls is None and _run_by_own_file(ctx, frame) and loop in project.text_closure(ctx.path):
        return None  # `main()` of the script that imports the loop's module
    name = cls.name.value if cls is not None else frame.name.value
    return None if builder_named_with_loop(ctx.path, project.text_closure, name, loop) else name


def _run_by_own_file(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """Code of the file outside `func` calls it, or hands it to a call (`main()` under
    `if __name__ == "__main__":`, `mp.spawn(main_worker, ...)`)."""
    name = func.name.value
    if any(not ctx.is_inside(call, func) for call in ctx.model.calls_by_name.get(name, ())):
        return True
    return any(
        type(arg.value) is cst.Name and arg.value.value == name and not ctx.is_inside(arg, func)
        for call in ctx.calls
        for arg in call.args
    )


def _consumer_may_set_epoch(
    ctx: FileContext, sampler: SamplerUse, loop: cst.For | cst.While | cst.Call
) -> bool:
    """`loop` is an endless generator's (`while True: yield from loader`), whose passes run
    as its consumer asks for batches, and the function building the sampler returns it
    beside the generator (`return batches, sampler`): the consumer may move its epoch
    between passes (`sampler.set_epoch(step)`), as some code of the project does."""
    frame = ctx.model.frame(loop)
    if not (type(loop) is cst.While and type(frame) is cst.FunctionDef):
        return False
    builder = ctx.scope(sampler.site)
    return (
        bool(ctx.nodes_within(frame, cst.Yield))
        and type(builder) is cst.FunctionDef
        and sampler.name is not None
        and bool(returned_positions(ctx, sampler.name, builder))
        and not epoch_never_set(ctx.path)
    )


def _endless_message(call: cst.Call, origin: str) -> str:
    if type(call.func) is cst.Name and call.func.value == "iter":
        return (
            f"`iter()` restarts a loader on a shuffling DistributedSampler{origin} in every "
            "pass of this loop and nothing in this file calls `set_epoch` on it: every "
            "pass repeats the same sample order; call `set_epoch(n)` before each restart"
        )
    return (
        f"`cycle()` reads a loader on a shuffling DistributedSampler{origin} endlessly: "
        "it replays the batches of its first pass, so every pass repeats the same order "
        "(and `set_epoch` cannot change it); loop over the loader and call `set_epoch(n)` "
        "at the start of each pass"
    )


def _runs_once(ctx: FileContext, loop: cst.CSTNode) -> bool:
    """The epoch loop goes round at most once (`for epoch in range(num_epochs)` with
    `num_epochs = 1`): no second epoch repeats an order."""
    if type(loop) is not cst.For or type(loop.iter) is not cst.Call:
        return False
    func = loop.iter.func
    if not (type(func) is cst.Name and func.value == "range"):
        return False
    if not 1 <= len(loop.iter.args) <= 2:
        return False
    bounds = []
    for arg in loop.iter.args:
        values = [v.expr for v in ctx.resolver.values(arg.value, loop) if v.leaf]
        if not values or not all(type(v) is cst.Integer for v in values):
            return False
        bounds.append([int(v.value, 0) for v in values if type(v) is cst.Integer])
    start = bounds[0] if len(bounds) == 2 else [0]
    return max(bounds[-1]) - min(start) <= 1
