"""DDP004: an optimizer built from a module's parameters before the module is wrapped."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.apis import OPTIMIZER_HELPER
from ddplint.facts import argument, last_name
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

_SAME_OBJECT_METHODS = frozenset(
    {"to", "cuda", "cpu", "float", "half", "bfloat16", "double", "train", "eval", "requires_grad_"}
)
_WRAPPERS = frozenset({"torch.nn.parallel.DistributedDataParallel"})


def _wrapped_name(expr: cst.BaseExpression | None) -> str | None:
    """`model` for `model`, `model.cuda(rank)`, `model.to(device)`."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in _SAME_OBJECT_METHODS
    ):
        expr = expr.func.value
    return dotted(expr) if expr is not None else None


def _mentions(ctx: FileContext, expr: cst.CSTNode, module: str) -> bool:
    prefix = module + "."
    for node in ctx.walk(expr):
        if isinstance(node, (cst.Name, cst.Attribute)):
            name = dotted(node)
            if name is not None and (name == module or name.startswith(prefix)):
                return True
    return False


def _params_mention(ctx: FileContext, call: cst.Call, module: str) -> bool:
    params = argument(call, 0, "params")
    if params is None:
        return False
    if _mentions(ctx, params, module):
        return True
    name = dotted(params)
    if name is not None:
        return any(_mentions(ctx, value, module) for value in ctx.values_of(name, call))
    return False


def _constructor_calls(ctx: FileContext, scope: cst.CSTNode, module: str) -> list[cst.Call]:
    """For `self.model` wrapped in a method other than `__init__`: the calls of the class's
    `__init__`, which ran before."""
    if not module.startswith("self.") or not isinstance(scope, cst.FunctionDef):
        return []
    if scope.name.value == "__init__":
        return []
    owner = ctx.parent(ctx.parent(scope) or scope)
    if not isinstance(owner, cst.ClassDef) or not isinstance(owner.body, cst.IndentedBlock):
        return []
    return [
        call
        for statement in owner.body.body
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__"
        for call in ctx.calls_within(statement)
    ]


@register
class OptimizerBeforeWrap(Rule):
    code = "DDP004"
    name = "optimizer-before-wrap"
    severity = Severity.INFO
    summary = "Optimizer built from a module's parameters before the module is wrapped"
    explanation = """
## What it does
Flags an optimizer constructed from the parameters of a module that is wrapped in
`DistributedDataParallel` only afterwards (`opt = AdamW(model.parameters())` followed by
`model = DDP(model)`), including an optimizer built by a helper that receives the module
(`build_optimizer(model)`). A scheduler built from that optimizer is covered by the same
finding.

## Why is this bad?
With DDP this order is harmless: DDP keeps the module's own `Parameter` objects, so the
optimizer updates the parameters the wrapper uses (the maintainers say either order is fine,
pytorch#59147). It becomes a real bug when the wrapper is swapped for
`FullyShardedDataParallel`, which replaces the parameters with flattened shards: an
optimizer built before the wrap then updates tensors the model no longer uses. Building the
optimizer after the wrap works for every wrapper, hence the low severity.

## Example
```python
model = Net().cuda(local_rank)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
model = DDP(model, device_ids=[local_rank])
```

## Use instead
```python
model = Net().cuda(local_rank)
model = DDP(model, device_ids=[local_rank])
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
```

## Fix safety
No fix is offered: moving statements across the wrap may change other code in between.

## References
- https://github.com/pytorch/pytorch/issues/59147
- https://pytorch.org/docs/stable/fsdp.html
"""
    flag = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
model = torch.nn.Linear(8, 2).cuda(local_rank)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
model = DDP(model, device_ids=[local_rank])
""",
        """
import torch
import torch.distributed as dist
from torch import nn, optim

def setup(net, local_rank):
    dist.init_process_group("nccl")
    groups = [{"params": net.backbone.parameters(), "lr": 1e-4}, {"params": net.head.parameters()}]
    opt = optim.SGD(groups, lr=1e-2, momentum=0.9)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=90)
    net = nn.parallel.DistributedDataParallel(net.to(local_rank), device_ids=[local_rank])
    return net, opt, sched
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as Wrap

def build_optimizer(model, lr):
    decay = [p for n, p in model.named_parameters() if not n.endswith("bias")]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}], lr=lr)

def main(model, local_rank):
    dist.init_process_group("nccl")
    optimizer = build_optimizer(model, 1e-3)
    model = Wrap(model, device_ids=[local_rank])
""",
    )
    allow = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl")
model = torch.nn.Linear(8, 2).cuda(local_rank)
model = DDP(model, device_ids=[local_rank])
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, teacher, local_rank):
    dist.init_process_group("nccl")
    teacher_opt = torch.optim.SGD(teacher.parameters(), lr=0.1)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, local_rank):
    dist.init_process_group("nccl")
    model_ema = torch.optim.swa_utils.AveragedModel(model)
    ddp_model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(ddp_model.parameters())
    return model_ema, optimizer
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for wrap in (*ctx.facts.ddp_wraps, *ctx.facts.helper_wraps):
            module = _wrapped_name(argument(wrap, 0, "module"))
            if module is None:
                continue
            scope = ctx.scope(wrap)
            earlier = [c for c in ctx.calls_within(scope) if ctx.before(c, wrap)]
            for call in earlier:
                if self._builds_optimizer(ctx, call, module):
                    if self._rebound_between(ctx, module, call, wrap):
                        continue
                elif not self._returns_optimizer_and(ctx, call, module):
                    continue
                yield self._finding(call, module)
            for call in _constructor_calls(ctx, scope, module):
                if self._builds_optimizer(ctx, call, module):
                    yield self._finding(call, module)

    @staticmethod
    def _finding(call: cst.Call, module: str) -> Finding:
        return Finding(
            call,
            f"Optimizer built from the parameters of `{module}` before it is wrapped "
            "in DistributedDataParallel: harmless for DDP (it keeps the same Parameter "
            "objects), but wrong if the wrapper becomes FSDP, which flattens "
            "parameters; build the optimizer after the wrap",
        )

    @staticmethod
    def _returns_optimizer_and(ctx: FileContext, call: cst.Call, module: str) -> bool:
        """`model, opt = build(cfg)`: a helper of this file that builds an optimizer, whose
        result is what `module` is bound to."""
        if not isinstance(call.func, cst.Name):
            return False
        defs = ctx.functions.get(call.func.value, [])
        if not any(
            ctx.domain.loops.is_optimizer_class(c) for f in defs for c in ctx.calls_within(f)
        ):
            return False
        statement = ctx.statement(call)
        if not isinstance(statement, cst.Assign) or statement.value is not call:
            return False
        return any(
            isinstance(node, (cst.Name, cst.Attribute)) and dotted(node) == module
            for target in statement.targets
            for node in ctx.walk(target.target)
        )

    def _builds_optimizer(self, ctx: FileContext, call: cst.Call, module: str) -> bool:
        if ctx.domain.loops.is_optimizer_class(call):
            return _params_mention(ctx, call, module)
        func = call.func
        name = last_name(func)
        if name is None or not any(_mentions(ctx, arg.value, module) for arg in call.args):
            return False
        if isinstance(func, cst.Name):
            defs = ctx.functions.get(name, [])
            if defs:
                return any(
                    ctx.domain.loops.is_optimizer_class(inner)
                    for f in defs
                    for inner in ctx.calls_within(f)
                )
        return bool(OPTIMIZER_HELPER.search(name))

    def _rebound_between(
        self, ctx: FileContext, module: str, start: cst.CSTNode, end: cst.CSTNode
    ) -> bool:
        """Whether `module` is bound to another object between `start` and `end`."""
        for binding in ctx.bindings_of(module, end):
            if binding.kind == "param":
                continue
            statement = binding.statement
            if not (ctx.before(start, statement) and ctx.before(statement, end)):
                continue
            if ctx.is_inside(end, statement):
                continue
            if _wrapped_name(binding.value) == module:
                continue
            value = binding.value
            if (
                isinstance(value, cst.Call)
                and ctx.call_name(value) == "torch.nn.DataParallel"
                and _wrapped_name(argument(value, 0, "module")) == module
            ):
                continue  # the single-process fallback: never runs where the DDP wrap does
            return True
        return False
