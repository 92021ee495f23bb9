"""DDP029: `torch.cuda.device_count()` used as the number of processes of the job."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.apis import DATA_PARALLEL_CLASSES, DEVICE_COUNT, REDUCTIONS, SPAWN_FUNCTIONS
from ddplint.domain.ranks import int_literal, last_name, strip_conversion
from ddplint.domain.value_leaves import deciding_leaves
from ddplint.engine.resolve import argument
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp029_device_count_as_world_size.mode_by_count import count_gated_starts

_INIT = "torch.distributed.init_process_group"
_BATCH = re.compile(r"batch", re.IGNORECASE)
_LEARNING_RATE = re.compile(r"(^|_)(lr|learning_rate)(_|$)", re.IGNORECASE)
_DIVISIONS = (cst.Divide, cst.FloorDivide, cst.DivideAssign, cst.FloorDivideAssign)
_PRODUCTS = (cst.Multiply, cst.MultiplyAssign)
_HARM = {
    "batch": "the global batch is split over this machine's GPUs, not over the job's "
    "processes: on 2 nodes of 8 GPUs each process gets 1/8 of it and the job trains with "
    "twice the intended global batch",
    "lr": "the learning rate is scaled by this machine's GPU count, not by the number of "
    "processes: on 2 nodes of 8 GPUs it is scaled by 8 for a job of 16",
    "metric": "the sum over all processes is divided by this machine's GPU count: on 2 "
    "nodes of 8 GPUs the sum of 16 values is divided by 8 and the average reads twice "
    "the true one",
}


@register
class DeviceCountAsWorldSize(Rule):
    code = "DDP029"
    name = "device-count-as-world-size"
    severity = Severity.WARNING
    default = (
        False  # opt-in: harm needs more than one node; single-node launches are correct as launched
    )
    summary = "torch.cuda.device_count() used as the world size (wrong on more than one node)"
    explanation = """
## What it does
In a file that starts a process group (`init_process_group`), flags
`torch.cuda.device_count()` (or a name holding it) used as the number of processes of
the job: dividing a batch size by it (`args.batch_size // ngpus`), scaling a learning rate
by it (`args.lr * ngpus`), or dividing an all-reduced value by it (`all_reduce(loss);
loss / ngpus`). Not flagged: the device count used to pick a device
(`local_rank % torch.cuda.device_count()`); scripts whose job is sized by the device count
itself (`mp.spawn(..., nprocs=ngpus)`, `init_process_group(world_size=ngpus * nodes)`:
there the count is the processes per node by construction); in files that also build a
`DataParallel` (which does use every visible GPU in one process), uses that do not run
only when the job is distributed (`if args.distributed:`).

Also flags an `if` whose test is only the device count compared with 1 (`if
torch.cuda.device_count() > 1:`, `if ngpus > 1:`) around the code that starts the
process group or builds DDP (directly, or through functions of the file it calls, two
calls deep), unless that branch starts the processes itself (`mp.spawn`: one process per
visible GPU by construction).

## Why is this bad?
`device_count()` counts the GPUs this process can see on its machine. The job's world
size is the number of processes torchrun (or SLURM) started: on two nodes of 8 GPUs it is
16 while `device_count()` is 8, and `torchrun --nproc_per_node=4` on an 8-GPU machine
gives 4. A global batch split by the device count, a learning rate scaled by it, or a
metric averaged by it is then off by that factor: the same command gives a different
training on one node and on two. `dist.get_world_size()` is the number of processes.
Whether the job is distributed is the launcher's fact too: a process that torchrun or a
scheduler gives one GPU of its own sees `device_count() == 1`, skips the process group
and trains alone, so N processes train N models where one process group should train one.

## Example
```python
dist.init_process_group("nccl")
batch_per_gpu = args.global_batch // torch.cuda.device_count()
```

## Use instead
```python
dist.init_process_group("nccl")
batch_per_gpu = args.global_batch // dist.get_world_size()
```

## Fix safety
No fix is offered: the world size is known only after the process group starts.

## References
- https://pytorch.org/docs/stable/elastic/run.html
- https://pytorch.org/docs/stable/distributed.html#torch.distributed.get_world_size
"""
    flag = (
        """
import torch
import torch.distributed as dist

def main(args):
    dist.init_process_group("nccl")
    ngpus = torch.cuda.device_count()
    batch_size = args.global_batch_size // ngpus
    lr = args.lr * ngpus
    return batch_size, lr
""",
        """
import torch
import torch.distributed as dist

def reduce_mean(value):
    t = value.clone()
    dist.all_reduce(t)
    return t / torch.cuda.device_count()

def main():
    dist.init_process_group("nccl")
""",
        """
import torch
import torch.distributed as dist

def log_loss(loss, step):
    dist.init_process_group("nccl")
    reduced = loss.detach().clone()
    dist.all_reduce(reduced)
    reduced /= torch.cuda.device_count()
    print(step, reduced.item())
""",
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def setup(model):
    if torch.cuda.device_count() > 1:
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    return model
""",
    )
    allow = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def setup(model):
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        model = DDP(model.cuda(local_rank), device_ids=[local_rank])
    if torch.cuda.device_count() > 1:
        print("more than one GPU visible")
    return model
""",
        """
import os
import torch
import torch.distributed as dist

def main(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count()
    torch.cuda.set_device(local_rank)
    return args.global_batch_size // dist.get_world_size()
""",
        """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank, ngpus, args):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456",
                            rank=rank, world_size=ngpus)
    batch_size = args.batch_size // ngpus

if __name__ == "__main__":
    ngpus = torch.cuda.device_count()
    mp.spawn(worker, nprocs=ngpus, args=(ngpus, None))
""",
        """
import torch
import torch.distributed as dist
from torch import nn

def setup(args, model):
    if args.distributed:
        dist.init_process_group("nccl")
    else:  # one process drives every visible GPU
        model = nn.DataParallel(model)
    args.batch_size = args.batch_size * torch.cuda.device_count()
    return model
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if any(self._sized_by_count(ctx, call) for call in ctx.calls_to(*SPAWN_FUNCTIONS)):
            return
        inits = list(ctx.calls_to(_INIT))
        for init in inits:
            size = argument(init, 3, "world_size")
            if size is not None and self._mentions_count(ctx, size, init):
                return
        decided: set[int] = set()  # one finding per function: its first such gate
        for gate, started in count_gated_starts(ctx, lambda e, at: self._is_count(ctx, e, at)):
            frame = id(ctx.enclosing_function(gate))
            if frame in decided:
                continue
            decided.add(frame)
            yield Finding(
                gate.test,
                f"`{ctx.code(gate.test)}` decides whether {started} runs: the number of GPUs "
                "this process sees, not whether a launcher started N processes. A process "
                "given one GPU of its own (one GPU per node, or a scheduler that binds one "
                "GPU to each task) skips it, so N processes train N separate models where "
                "one process group should train one; decide from the launcher "
                '(`"WORLD_SIZE" in os.environ`, `dist.is_torchelastic_launched()`)',
            )
        if not inits:
            return
        data_parallel = any(True for _ in ctx.calls_to(*DATA_PARALLEL_CLASSES))
        for node in ctx.nodes_of(cst.BinaryOperation, cst.AugAssign):
            use = self._use(ctx, node)
            if use is not None and (not data_parallel or self._distributed_branch(ctx, node)):
                yield Finding(
                    node,
                    f"torch.cuda.device_count() used as the number of processes: {_HARM[use]}; "
                    "use dist.get_world_size()",
                )

    def _use(self, ctx: FileContext, node: cst.CSTNode) -> str | None:
        """ "batch", "lr" or "metric" when `node` divides or scales by the device count."""
        operator: cst.BaseBinaryOp | cst.BaseAugOp
        if type(node) is cst.BinaryOperation:
            operator, left, right = node.operator, node.left, node.right
        elif type(node) is cst.AugAssign:
            operator, left, right = node.operator, node.target, node.value
        else:
            return None
        if isinstance(operator, _DIVISIONS):
            if not self._is_count(ctx, right, node):
                return None
            if _names(left, _BATCH):
                return "batch"
            return "metric" if self._reduced(ctx, left, node) else None
        if isinstance(operator, _PRODUCTS):
            for factor, other in ((right, left), (left, right)):
                if self._is_count(ctx, factor, node) and _names(other, _LEARNING_RATE):
                    return "lr"
        return None

    @staticmethod
    def _distributed_branch(ctx: FileContext, node: cst.CSTNode) -> bool:
        """`node` runs only when the job is distributed (`if args.distributed:`, the
        `else` of `if local_rank == -1:`): not on a DataParallel path of the script."""
        ranks = domain_of(ctx).ranks
        for condition in ctx.flow.conditions(node):
            for term, holds in condition.terms():
                single = ranks.single_process_when(term)
                if single is not None and single != holds:
                    return True
        return False

    @staticmethod
    def _is_count(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """Every value `expr` may hold is the device count, or a constant fallback
        (`torch.cuda.device_count() if cuda else 1`), and one is the device count."""
        found = False
        for value in deciding_leaves(ctx.resolver, expr, at):
            leaf = strip_conversion(value.expr)
            if type(leaf) is cst.Call and ctx.call_name(leaf) in DEVICE_COUNT:
                found = True
            elif int_literal(leaf) is None:
                return False
        return found

    @staticmethod
    def _mentions_count(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """The value of `expr` is computed from the device count."""
        return any(
            type(v.expr) is cst.Call and ctx.call_name(v.expr) in DEVICE_COUNT
            for v in ctx.resolver.sources(expr, at)
        )

    def _sized_by_count(self, ctx: FileContext, spawn: cst.Call) -> bool:
        """`mp.spawn(fn, nprocs=ngpus)`: one process per visible GPU, on one machine."""
        count = argument(spawn, 2, "nprocs")
        return count is not None and self._mentions_count(ctx, count, spawn)

    @staticmethod
    def _reduced(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """`expr` names a tensor that an `all_reduce`/`reduce` of this function summed
        before `at`."""
        name = last_name(expr) if type(expr) is cst.Name else None
        if name is None:
            return False
        frame = ctx.scope(at)
        for call in ctx.calls_to(*REDUCTIONS):
            if ctx.scope(call) is not frame or not ctx.before(call, at) or not call.args:
                continue
            op = argument(call, None, "op")
            if op is not None and last_name(op) not in ("SUM", None):
                continue  # `op=ReduceOp.MAX`: no sum to average
            if type(call.args[0].value) is cst.Name and call.args[0].value.value == name:
                return True
        return False


def _names(expr: cst.BaseExpression, pattern: re.Pattern[str]) -> bool:
    """`expr` is a name or attribute whose last part matches `pattern`."""
    name = last_name(expr)
    return name is not None and bool(pattern.search(name))
