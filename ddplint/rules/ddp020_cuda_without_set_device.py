"""DDP020: `.cuda()` / `torch.device("cuda")` in a DDP script that never picks the GPU."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import libcst as cst

from ddplint.analysis.devices import device_arguments
from ddplint.analysis.processes import single_process_tests
from ddplint.analysis.rank_guards import single_process_branch
from ddplint.analysis.ranks import LOCAL, LOCAL_NAMES, RankClassifier, local_rank_in_scope
from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.facts import argument, keyword, string_value
from ddplint.names import dotted
from ddplint.rule import Finding, FixSpec, Rule, register

_INIT = "torch.distributed.init_process_group"
_PICKS_DEVICE = frozenset({"torch.cuda.set_device", "torch.cuda.device"})


# APIs whose `device=` names a device type, not a GPU: "cuda" there is correct.
_DEVICE_TYPE_APIS = ("torch.amp", "torch.autocast", "torch.cuda.amp", "torch.cpu.amp")
_LIBRARIES = frozenset({"torch", "numpy", "torchvision", "transformers"}) | frozenset(
    sys.stdlib_module_names
)


# Project helpers (imported from another module) that may select the GPU themselves.
_SETUP_HELPER = re.compile(
    r"set_?device|(setup|init|configure).*(dist|device|gpu|cuda|ddp)|(dist|device|gpu|cuda|ddp)"
    r".*(setup|init)",
    re.IGNORECASE,
)


def _library(qualified: str) -> bool:
    """A call into the standard library or a known library (not a project helper)."""
    return qualified.split(".")[0] in _LIBRARIES


def _is_plain_cuda(expr: cst.BaseExpression | None) -> bool:
    """`"cuda"`, or `"cuda" if ... else "cpu"`."""
    if expr is None:
        return False
    if isinstance(expr, cst.IfExp):
        return _is_plain_cuda(expr.body) or _is_plain_cuda(expr.orelse)
    return string_value(expr) == "cuda"


def _device_picks(ctx: FileContext, ranks: RankClassifier) -> Iterator[cst.CSTNode]:
    """Where the file chooses a GPU per process: `set_device`, a device index from a
    variable (`.cuda(args.gpu)`, `torch.device("cuda", local_rank)`,
    `device_ids=[local_rank]`), `CUDA_VISIBLE_DEVICES`, or a local rank handed to a helper
    of another module (which may call `set_device` itself)."""
    for call in ctx.calls:
        name = ctx.call_name(call)
        if name in _PICKS_DEVICE:
            yield call
            continue
        for value in device_arguments(ctx, call):
            if isinstance(value, (cst.Name, cst.Attribute, cst.FormattedString)):
                is_to = isinstance(call.func, cst.Attribute) and call.func.attr.value == "to"
                if ranks.device_kind(value, call) is not None or (
                    not is_to and not _bound_to_plain_cuda(ctx, value, call)
                ):
                    yield call
                    break
        if name is not None and "." in name and not _library(name):
            if _SETUP_HELPER.search(name.rpartition(".")[2]):
                yield call
                continue
            for arg in call.args:
                local_name = (dotted(arg.value) or "").rpartition(".")[2] in LOCAL_NAMES
                if local_name or ranks.kind(arg.value, call) == LOCAL:
                    yield call
                    break
    for node in ctx.nodes_of(cst.SimpleString):
        if isinstance(node, cst.SimpleString) and "CUDA_VISIBLE_DEVICES" in node.value:
            yield node


def _exclusive_branch(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> cst.If | None:
    """The `if` of which `a` and `b` lie in different branches (never both run), if any."""
    for ancestor in ctx.ancestors(a):
        if not isinstance(ancestor, cst.If) or ancestor.orelse is None:
            continue
        in_body = ctx.is_inside(a, ancestor.body)
        if in_body == ctx.is_inside(b, ancestor.body):
            continue
        if ctx.is_inside(b, ancestor) and not ctx.is_inside(b, ancestor.test):
            return ancestor
    return None


def _unset_branch(ctx: FileContext, use: cst.CSTNode, picks: list[cst.CSTNode]) -> cst.If | None:
    """The `if` whose other branch sets the default device (`torch.cuda.set_device`)
    while `use` runs on a branch that sets none, when every default-setting pick of the
    file is in such a sibling branch and `use` is not on the single-process side."""
    setters = [p for p in picks if isinstance(p, cst.Call) and ctx.call_name(p) in _PICKS_DEVICE]
    if not setters or len(setters) != len([p for p in picks if not _passes_index(ctx, p)]):
        return None
    branches = [_exclusive_branch(ctx, setter, use) for setter in setters]
    if any(branch is None for branch in branches) or single_process_branch(ctx, use):
        return None
    return branches[0]


def _passes_index(ctx: FileContext, pick: cst.CSTNode) -> bool:
    """A pick that names a device for one call (`.cuda(args.gpu)`), not for the process."""
    if not isinstance(pick, cst.Call) or ctx.call_name(pick) in _PICKS_DEVICE:
        return False
    return any(True for _ in device_arguments(ctx, pick))


def _unpicked_init(ctx: FileContext, picks: list[cst.CSTNode]) -> tuple[cst.Call, cst.If] | None:
    """An `init_process_group` on a branch where no GPU is picked, while another branch
    picks one (`if slurm: set_device(...); init(...) else: init(...)`); with the `if`."""
    for init in ctx.calls_to(_INIT):
        branches = [_exclusive_branch(ctx, pick, init) for pick in picks]
        if branches and all(branch is not None for branch in branches):
            return init, branches[0]  # type: ignore[return-value]
    return None


def _bound_to_plain_cuda(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    name = dotted(expr)
    if name is None:
        return False
    binding = ctx.facts.binding_before(name, at)
    if binding is None or binding.kind != "assign":
        return False
    value = binding.value
    if isinstance(value, cst.Call) and ctx.call_name(value) == "torch.device":
        return _is_plain_cuda(argument(value, 0, "type")) and argument(value, 1, "index") is None
    return _is_plain_cuda(value)


def _default_device_uses(ctx: FileContext) -> Iterator[cst.CSTNode]:
    """`.cuda()`, `torch.device("cuda")`, `.to("cuda")`, `device="cuda"` and
    `device = "cuda"` bindings used by `.to(device)`."""
    reported_bindings: set[int] = set()
    for call in ctx.calls:
        func = call.func
        name = ctx.call_name(call)
        if name == "torch.device":
            if _is_plain_cuda(argument(call, 0, "type")) and argument(call, 1, "index") is None:
                yield call
            continue
        if isinstance(func, cst.Attribute) and name is None:
            method = func.attr.value
            if method == "cuda" and argument(call, 0, "device") is None:
                yield call
                continue
            if method == "to":
                target = argument(call, 0, "device")
                if _is_plain_cuda(target):
                    yield call
                    continue
                if isinstance(target, cst.Name):
                    binding = ctx.facts.binding_before(target.value, call)
                    if (
                        binding is not None
                        and binding.kind == "assign"
                        and _is_plain_cuda(binding.value)
                        and id(binding.value) not in reported_bindings
                    ):
                        reported_bindings.add(id(binding.value))
                        yield binding.value
                    continue
        device = keyword(call, "device")
        if (
            device is not None
            and _is_plain_cuda(device.value)
            and not (name or "").startswith(_DEVICE_TYPE_APIS)
        ):
            yield call


def _fix(ctx: FileContext, ranks: RankClassifier) -> FixSpec | None:
    if ctx.imports.bindings.get("torch") != "torch":
        return None
    inits = list(ctx.calls_to(_INIT))
    if len(inits) != 1:
        return None
    init = inits[0]
    local_rank = local_rank_in_scope(ctx, init, ranks)
    line = ctx.parent(ctx.statement(init))
    if local_rank is None or not isinstance(line, cst.SimpleStatementLine):
        return None
    if not isinstance(ctx.parent(line), (cst.IndentedBlock, cst.Module)):
        return None
    return FixSpec(
        f"Call `torch.cuda.set_device({local_rank})` before `init_process_group`",
        insertions=((line, f"torch.cuda.set_device({local_rank})"),),
        applicability=Applicability.UNSAFE,
    )


@register
class CudaWithoutSetDevice(Rule):
    code = "DDP020"
    name = "cuda-without-set-device"
    severity = Severity.ERROR
    summary = '`.cuda()` / `torch.device("cuda")` in a DDP script that never sets the device'
    explanation = """
## What it does
In a file that initialises the process group (`init_process_group`) but never chooses a
GPU per process — no `torch.cuda.set_device(...)`, no device index from a variable
(`.cuda(local_rank)`, `torch.device("cuda", local_rank)`, `device_ids=[local_rank]`), no
`CUDA_VISIBLE_DEVICES`, and no local rank handed to a helper of another module that could
set it — flags `.cuda()` without an index, `torch.device("cuda")`, `.to("cuda")`,
`device="cuda"`, and a `device = "cuda"` variable used with `.to(device)`. Code in a
`unittest.TestCase` class that starts no process group and reads no rank is left alone:
those tests run in the one test process.

## Why is this bad?
`"cuda"` without an index means the *current* device, which is GPU 0 until
`torch.cuda.set_device` changes it. With one process per GPU and no `set_device`, every
rank puts its model and batches on GPU 0: the other GPUs stay idle, GPU 0 runs out of
memory, and NCCL may fail because several ranks use the same GPU.

## Example
```python
dist.init_process_group("nccl")
model = DDP(Net().cuda())
```

## Use instead
```python
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = DDP(Net().cuda(), device_ids=[local_rank])  # .cuda() now means cuda:local_rank
```

## Fix safety
When the function calling `init_process_group` already holds a local-rank variable, the fix
inserts `torch.cuda.set_device(local_rank)` before that call. It is unsafe: it assumes
one process per GPU on the node and that the variable is the local rank of this process.

## References
- https://pytorch.org/docs/stable/generated/torch.cuda.set_device.html
- https://pytorch.org/docs/stable/notes/cuda.html
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html
"""
    fixable = Applicability.UNSAFE
    flag = (
        """import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(4, 4).cuda())
""",
        """import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main():
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = DDP(torch.nn.Linear(4, 4).to(device))
""",
        """import torch
import torch.distributed as dist

dist.init_process_group("nccl")
device = "cuda"
model = torch.nn.Linear(4, 4).to(device)
loss_sum = torch.zeros(1, device="cuda")
dist.all_reduce(loss_sum)
""",
    )
    allow = (
        """import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(4, 4).cuda(), device_ids=[local_rank])
""",
        """import argparse
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local-rank", type=int, default=0)
args = parser.parse_args()
dist.init_process_group("nccl")
model = DDP(torch.nn.Linear(4, 4).cuda(args.local_rank), device_ids=[args.local_rank])
""",
        """import torch
import torch.distributed as dist

def evaluate(model, loader):
    correct = torch.zeros(1).cuda()
    for x, y in loader:
        correct += (model(x.cuda()).argmax(1) == y.cuda()).sum()
    dist.all_reduce(correct)
    return correct.item()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if not any(True for _ in ctx.calls_to(_INIT)):
            return
        tests = single_process_tests(ctx)
        uses = [
            use
            for use in _default_device_uses(ctx)
            if not any(ctx.is_inside(use, test) for test in tests)
        ]
        if not uses:
            return
        ranks = RankClassifier(ctx)
        picks = list(_device_picks(ctx, ranks))
        if picks:
            yield from self._unpicked_branch(ctx, uses, picks)
            return
        fix = _fix(ctx, ranks)
        for node in uses:
            yield Finding(
                node,
                "the default CUDA device is used but this file never calls "
                "torch.cuda.set_device(local_rank): every rank lands on GPU 0 (GPU 0 out "
                "of memory, or NCCL's duplicate-GPU error; the other GPUs idle)",
                fix=fix,
            )

    @staticmethod
    def _unpicked_branch(
        ctx: FileContext, uses: list[cst.CSTNode], picks: list[cst.CSTNode]
    ) -> Iterator[Finding]:
        """The uses that can run after an `init_process_group` on a branch that picks no
        GPU, where another branch picks one; and uses on a distributed branch whose sibling
        branch sets the device while theirs never does."""
        found = _unpicked_init(ctx, picks)
        for node in uses:
            branch: cst.If | None
            if found is not None and _exclusive_branch(ctx, node, found[0]) is None:
                branch = found[1]
                what = "initialises the process group without choosing a GPU"
            else:
                branch = _unset_branch(ctx, node, picks)
                what = "uses the default CUDA device without choosing a GPU"
                if branch is None:
                    continue
            test = ctx.code(branch.test).strip()
            yield Finding(
                node,
                f"the default CUDA device is used, and one branch of `if {test}:` {what} "
                "(the other branch calls set_device or passes a device index): on that path "
                "every rank lands on GPU 0; call torch.cuda.set_device(local_rank) on both "
                "paths",
            )
