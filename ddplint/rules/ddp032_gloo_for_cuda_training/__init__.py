"""DDP032: the gloo backend hard-coded for a job that trains on CUDA."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain import domain_of
from ddplint.domain.apis import DDP_CLASSES
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.project_view import project_of
from ddplint.domain.runners import one_process
from ddplint.domain.value_leaves import deciding_leaves
from ddplint.engine.flow import fixed_terms
from ddplint.engine.resolve import argument
from ddplint.names import dotted
from ddplint.rule import Finding, FixSpec, Rule, register

_INIT = "torch.distributed.init_process_group"
_NEW_GROUP = "torch.distributed.new_group"
_CUDA_AVAILABLE = "torch.cuda.is_available"
# What a script checks when it targets a platform where NCCL does not exist.
_PLATFORM_WORDS = ("platform", "win32", "Windows", "darwin", "is_nccl_available")
_DEVICE_TEST = re.compile(r"cuda|cpu|gpu|device|is_available", re.IGNORECASE)


@register
class GlooForCudaTraining(Rule):
    code = "DDP032"
    name = "gloo-for-cuda-training"
    severity = Severity.WARNING
    # opt-in: first contact, fresh103 to fresh141 (bench/realworld/first_contact.py): 3 / 0 / 5
    default = False
    summary = "gloo backend hard-coded for a job that trains on CUDA: use NCCL"
    fixable = Applicability.UNSAFE
    explanation = """
## What it does
Flags `init_process_group("gloo")` (or `backend="gloo"`, or a name that always holds it)
in a file whose DDP model is on CUDA unconditionally: the wrap is given `device_ids`, or
the module it wraps was moved with `.cuda(...)`, neither under a test about the device
(`torch.cuda.is_available()`, `args.gpu is not None`). Not flagged: a backend that
depends on anything (`"nccl" if torch.cuda.is_available() else "gloo"`), a script that
also creates an NCCL group (gloo then serves CPU-side collectives), a script that checks
the platform (NCCL exists only on Linux), a script that never uses CUDA, and one that
never trains: no `backward()`, and the DDP model neither returned to callers nor handed
to a function (a sampling script running the model forward). Handed to a function of
another project module that runs `backward()`, it trains; handed only to functions out
of sight, which may train it or not, the finding is unproven.

## Why is this bad?
With gloo, each gradient all-reduce of a CUDA model is staged through host memory and the
CPU, instead of going GPU to GPU over NVLink or InfiniBand as NCCL does. On one process
nothing is communicated; on N processes every step waits for that slower exchange, and
the job scales much worse than it would with NCCL.

## Example
```python
dist.init_process_group("gloo")
torch.cuda.set_device(local_rank)
model = DDP(model.cuda(local_rank), device_ids=[local_rank])
```

## Use instead
```python
dist.init_process_group("nccl")
```

## Fix safety
The fix replaces `"gloo"` by `"nccl"`. It is unsafe: NCCL exists only on Linux with NVIDIA
GPUs, and collectives the script issues on CPU tensors would then need a gloo group.

## References
- https://pytorch.org/docs/stable/distributed.html#which-backend-to-use
"""
    flag = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model):
    dist.init_process_group("gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return DDP(model.cuda(local_rank), device_ids=[local_rank])
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

BACKEND = "gloo"

def worker(rank, world_size, model):
    dist.init_process_group(backend=BACKEND, rank=rank, world_size=world_size)
    return DDP(model.to(rank), device_ids=[rank])
""",
        """
import torch
import torch.distributed as dist

def setup(rank, world_size, net):
    dist.init_process_group('gloo', init_method="env://", rank=rank, world_size=world_size)
    model = net.cuda(rank)
    return torch.nn.parallel.DistributedDataParallel(model)
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, local_rank):
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend)
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        model = model.cuda(local_rank)
    return DDP(model)
""",
        """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model):
    dist.init_process_group("gloo")
    return DDP(model)
""",
        """
import sys
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, local_rank):
    dist.init_process_group("gloo" if sys.platform == "win32" else "nccl")
    torch.cuda.set_device(local_rank)
    return DDP(model.cuda(local_rank), device_ids=[local_rank])
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        inits = list(ctx.calls_to(_INIT))
        if not inits or self._other_backends(ctx, inits):
            return
        # a group started only where CUDA is there: a wrap that needs it too is on CUDA
        cuda_only = all(_needs_cuda(ctx, init) for init in inits)
        if not self._trains_on_cuda(ctx, cuda_only):
            return
        if any(word in ctx.source for word in _PLATFORM_WORDS):
            return
        trains = _trains(ctx)
        if trains is False:
            return  # a sampling or evaluation script: no gradient all-reduce to slow down
        for init in inits:
            backend = argument(init, 0, "backend")
            if backend is None or one_process(ctx, init):
                continue  # a job of one process exchanges nothing (`mp.spawn(nprocs=1)`)
            literals = [v.expr for v in deciding_leaves(ctx.resolver, backend, init)]
            if not literals or not all(_is_gloo(v) for v in literals):
                continue
            fix = None
            if type(backend) is cst.SimpleString:
                fix = FixSpec(
                    "Use the NCCL backend",
                    replacements=((backend, backend.value.replace("gloo", "nccl")),),
                    applicability=Applicability.UNSAFE,
                )
            yield Finding(
                backend,
                "Process group backend hard-coded to gloo in a job that puts its model on "
                "CUDA: every gradient all-reduce is staged through host memory instead of "
                "going GPU to GPU, so each step of N processes waits on a much slower "
                'exchange than with NCCL; use "nccl"'
                + (
                    ""
                    if trains
                    else " (unproven: the DDP model is only handed to functions "
                    "out of sight, which may or may not train it)"
                ),
                fix=fix,
                unproven=trains is None,
            )

    def _trains_on_cuda(self, ctx: FileContext, cuda_only: bool) -> bool:
        """A DDP wrap of the file takes a CUDA model on every path: it is given
        `device_ids`, or the module it wraps was moved with `.cuda(...)`, outside any test
        about the device; with `cuda_only` (the process group starts only where CUDA is
        available), a test that CUDA is available does not count."""
        for wrap in ctx.calls_to(*DDP_CLASSES):
            if self._conditional_on_cuda(ctx, wrap, cuda_only):
                continue
            ids = argument(wrap, 1, "device_ids")
            if ids is not None and not (type(ids) is cst.Name and ids.value == "None"):
                return True
            module = argument(wrap, 0, "module")
            if module is not None and any(
                type(v.expr) is cst.Call
                and type(v.expr.func) is cst.Attribute
                and v.expr.func.attr.value == "cuda"
                and not self._conditional_on_cuda(ctx, v.expr, cuda_only)
                for v in ctx.resolver.values(module, wrap)
            ):
                return True
        return False

    @staticmethod
    def _conditional_on_cuda(ctx: FileContext, node: cst.CSTNode, cuda_only: bool) -> bool:
        """`node` runs under a test about the device (`torch.cuda.is_available()`,
        `args.gpu is not None`, `not args.cpu`, `device.type == "cuda"`); with
        `cuda_only`, other than one that CUDA is available."""
        return any(
            _DEVICE_TEST.search(ctx.code(c.test))
            and not (cuda_only and _cuda_available(ctx, c.test, c.holds))
            for c in ctx.flow.conditions(node)
        )

    @staticmethod
    def _other_backends(ctx: FileContext, inits: list[cst.Call]) -> bool:
        """Another group of the script uses a backend other than gloo (a CPU-side gloo
        group beside the NCCL one)."""
        groups = [(c, argument(c, 0, "backend")) for c in inits]
        groups += [(c, argument(c, None, "backend")) for c in ctx.calls_to(_NEW_GROUP)]
        for call, backend in groups:
            if backend is None:
                continue
            for value in ctx.resolver.values(backend, call):
                if value.leaf and not _is_gloo(value.expr) and _text(value.expr) is not None:
                    return True
        return False


def _needs_cuda(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs only where CUDA is available (under `if torch.cuda.is_available():`)."""
    return any(_cuda_available(ctx, c.test, c.holds) for c in ctx.flow.conditions(node))


def _cuda_available(ctx: FileContext, test: cst.BaseExpression, holds: bool) -> bool:
    """`test` holding `holds` says CUDA is available (`torch.cuda.is_available()`)."""
    return any(
        value and type(term) is cst.Call and ctx.call_name(term) == _CUDA_AVAILABLE
        for term, value in fixed_terms(test, holds)
    )


def _text(expr: cst.BaseExpression) -> str | None:
    if type(expr) is cst.SimpleString and isinstance(expr.evaluated_value, str):
        return expr.evaluated_value.lower()
    name = dotted(expr)
    return name.rpartition(".")[2].lower() if name and "Backend" in name else None


def _is_gloo(expr: cst.BaseExpression) -> bool:
    return _text(expr) == "gloo"


def _trains(ctx: FileContext) -> bool | None:
    """The file runs `backward()`, returns its DDP model to its callers (a setup helper:
    they train it), or hands it to a function of another project module that runs
    `backward()`: True; else whether something out of sight may train it: None where it
    hands the model to a function, False where it does neither (a sampling script that
    only runs the model forward)."""
    if domain_of(ctx).backward.sites:
        return True
    facts = facts_of(ctx)
    for node in ctx.nodes_of(cst.Return):
        returned = node.value if type(node) is cst.Return else None
        if returned is not None and facts.is_ddp_model(returned, node):
            return True
    handed = [
        call for call in ctx.calls if any(facts.is_ddp_model(arg.value, call) for arg in call.args)
    ]
    project = project_of(ctx)
    if project is not None and any(project.helper_runs_backward(ctx, c) for c in handed):
        return True  # `learn.runEpoch(model, trainset)`: a project function that trains it
    return None if handed else False
