"""DDP064: an attribute of the wrapped model read on the DDP wrapper, which lacks it."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.oom import handler_types
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp064_wrapper_attribute.wrapper_attributes import WRAPPER_ATTRIBUTES

# Handlers that catch a missing attribute (`except AttributeError:`, `except Exception:`).
_CATCHES = frozenset({"AttributeError", "Exception", "BaseException"})
# Calls that give the wrapper members of its own (`ddp.register_buffer("x", t)`).
_REGISTERS = frozenset({"register_buffer", "register_parameter", "register_module", "add_module"})


@register
class WrapperAttribute(Rule):
    code = "DDP064"
    name = "wrapper-attribute"
    severity = Severity.ERROR
    needs_several = False  # a wrapper of one process lacks the attribute too
    # opt-in: new in session 44, with no first-contact evidence yet (its `--select=ALL`
    # findings in the next judged sets decide: bench/realworld/first_contact.py)
    default = False
    summary = "An attribute of the wrapped model read on the DDP wrapper: AttributeError"
    explanation = """
## What it does
Flags `model.generate(...)`, `model.encode_image(x)`, `model.config` and any other
attribute read on a name that holds torch's `DistributedDataParallel(...)`, built in the
file, when the attribute is neither `nn.Module`'s nor `DistributedDataParallel`'s own
(`parameters()`, `state_dict()`, `module`, `no_sync()`, `device_ids`, ...). Also where the
name holds the wrapper on one path only (`if args.distributed: model = DDP(model)`): the
read fails exactly when the job runs on several processes.

Left alone: private names (`_x`), an attribute the file sets on the wrapper (`model.epoch
= 0`) or registers on it, a read under a test of the name (`if hasattr(model, "generate"):`,
`isinstance(model, DDP)`) or in a `try` that catches AttributeError, a name that may hold a
subclass of DDP or a project wrapper (which may forward attributes), and a read on a
branch where the name cannot hold the wrapper.

## Why is this bad?
The wrapper is a module of its own whose only submodule is `module`, the model it wraps.
`nn.Module.__getattr__` looks only in the wrapper's own parameters, buffers and
submodules, so a method or attribute of the wrapped model (`generate`, `encode_image`,
`reset_states`, `config`) is not there: `AttributeError: 'DistributedDataParallel' object
has no attribute 'generate'`. On one process, where the script keeps the bare model, the
same line works; it fails the first time the job runs on N, often in an evaluation that
runs after the first epoch.

## Example
```python
model = Captioner(vocab)
if args.distributed:
    model = DDP(model.cuda(), device_ids=[local_rank])
...
captions = model.generate(images, max_len=20)
```

## Use instead
```python
bare = model.module if isinstance(model, DDP) else model
captions = bare.generate(images, max_len=20)
```
(generation, feature extraction and other methods besides `forward` need no gradient
synchronisation; a training step that needs it must go through the wrapper's forward)

## Fix safety
No fix is offered: whether the call should run through the bare model, or through the
wrapper's forward so that DDP synchronises its gradients, depends on what it does.

## References
- https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
"""
    flag = (
        """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, images, local_rank):
    dist.init_process_group("nccl")
    model = DDP(model.cuda(), device_ids=[local_rank])
    return model.generate(images)
""",
        """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def evaluate(model, images, texts, distributed, local_rank):
    if distributed:
        dist.init_process_group("nccl")
        model = DDP(model, device_ids=[local_rank])
    features = model.encode_image(images)
    return features @ model.encode_text(texts).T
""",
        """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

class Trainer:
    def __init__(self, net, local_rank):
        dist.init_process_group("nccl")
        self.model = DDP(net.cuda(), device_ids=[local_rank])

    def embeddings(self, tokens):
        vocab = self.model.config.vocab_size
        return torch.nn.functional.one_hot(tokens, vocab)
""",
    )
    allow = (
        """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, images, local_rank):
    dist.init_process_group("nccl")
    model = DDP(model.cuda(), device_ids=[local_rank])
    model.module.generate(images)
    return model.state_dict(), model.parameters()
""",
        """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, images, local_rank):
    dist.init_process_group("nccl")
    model = DDP(model.cuda(), device_ids=[local_rank])
    bare = model.module if isinstance(model, DDP) else model
    if hasattr(model, "generate"):
        model.generate(images)
    return bare.generate(images)
""",
        """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, local_rank):
    dist.init_process_group("nccl")
    model = DDP(model.cuda(), device_ids=[local_rank])
    model.epoch = 0
    try:
        model.reset_states()
    except AttributeError:
        model.module.reset_states()
    return model.epoch, model.find_unused_parameters
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if "DistributedDataParallel" not in ctx.source:
            return  # torch's wrapper is named wherever it is built
        facts = facts_of(ctx)
        wrappers = facts.torch_wrapper_names
        if not wrappers:
            return
        set_on_wrapper = _set_on(ctx, wrappers)
        for node in ctx.nodes_of(cst.Attribute):
            assert type(node) is cst.Attribute
            attr = node.attr.value
            receiver = dotted(node.value)
            if (
                receiver not in wrappers
                or attr.startswith("_")
                or attr in WRAPPER_ATTRIBUTES
                or (receiver, attr) in set_on_wrapper
                or _stored(ctx, node)
            ):
                continue
            held = facts.torch_wrappers(node.value, node)
            if held is None or _guarded(ctx, node, receiver):
                continue
            wraps, always = held
            # the finding holds only where a wrap can run (`args.distributed = False`
            # before `if args.distributed: model = DDP(model)` leaves none)
            yield Finding(node, _message(receiver, attr, always), rests_on=tuple(wraps))


def _message(receiver: str, attr: str, always: bool) -> str:
    where = (
        f"`{receiver}` holds the DistributedDataParallel wrapper here"
        if always
        else f"`{receiver}` holds the DistributedDataParallel wrapper where the job is "
        "distributed (the bare model elsewhere, where this line works)"
    )
    return (
        f"`{receiver}.{attr}` reads an attribute the DDP wrapper does not have: {where}, "
        "whose only submodule is `module`, so this raises AttributeError "
        f"('DistributedDataParallel' object has no attribute '{attr}'); read it on "
        f"`{receiver}.module`"
    )


def _set_on(ctx: FileContext, wrappers: frozenset[str]) -> set[tuple[str, str]]:
    """(name, attribute) pairs the file sets on a wrapper name (`model.epoch = 0`) or
    registers on it (`model.register_buffer("mask", m)`)."""
    found: set[tuple[str, str]] = set()
    for node in ctx.nodes_of(cst.Attribute):
        assert type(node) is cst.Attribute
        receiver = dotted(node.value)
        if receiver in wrappers and _stored(ctx, node):
            found.add((receiver, node.attr.value))
    for call in ctx.calls:
        func = call.func
        if (
            type(func) is cst.Attribute
            and func.attr.value in _REGISTERS
            and dotted(func.value) in wrappers
            and call.args
            and type(call.args[0].value) is cst.SimpleString
        ):
            name = call.args[0].value.evaluated_value
            if isinstance(name, str):
                found.add((dotted(func.value) or "", name))
    return found


def _stored(ctx: FileContext, node: cst.Attribute) -> bool:
    """`node` is assigned to or deleted (`model.epoch = 0`, `del model.cache`)."""
    parent = ctx.parent(node)
    while isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.StarredElement)):
        parent = ctx.parent(parent)
    if isinstance(parent, (cst.AssignTarget, cst.Del)):
        return True
    return isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node


def _guarded(ctx: FileContext, node: cst.CSTNode, receiver: str) -> bool:
    """The read runs where the job is one process (`else:` of `if args.distributed:`),
    under a test that reads the name (`hasattr(model, "x")`, `isinstance(model, DDP)`) or
    whose other branch unwraps it (`if distributed: model.module.step() else:
    model.step()`: this side is the bare model's), or in a `try` whose handler catches
    AttributeError."""
    if domain_of(ctx).gates.single_process(node):
        return True
    unwrapped = f"{receiver}.module"
    for condition in ctx.flow.conditions(node):
        if receiver in set(ctx.names_in(condition.test)):
            return True
        gate = condition.gate
        other: cst.CSTNode | None = None
        if isinstance(gate, (cst.If, cst.IfExp)):
            other = gate.orelse if condition.holds else gate.body
        if other is not None and unwrapped in set(ctx.names_in(other)):
            return True
    parent = ctx.parent(node)
    while parent is not None:
        if type(parent) is cst.Try and ctx.is_inside(node, parent.body):
            for handler in parent.handlers:
                caught = [dotted(t) for t in handler_types(handler)] or ["BaseException"]
                if any(n in _CATCHES for n in caught):
                    return True
        parent = ctx.parent(parent)
    return False
