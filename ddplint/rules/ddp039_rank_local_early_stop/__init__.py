"""DDP039: a training loop left (early stop) on a value that differs between ranks."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp039_rank_local_early_stop.decisions import rank_local_exits


@register
class RankLocalEarlyStop(Rule):
    code = "DDP039"
    name = "rank-local-early-stop"
    severity = Severity.ERROR
    summary = "Training loop left on a metric of one rank's shard: the other ranks hang"
    explanation = """
## What it does
Flags a `break` or `return` that leaves a training loop (one whose body reaches
`backward()`) under a condition decided on a value that differs between ranks: a loss or
accuracy accumulated by an evaluation loop over a `DistributedSampler`'s loader (each
rank's own shard) that nothing combines across ranks (no collective, no helper named for
one), what an evaluation function of this file returns from such a loop, or a counter
(`patience += 1`) updated under a branch decided on such a value. A decision value that
is all-reduced or broadcast first (`dist.broadcast(stop, 0)`, `reduce_tensor(loss)`) is
left alone.

## Why is this bad?
Each rank evaluates its own 1/N of the validation set, so each sees a different loss and
its own patience counter runs out at its own epoch. The rank that stops leaves the loop,
while the others start the next epoch and wait in DDP's gradient all-reduce for a rank
that will never join: the job hangs until the NCCL timeout, or the ranks' later
collectives pair up out of order.

## Example
```python
for epoch in range(epochs):
    train_one_epoch(model, train_loader)
    val_loss = validate(model, val_loader)  # DistributedSampler, never all-reduced
    if val_loss < best:
        best, bad_epochs = val_loss, 0
    else:
        bad_epochs += 1
    if bad_epochs >= patience:
        break
```

## Use instead
```python
    val_loss = validate(model, val_loader)
    totals = torch.tensor([val_loss], device=device)
    dist.all_reduce(totals)
    val_loss = totals.item() / dist.get_world_size()  # the same value on every rank
```
or decide on rank 0 and `dist.broadcast` the decision before leaving the loop.

## Fix safety
No fix is offered: the value must be combined on the right device.

## References
- https://pytorch.org/docs/stable/notes/ddp.html
- https://pytorch.org/docs/stable/distributed.html#torch.distributed.all_reduce
"""
    flag = (
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

@torch.no_grad()
def validate(model, loader):
    total = 0.0
    for x, y in loader:
        total += (model(x) - y).pow(2).mean().item()
    return total / len(loader)

def main(model, optimizer, train_loader, val_set, epochs, patience):
    dist.init_process_group("nccl")
    val_loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
    best, bad = float("inf"), 0
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            (model(x) - y).pow(2).mean().backward()
            optimizer.step()
        val_loss = validate(model, val_loader)
        if val_loss < best:
            best, bad = val_loss, 0
        else:
            bad += 1
        if bad >= patience:
            break
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def fit(model, optimizer, train_loader, test_set, target):
    dist.init_process_group("nccl")
    test_loader = DataLoader(test_set, sampler=DistributedSampler(test_set, shuffle=False))
    while True:
        for x, y in train_loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in test_loader:
                correct += (model(x).argmax(1) == y).sum().item()
        model.train()
        if correct >= target:
            return model
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

@torch.no_grad()
def dev_accuracy(model, loader):
    hits = n = 0
    for x, y in loader:
        hits += (model(x).argmax(-1) == y).sum().item()
        n += len(y)
    return hits / n

def train(model, opt, loader, dev_set, epochs):
    dist.init_process_group("nccl")
    dev = DataLoader(dev_set, batch_size=32, sampler=DistributedSampler(dev_set))
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        if dev_accuracy(model, dev) > 0.99:
            break
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

@torch.no_grad()
def validate(model, loader, device):
    total = torch.zeros(1, device=device)
    for x, y in loader:
        total += (model(x) - y).pow(2).mean()
    dist.all_reduce(total)
    return total.item() / (len(loader) * dist.get_world_size())

def main(model, optimizer, train_loader, val_set, device, epochs):
    dist.init_process_group("nccl")
    val_loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
    best, bad = float("inf"), 0
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            (model(x) - y).pow(2).mean().backward()
            optimizer.step()
        val_loss = validate(model, val_loader, device)
        if val_loss < best:
            best, bad = val_loss, 0
        else:
            bad += 1
        if bad >= 5:
            break
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

@torch.no_grad()
def validate(model, loader):
    total = 0.0
    for x, y in loader:
        total += (model(x) - y).pow(2).mean().item()
    return total / len(loader)

def main(model, optimizer, train_loader, val_set, device, epochs):
    dist.init_process_group("nccl")
    val_loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            (model(x) - y).pow(2).mean().backward()
            optimizer.step()
        stop = torch.tensor([float(validate(model, val_loader) < 0.01)], device=device)
        dist.broadcast(stop, src=0)
        if stop.item():
            break
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(model, optimizer, train_set, eval_set, max_batches):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, sampler=sampler)
    eval_loader = DataLoader(eval_set, sampler=DistributedSampler(eval_set, shuffle=False))
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
        with torch.no_grad():
            seen = 0
            for i, (x, y) in enumerate(eval_loader):
                seen += len(y)
                if i >= max_batches:
                    break
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for decision in rank_local_exits(ctx):
            leaves = "`break` leaves" if type(decision.exit) is cst.Break else "`return` leaves"
            test = ctx.code(decision.test).strip()
            yield Finding(
                decision.exit,
                f"{leaves} the training loop when `{test}` holds, decided on {decision.value}, "
                "a value accumulated over this rank's shard of the evaluation set (its "
                "loader has a DistributedSampler) and never combined across ranks: ranks can "
                "decide differently, and the ones still training wait in DDP's next "
                "gradient all-reduce for a rank that left (a hang until the timeout); "
                "all_reduce the value, or broadcast rank 0's decision, before deciding",
            )
