"""DDP045: a training script that shards its data across processes but never wraps the
model in DDP nor synchronises gradients."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.apis import DDP_CLASSES, OTHER_DISTRIBUTED_WRAPPERS, SAMPLER_CLASSES
from ddplint.domain.ddp_facts import dropped_as_made, facts_of
from ddplint.domain.gradient_sync import reduces_gradients_by_hand
from ddplint.domain.optimised_data import optimises_data_only
from ddplint.domain.project_view import project_of
from ddplint.domain.runners import one_process
from ddplint.domain.samplers import distributed_samplers, is_evaluation_sampler
from ddplint.domain.scripts import is_script
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp045_model_never_wrapped.evidence import (
    backward_elsewhere,
    imported_texts,
    syncs_by_hand,
    wrap_mentions,
    wrapper_elsewhere,
)


@register
class ModelNeverWrapped(Rule):
    code = "DDP045"
    name = "model-never-wrapped"
    severity = Severity.ERROR
    # opt-in since round 80 (fresh193's hand-written gather/scatter sync, fixed after it):
    # first contact, fresh103 to fresh193 (bench/realworld/first_contact.py): 4 / 2 / 0,
    # the last 19 sets 1 / 1 / 0, under the bar
    default = False
    summary = "Data sharded across processes, but the model is never wrapped in DDP"
    explanation = """\
## What it does
Flags the training `backward()` of a script (a module with an `if __name__ == "__main__":`
block, or whose training loop runs at its top level, as in a script run with `torchrun -m`)
that runs distributed, builds a `DistributedSampler` and an optimizer, and trains,
when neither the script nor any project module it imports (read from their text) mentions
a data-parallel wrapper (`DistributedDataParallel`, FSDP, DeepSpeed, Horovod, Accelerate,
Lightning, `ZeroRedundancyOptimizer`, a comm hook, pipeline or RPC parallelism) or a
collective given the model's gradients or parameters (`dist.all_reduce(p.grad)`). A
mention only in an imported module makes the finding unproven (shown under `--preview`);
one in the script itself silences it, and so does an imported module that hands gradients
to a reduction or sends them (a hand-written ring: `dist.send(p.grad, dst)`). A script
with no `backward()` of its own that hands its training loader and its optimizer to a
function of another project module, where an imported module calls `backward()`, is
reported at that call (silent when an imported module mentions a wrapper: the function may
wrap the model it is given). Code that runs only when the job is not distributed is left
alone, and so is a `backward()` whose function steps only optimizers it built over tensors
it made trainable itself (`inputs = torch.randn(..., requires_grad=True)`, then
`optim.Adam([inputs])`: synthetic images recovered from a frozen teacher, adversarial
inputs): it trains no model, so there are no copies to drift apart. Also flags, in any
distributed module, a wrapper dropped as soon as it is made
(`DistributedDataParallel(model, ...).module`, or `model = DDP(model, ...)` followed, with
no use of `model` in between, by `model = model.module`): reported at the wrap, unless
the file hands the model's gradients or parameters to a collective itself.

## Why is this bad?
Every process builds its own model, computes gradients on its own shard (the sampler gives
each process 1/N of the data) and steps its own optimizer: nothing averages the gradients,
so the N copies drift apart. What rank 0 saves or evaluates was trained on 1/N of the
data; the run is N independent trainings, not one trained N times faster. No error is
raised.

## Example
```python
dist.init_process_group("nccl")
model = build_model().cuda(local_rank)
optimizer = torch.optim.AdamW(model.parameters())
loader = DataLoader(train_set, sampler=DistributedSampler(train_set), batch_size=32)
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
model = DDP(build_model().cuda(local_rank), device_ids=[local_rank])
```

## Fix safety
No fix is offered: where the wrap belongs (before the optimizer or not, with which
`find_unused_parameters`) is the author's choice.

## References
- https://pytorch.org/docs/stable/notes/ddp.html
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html
"""
    flag = (
        """\
import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(train_set, build_model):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = build_model().cuda(local_rank)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

if __name__ == "__main__":
    main(None, None)
""",
        """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def train(model, loader, optimizer):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

if __name__ == "__main__":
    dist.init_process_group("gloo")
    dataset = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    sampler = DistributedSampler(dataset, drop_last=True)
    train(model, DataLoader(dataset, batch_size=8, sampler=sampler), optimizer)
""",
        """\
import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

class Trainer:
    def __init__(self, model, dataset):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters())
        self.loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))

    def fit(self):
        for x, y in self.loader:
            self.optimizer.zero_grad()
            torch.nn.functional.mse_loss(self.model(x), y).backward()
            self.optimizer.step()

if __name__ == "__main__":
    dist.init_process_group("nccl")
    Trainer(torch.nn.Linear(4, 1).cuda(int(os.environ["LOCAL_RANK"])), None).fit()
""",
    )
    allow = (
        """\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

def main(train_set, build_model):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(build_model().cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    sampler = DistributedSampler(train_set, shuffle=True, drop_last=True)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

if __name__ == "__main__":
    main(None, None)
""",
        """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def average_gradients(model):
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
        p.grad /= dist.get_world_size()

def main(train_set, model):
    dist.init_process_group("gloo")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    sampler = DistributedSampler(train_set, drop_last=True)
    for x, y in DataLoader(train_set, batch_size=32, sampler=sampler):
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        average_gradients(model)
        optimizer.step()

if __name__ == "__main__":
    main(None, None)
""",
        """\
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.utils.data import DataLoader, DistributedSampler

if __name__ == "__main__":
    dist.init_process_group("nccl")
    dataset = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    model = FSDP(torch.nn.Linear(4, 1).cuda())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        optimizer.step()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        yield from _discarded_wrappers(ctx)
        if not _sharded_script(ctx):
            return
        here, elsewhere = wrap_mentions(ctx)
        if here or reduces_gradients_by_hand(ctx):
            return  # a project module may sync the gradients itself (a hand-written ring)
        domain = domain_of(ctx)
        if not domain.backward.sites:
            yield from _trained_by_project_function(ctx, elsewhere)
            return
        for site in domain.backward.sites:
            call = site.call
            if domain.loops.is_evaluation(call) or one_process(ctx, call):
                continue
            if optimises_data_only(ctx, call):
                continue  # it trains inputs against a model whose weights never change
            yield Finding(
                call,
                "this script shards its data across processes (DistributedSampler) but "
                "never wraps the model in DistributedDataParallel (nor FSDP) and never "
                "all-reduces gradients: each of the N processes steps its own copy of the "
                "model on its 1/N of the data and the copies drift apart (rank 0's model "
                "saw only its shard); wrap the model in DDP before training",
                unproven=elsewhere,
                rests_on=tuple(ctx.calls_to(*SAMPLER_CLASSES)),  # no harm where none is built
            )
            return


def _discarded_wrappers(ctx: FileContext) -> Iterator[Finding]:
    """`DistributedDataParallel(model, ...).module`: the wrapper is dropped as soon as it is
    made, so no forward runs through it and its reducer never all-reduces a gradient (the
    constructor's one broadcast of rank 0's weights is all it does)."""
    if syncs_by_hand(ctx):
        return
    for call in ctx.calls_to(*DDP_CLASSES):
        dropped = dropped_as_made(ctx, ctx.parent(call))
        unwrapped = None if dropped else _unwrapped_next(ctx, call)
        if not (dropped or unwrapped):
            continue
        if one_process(ctx, call):
            continue
        how = (
            "`DistributedDataParallel(...).module` keeps the inner model"
            if dropped
            else f"the next use of `{unwrapped}` rebinds it to its `.module`"
        )
        yield Finding(
            call,
            f"the DDP wrapper is dropped as soon as it is made ({how}): no forward runs "
            "through it, so no gradient is "
            "ever all-reduced; each of the N processes steps its own copy with its own "
            "gradients, and the copies drift apart where their data differ; train through "
            "the wrapper and use `.module` only to save or evaluate",
        )


def _unwrapped_next(ctx: FileContext, call: cst.Call) -> str | None:
    """`model = DDP(model, ...)` followed in its block by `model = model.module`, with no
    other use of `model` in between: the only reference to the wrapper is replaced by its
    inner model (SAM-Adapter's trainer). The name rebound, else None."""
    assign = ctx.parent(call)
    if type(assign) is not cst.Assign or len(assign.targets) != 1:
        return None
    target = ctx.code(assign.targets[0].target).strip()
    line = ctx.parent(assign)
    if type(line) is not cst.SimpleStatementLine:
        return None
    block = ctx.parent(line)
    if not isinstance(block, cst.IndentedBlock | cst.Module):
        return None
    statements = list(block.body)
    for statement in statements[statements.index(line) + 1 :]:
        small = statement.body[0] if type(statement) is cst.SimpleStatementLine else None
        if (
            type(small) is cst.Assign
            and len(small.targets) == 1
            and ctx.code(small.targets[0].target).strip() == target
        ):
            value = small.value
            unwraps = (
                type(value) is cst.Attribute
                and value.attr.value == "module"
                and ctx.code(value.value).strip() == target
            )
            return target if unwraps else None
        if target.split(".")[0] in {n.split(".")[0] for n in ctx.names_in(statement)}:
            return None  # read (or kept) before: the wrapper may live on
    return None


def _sharded_script(ctx: FileContext) -> bool:
    """A script (a `__main__` block) of a distributed job that builds a
    DistributedSampler and an optimizer, and wraps nothing itself (no DDP, FSDP, DeepSpeed
    or Horovod call, no project helper returning a DDP model)."""
    facts = facts_of(ctx)
    if not facts.is_distributed or facts.helper_wraps or not any(ctx.calls_to(*SAMPLER_CLASSES)):
        return False
    if any(ctx.calls_to(*DDP_CLASSES, *OTHER_DISTRIBUTED_WRAPPERS)):
        return False
    loops = domain_of(ctx).loops
    if not any(loops.is_optimizer_class(call) for call in ctx.calls):
        return False
    return is_script(ctx.module) or _trains_at_top_level(ctx)


def _trains_at_top_level(ctx: FileContext) -> bool:
    """The module's own top-level code calls `backward()` (a nanoGPT-style script run as
    `torchrun -m scripts.train`, its training loop outside any function): it runs as a
    program though it has no `__main__` block."""
    return any(
        type(ctx.model.frame(site.call)) is cst.Module for site in domain_of(ctx).backward.sites
    )


def _trained_by_project_function(ctx: FileContext, elsewhere: bool) -> Iterator[Finding]:
    """A script with no `backward()` of its own that hands a training loader of its
    DistributedSampler and its optimizer to a function of another project module, when a
    module it imports calls `backward()`: reported at that call. Silent where an imported
    module mentions a wrapper (the function may wrap the model it is given); unproven where
    one mentions a collective on the model and a project function the script calls may
    issue a collective."""
    project = project_of(ctx)
    texts = imported_texts(ctx)
    if project is None or not backward_elsewhere(texts) or wrapper_elsewhere(texts):
        return
    loops = domain_of(ctx).loops
    loaders = {
        loader.name
        for sampler in distributed_samplers(ctx)
        if not is_evaluation_sampler(ctx, sampler)
        for loader in sampler.loaders
        if loader.name is not None
    }
    for call in ctx.calls:
        names = {a.value.value for a in call.args if type(a.value) is cst.Name}
        if not names & loaders or one_process(ctx, call):
            continue
        optimizers = [
            a.value
            for a in call.args
            if any(
                type(v.expr) is cst.Call and loops.is_optimizer_class(v.expr)
                for v in ctx.resolver.values(a.value, call)
            )
        ]
        if not optimizers or project.resolve(ctx, call) is None:
            continue
        helper = ctx.code(call.func).strip()
        unproven = elsewhere and any(project.helper_issues_collective(ctx, c) for c in ctx.calls)
        yield Finding(
            call,
            f"this script shards its data across processes (DistributedSampler) and hands "
            f"the loader and the optimizer to `{helper}()`, but the model is never wrapped in "
            "DistributedDataParallel (nor FSDP) and no gradient is all-reduced on the way: "
            "each of the N processes steps its own copy of the model on its 1/N "
            "of the data and the copies drift apart (rank 0's model saw only its shard); "
            "wrap the model in DDP before training",
            unproven=unproven,
        )
        return
