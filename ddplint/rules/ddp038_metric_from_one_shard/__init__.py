"""DDP038: an evaluation metric counted over one rank's shard used as the result."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp038_metric_from_one_shard.uses import MetricUse, shard_metric_uses

_ROLES = {
    "compare": "this comparison (picking the best model, or stopping) decides on one shard's value",
    "scheduler": "the scheduler steps on one shard's value",
    "log": "the logged result is one shard's, not the whole evaluation set's",
}


@register
class MetricFromOneShard(Rule):
    code = "DDP038"
    name = "metric-from-one-shard"
    severity = Severity.WARNING
    # default: first contact, fresh103 to fresh177 (bench/realworld/first_contact.py): 65 / 21 / 11
    default = True
    summary = "Evaluation metric computed on one rank's shard and used as the result"
    explanation = """
## What it does
Finds an evaluation loop (under `torch.no_grad()` / `inference_mode()`, or after
`model.eval()`, also in a function that trains before it, or with a `no_grad` block of its
own in the loop's body) over a DataLoader
built on a `DistributedSampler` (in sight, or returned by a function of this file or of
another module of the project: `train_loader, test_loader = make_loaders()`; or, where the script
also runs in one process, a plain DataLoader built for that case: `else:` of `if
args.distributed:`) that accumulates a
value (`correct += ...`, `val_loss += ...`, `top1.update(...)` of a meter class of the
file none of whose methods combines ranks, or results collected into a list or dict made
empty before the loop (also a dict of empty lists, `metrics = {"loss": [], "acc": []}`),
`preds.append(...)`, `outputs["pred"].append(...)`,
`outputs["pred"] = torch.cat(...)`, and a metric computed from them, also through their
methods, `iou(preds.numpy())`; `len(preds)` and `preds.shape` are not one) which nothing
combines across ranks: no collective, no helper named for one (`all_reduce`,
`all_gather`, `reduce_tensor`, `gather_for_metrics`, `synchronize_between_processes`, ...;
a barrier or a helper of another module that starts the process group combines nothing)
takes it, or a value computed from it, or returns it (value by value: a gather of the
predictions does not vouch for the loss summed beside them; a combining call that names
nothing of the function vouches for everything), and reports where that value
is used as the result: compared to act on the outcome (to pick the best checkpoint, or to
stop: an `if` that only keeps the best number for a log is no decision), given to a
scheduler's `step()`, or logged (`print`, `logger.info`, `add_scalar`, `wandb.log`). A
value summed from batch values already combined across ranks (`dist.all_reduce(loss)` in
the loop, then `test_loss += loss.item()`) is not one shard's, nor is a value computed from
it. The value is followed into the callers of this file when the evaluation function
returns it (also as an element of a returned tuple: `return seen, correct`, then
`seen, correct = test(...)` and `print(correct / seen)`), or returns a value computed from
the results it collected (`return sum(losses) / len(losses)`; an entry of a returned
tuple or dict read by its key: `val_metrics["loss"]`); a caller
that combines it (or what a test of it decides) silences it, and so does a value bound
only by a call
that runs where the job is not distributed (`if args.local_rank == -1: results =
evaluate(...)`): one process reads the whole evaluation set. A sum of clock readings
(`time_meter += time.time() - tic`, a meter updated with one) times this process's own
work and is left alone. A count divided by the whole dataset's size is DDP028's.

The evaluation function is followed to its calls through names bound to it (`test_fn =
test`) and, for a method, from a base class's `self.validate(...)` to a subclass's
override. Where only some ranks evaluate (`if rank == 0: validate(...)` over a sharded
loader), the message says so: that rank scores its own 1/N, and the rest of the set is
never evaluated.

## Why is this bad?
A `DistributedSampler` gives each rank its own 1/N of the evaluation set. A loss or
accuracy accumulated over it describes that shard only: with 8 processes, rank 0's
"validation accuracy" is measured on 1/8 of the validation set. It is noisier than the
real figure, differs from rank to rank, and changes with the number of processes: the
best checkpoint, the learning-rate schedule or the reported number then depend on N.

## Example
```python
model.eval()
val_loss = 0.0
with torch.no_grad():
    for x, y in val_loader:  # DistributedSampler(val_set, shuffle=False)
        val_loss += criterion(model(x), y).item()
val_loss /= len(val_loader)
if val_loss < best:
    best = val_loss
    save(model)
```

## Use instead
```python
totals = torch.tensor([val_loss, len(val_loader)], device=device)
dist.all_reduce(totals)
val_loss = (totals[0] / totals[1]).item()
```
or gather the predictions (`all_gather`), or use a metric library that synchronises
across ranks (torchmetrics).

## Fix safety
No fix is offered: combining the values needs a tensor on the right device and the
right weights.

## References
- https://pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler
- https://pytorch.org/docs/stable/distributed.html#torch.distributed.all_reduce
"""
    flag = (
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def validate(model, loader, criterion):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += criterion(model(x), y).item()
    return total / len(loader)

def main(model, criterion, val_set, epochs):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(val_set, shuffle=False)
    val_loader = DataLoader(val_set, batch_size=32, sampler=sampler)
    best = float("inf")
    for epoch in range(epochs):
        val_loss = validate(model, val_loader, criterion)
        if val_loss < best:
            best = val_loss
            torch.save(model.module.state_dict(), "best.pt")
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def main(model, test_set, rank):
    dist.init_process_group("nccl")
    loader = DataLoader(test_set, batch_size=64, sampler=DistributedSampler(test_set))
    correct = seen = 0
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            seen += len(y)
    print(f"test accuracy {correct / seen:.3f}")
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

@torch.no_grad()
def evaluate(model, loader, criterion):
    losses = 0.0
    for x, y in loader:
        losses += criterion(model(x), y).item()
    return losses / len(loader)

def fit(model, optimizer, criterion, train_step, dev_set, epochs):
    dist.init_process_group("nccl")
    dev_loader = DataLoader(dev_set, batch_size=16, sampler=DistributedSampler(dev_set))
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
    for epoch in range(epochs):
        train_step(model, optimizer)
        plateau.step(evaluate(model, dev_loader, criterion))
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def validate(model, loader, criterion, device):
    model.eval()
    total = torch.zeros(2, device=device)
    with torch.no_grad():
        for x, y in loader:
            total += torch.stack([criterion(model(x), y) * len(y), torch.tensor(len(y.float()))])
    dist.all_reduce(total)
    return (total[0] / total[1]).item()

def main(model, criterion, val_set, device):
    dist.init_process_group("nccl")
    sampler = DistributedSampler(val_set, shuffle=False)
    loader = DataLoader(val_set, batch_size=32, sampler=sampler)
    print(validate(model, loader, criterion, device))
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader

def main(model, test_set):
    dist.init_process_group("nccl")
    loader = DataLoader(test_set, batch_size=64)  # every rank reads the whole set
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    print(correct / len(test_set))
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def reduce_mean(value, device):
    t = torch.tensor(value, device=device)
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()

@torch.no_grad()
def evaluate(model, loader):
    hits = 0
    for x, y in loader:
        hits += (model(x).argmax(1) == y).float().mean().item()
    return hits / len(loader)

def main(model, val_set, device):
    dist.init_process_group("nccl")
    loader = DataLoader(val_set, batch_size=50, sampler=DistributedSampler(val_set, shuffle=False))
    acc = reduce_mean(evaluate(model, loader), device)
    if dist.get_rank() == 0:
        print(f"val accuracy {acc:.4f}")
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        seen: set[int] = set()
        for use in shard_metric_uses(ctx):
            statement = ctx.statement(use.node)
            if id(statement) in seen:
                continue
            seen.add(id(statement))
            yield Finding(use.node, self._message(use))

    @staticmethod
    def _message(use: MetricUse) -> str:
        via = f" (returned by `{use.via}()`)" if use.via else ""
        held = "collects the results of" if use.collected else "is accumulated over"
        if use.alone:
            return (
                f"`{use.count}`{via} {held} the shard of the one rank that evaluates (its "
                "loader has a DistributedSampler: about 1/N of the evaluation set with N "
                f"processes, the rest is never evaluated): {_ROLES[use.kind]}; evaluate on "
                "every rank and all_reduce the sums and counts (or gather the results), or "
                "give the evaluation loader no DistributedSampler"
            )
        differs = ", and each rank may decide differently" if use.kind == "compare" else ""
        return (
            f"`{use.count}`{via} {held} this rank's shard only (its loader has "
            "a DistributedSampler: about 1/N of the evaluation set with N processes) and "
            f"nothing all-reduces or gathers it: {_ROLES[use.kind]}{differs}; all_reduce "
            "the sums and counts (or gather the results) first"
        )
