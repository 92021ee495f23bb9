"""DDP021: forward through the DDP wrapper on one rank only."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import facts_of, is_false, keyword
from ddplint.domain.model_layers import ModelLayers
from ddplint.domain.no_sync import controls_sync, unsynced_block
from ddplint.domain.one_rank_calls import (
    global_model_site,
    guarded_site,
    method_site,
    one_rank_guard,
    other_branch_calls,
)
from ddplint.domain.project_view import project_of
from ddplint.domain.rank_evidence import RankEvidence, rank_evidence
from ddplint.engine.resolve import argument_for
from ddplint.names import dotted
from ddplint.rule import Finding, FixSpec, Rule, register


@register
class RankLocalDDPForward(Rule):
    code = "DDP021"
    name = "rank-local-ddp-forward"
    severity = Severity.ERROR
    # opt-in: first contact, fresh103 to fresh141 (bench/realworld/first_contact.py): 2 / 2 / 2
    default = False
    summary = "Forward through the DDP wrapper on one rank only (e.g. rank-0 evaluation)"
    explanation = """\
## What it does
Flags a forward call through a `DistributedDataParallel` wrapper (`model(x)`) that only
some ranks execute: under `if rank == 0:` / `if is_main_process():`, after an `if rank
!= 0: return`, or inside a function (`evaluate(model, loader)`) that this file only
calls under such a condition with the DDP model, or that reads the module-level DDP
model and is only called under such a condition (`estimate_loss()` in nanoGPT-style
scripts), or inside a method reading the instance's DDP model (`self.model(x)` in a
trainer's `validate`) whose every call in this file (`self.validate()` in its class, and
`trainer.validate()` elsewhere) runs under such a condition. A function of another
project module called so with the DDP model, which runs the model it is handed
(`evaluate(model, val_loader)` in `engine.py` calling `model(images)` on every call), is
reported at the call; a parameter run under a rank condition of its own function (`def
validate(model, ...): if dist.get_rank() == 0: ... model(images)`) is reported where it
runs when a caller in another project module hands it the DDP model (a file checked
alone, with no project, shows it as unproven).

Left alone: a loop that deals its iterations out by rank (`if i % world_size != rank:
continue`: every rank runs the body on its share), and a forward with gradients off
(`torch.no_grad()`) through the wrapper of a model that certainly has no buffers (built
by a class of this file that registers none and holds only layers without buffers, such
as `nn.Linear`, `nn.Embedding`, `nn.LayerNorm`, or an `nn.Sequential` of such layers):
DDP then has nothing to broadcast. The finding is proven only when the model certainly
has buffers (BatchNorm layers, built here or by a class or function of another project
module, or a class of this file that registers a buffer), or when
the forward's output reaches `backward()` with DDP's gradient synchronisation on (rank 0
alone running training steps through the wrapper, an LR finder say: DDP's backward
all-reduces the gradients whatever the buffers); a model from a hub or a library, whose
buffers the project cannot see, evaluated without a backward, is reported as unproven
(shown with `--preview`).

## Why is this bad?
DDP's forward is not purely local. With `broadcast_buffers=True` (the default) and a
model that has buffers (BatchNorm running statistics, for instance), the forward
broadcasts the buffers from rank 0: a collective. When only rank 0 runs it, rank 0 waits
for peers that never join and the job hangs until the NCCL watchdog or gloo timeout, or
the broadcast pairs with an unrelated collective the other ranks issue later.

## Example
```python
if dist.get_rank() == 0:
    evaluate(model, val_loader)   # evaluate() calls model(x): the DDP wrapper
```

## Use instead
```python
if dist.get_rank() == 0:
    evaluate(model.module, val_loader)   # the bare model: no collectives
```
or run the evaluation on every rank (each on its shard) and `all_reduce` the metrics.

## Fix safety
For a forward written directly under the rank condition, the fix calls `model.module(...)`
instead of `model(...)`. It is unsafe: `model` must be the DDP wrapper on every path
reaching that line. No fix is offered for a forward inside a helper function.

## References
- https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html
- https://pytorch.org/docs/stable/notes/ddp.html
"""
    fixable = Applicability.UNSAFE
    flag = (
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = DDP(build_model().cuda(local_rank), device_ids=[local_rank])
master_process = dist.get_rank() == 0

@torch.no_grad()
def estimate_loss(batches):
    model.eval()
    losses = [model(x, y).item() for x, y in batches]
    model.train()
    return sum(losses) / len(losses)

for it in range(1000):
    if it % 100 == 0 and master_process:
        print(estimate_loss(val_batches))
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def evaluate(net, loader):
    net.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (net(x.cuda()).argmax(1) == y.cuda()).sum().item()
    return correct

def main(model, val_loader, local_rank):
    model = DDP(model, device_ids=[local_rank])
    if dist.get_rank() == 0:
        print(evaluate(model, val_loader))
""",
        """\
import torch
import torch.distributed as dist
import torch.nn as nn

def main(net, batch, local_rank):
    model = nn.parallel.DistributedDataParallel(net, device_ids=[local_rank])
    if local_rank == 0:
        with torch.no_grad():
            preview = model(batch)
        print(preview.shape)
""",
        """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as Wrap

def validate(model, loader):
    if dist.get_rank() != 0:
        return None
    return sum(model(x).sum().item() for x, _ in loader)

def run(net, loader, device):
    ddp = Wrap(net, device_ids=[device])
    return validate(ddp, loader)
""",
    )
    allow = (
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def evaluate(net, loader):
    with torch.no_grad():
        return sum(net(x).sum().item() for x, _ in loader)

def main(model, val_loader, local_rank):
    model = DDP(model, device_ids=[local_rank])
    model_without_ddp = model.module
    if dist.get_rank() == 0:
        print(evaluate(model_without_ddp, val_loader))
        print(evaluate(model.module, val_loader))
""",
        """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def evaluate(net, loader, device):
    total = torch.zeros(2, device=device)
    with torch.no_grad():
        for x, y in loader:
            total[0] += (net(x).argmax(1) == y).sum()
            total[1] += y.numel()
    dist.all_reduce(total)
    return (total[0] / total[1]).item()

def main(model, val_loader, local_rank):
    model = DDP(model, device_ids=[local_rank])
    acc = evaluate(model, val_loader, local_rank)
    if dist.get_rank() == 0:
        print(f"accuracy {acc:.3f}")
""",
        """\
import copy
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, batch, local_rank):
    ema = copy.deepcopy(net)
    model = DDP(net, device_ids=[local_rank])
    if dist.get_rank() == 0:
        with torch.no_grad():
            print(ema(batch).mean())
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        facts = facts_of(ctx)
        if not facts.ddp_wraps:
            yield from _handed_in(ctx)
            return
        if all(is_false(_kw_value(w, "broadcast_buffers")) for w in facts.ddp_wraps):
            return  # no buffer broadcast in forward: nothing collective to hang on
        buffers = ModelLayers(ctx)
        evidence = rank_evidence(ctx)
        buffer_free = all(buffers.wraps_buffer_free_model(w) for w in facts.ddp_wraps)
        buffered = any(buffers.wraps_buffered_model(w) for w in facts.ddp_wraps)
        for call in ctx.calls:
            func = call.func
            if not isinstance(func, (cst.Name, cst.Attribute)):
                continue
            if type(func) is cst.Attribute and func.attr.value == "module":
                continue
            if type(func) is cst.Name and func.value in ctx.functions:
                continue
            if ctx.qualname(func) is not None:
                finding = _through_helper(ctx, call, evidence, buffered, buffer_free)
                if finding is not None:
                    yield finding
                continue
            evaluation = domain_of(ctx).loops.is_evaluation(call)
            if buffer_free and evaluation:
                continue  # no buffers and no gradients: DDP's forward issues no collective
            # DDP's forward is collective only when the model has buffers: through a model
            # whose buffers are not known (a class of another module) it is not proven to
            # hang, unless its output reaches a backward (the gradient all-reduce).
            guard = one_rank_guard(ctx, call)
            if guard is not None and other_branch_calls(ctx, guard, call):
                continue  # `if rank == 0: ... model(x) else: ... model(x)`: every rank runs it
            wraps = _wraps_held(ctx, func, call)
            if wraps and evaluation and all(buffers.wraps_buffer_free_model(w) for w in wraps):
                continue  # this wrapper's model has no buffers: nothing collective
            held_buffered = any(buffers.wraps_buffered_model(w) for w in wraps) or (
                not wraps and buffered
            )
            if guard is not None and facts.is_ddp_model(func, call):
                name = ctx.code(func)
                fix = None
                if not _is_param(ctx, func, call):
                    fix = FixSpec(
                        f"Call `{name}.module(...)`",
                        replacements=((func, f"{name}.module"),),
                        applicability=Applicability.UNSAFE,
                    )
                said, buffers_unknown = _said(ctx, call, held_buffered, call)
                yield Finding(
                    call,
                    f"forward through the DDP wrapper `{name}` runs on one rank only: "
                    f"{said}; call `{name}.module(...)` instead",
                    fix=fix,
                    unproven=buffers_unknown or not _traced(ctx, evidence, call, guard),
                )
                continue
            if guard is None and type(func) is cst.Attribute:
                site = method_site(ctx, func, call)
                if site is not None:
                    name = ctx.code(func)
                    said, buffers_unknown = _said(ctx, call, held_buffered, site)
                    yield Finding(
                        call,
                        f"forward through the DDP wrapper `{name}` runs on one rank only "
                        f"(this method is only called under a rank condition, "
                        f"`{ctx.code(site.func)}()`): {said}; call "
                        f"`{name}.module(...)` instead",
                        unproven=buffers_unknown or not _traced(ctx, evidence, site),
                    )
                    continue
            if guard is None and type(func) is cst.Name:
                site = global_model_site(ctx, func, call)
                if site is not None:
                    said, buffers_unknown = _said(ctx, call, held_buffered, site)
                    yield Finding(
                        call,
                        f"forward through the DDP wrapper `{func.value}` runs on one rank "
                        f"only (this function, reading the global DDP model, is only called "
                        f"under a rank condition): {said}; call "
                        f"`{func.value}.module(...)` instead",
                        unproven=buffers_unknown or not _traced(ctx, evidence, site),
                    )
                    continue
                guarded = guarded_site(ctx, func, call)
                if guarded is not None:
                    chain = guarded.calls
                    # a call on the way with gradients off: this path's output trains nothing
                    graded = not any(domain_of(ctx).loops.is_evaluation(c) for c in chain)
                    handed = _wraps_among(ctx, guarded.model, chain[-1])
                    if handed:  # the wrappers the rank-local call site may hand in
                        if (evaluation or not graded) and all(
                            buffers.wraps_buffer_free_model(w) for w in handed
                        ):
                            continue  # its model has no buffers: nothing collective
                        held_buffered = any(buffers.wraps_buffered_model(w) for w in handed)
                    said, buffers_unknown = _said(ctx, call, held_buffered, chain[-1], graded)
                    yield Finding(
                        call,
                        f"forward through the DDP wrapper `{func.value}` runs on one rank "
                        f"only (this function is called under a rank condition with the DDP "
                        f"model): {said}; pass `model.module` instead",
                        unproven=buffers_unknown or not _traced(ctx, evidence, chain[-1]),
                    )


def _wraps_held(ctx: FileContext, func: cst.BaseExpression, call: cst.Call) -> list[cst.Call]:
    """The DDP wraps of the file that `func` holds where `call` runs it, when every value
    it may hold there is one of them (`self.head = DDP(nn.Linear(...))`); else none: which
    model it is, is not known here."""
    held = [v for v in ctx.resolver.values(func, call) if v.leaf]
    wraps = _wraps_among(ctx, func, call)
    return wraps if held and len(wraps) == len(held) else []


def _wraps_among(ctx: FileContext, expr: cst.BaseExpression, at: cst.Call) -> list[cst.Call]:
    """The DDP wraps of the file among the values `expr` may hold at `at` (where it holds
    the bare model, `classifier = DDP(classifier)` under `if args.ddp:` not taken, its
    forward is no collective)."""
    wraps = facts_of(ctx).ddp_wraps
    held = [v.expr for v in ctx.resolver.values(expr, at) if v.leaf]
    return [v for v in held if type(v) is cst.Call and any(v is wrap for wrap in wraps)]


def _handed_in(ctx: FileContext) -> Iterator[Finding]:
    """Forwards, on one rank only, of a parameter that callers in other project modules
    hand a DDP model (`def test(model, ...): if opts.rank == 0: ... model(images)` in
    `test.py`, called from `main.py` with the wrapper). Proven when some caller's wrap
    certainly has buffers there, or the output reaches a synchronised backward."""
    project = project_of(ctx)
    evidence: RankEvidence | None = None
    for call in ctx.calls:
        func = call.func
        if type(func) is not cst.Name:
            continue
        binding = facts_of(ctx).reaching_binding(func.value, call)
        if binding is None or binding.kind != "param":
            continue
        owner = binding.owner
        if type(owner) is not cst.FunctionDef:
            continue
        guard = one_rank_guard(ctx, call)
        if guard is None or other_branch_calls(ctx, guard, call):
            continue
        if project is None:  # checked alone: its callers decide (`CALLERS_DECIDE`)
            yield Finding(
                call,
                f"`{func.value}(...)` runs on one rank only: if callers hand in a DDP wrapper, "
                f"{_harm(False, False)}; call `{func.value}.module(...)` instead",
                unproven=True,
            )
            continue
        if not project.passes_elsewhere(ctx, owner, func.value, _ddp_model):
            continue
        trains = _synced_training_forward(ctx, call)
        buffered = project.passes_elsewhere(ctx, owner, func.value, _buffered_ddp_model)
        evidence = evidence or rank_evidence(ctx)
        yield Finding(
            call,
            f"forward through the DDP wrapper `{func.value}` (callers in other modules pass "
            f"the DDP model) runs on one rank only: {_harm(trains, buffered)}; call "
            f"`{func.value}.module(...)` instead",
            unproven=not (buffered or trains)
            or (not trains and _paired_by_next_forward(ctx, call))
            or not _traced(ctx, evidence, call, guard),
        )


def _ddp_model(ctx: FileContext, value: cst.BaseExpression, at: cst.Call) -> bool:
    return facts_of(ctx).is_ddp_model(value, at)


def _buffered_ddp_model(ctx: FileContext, value: cst.BaseExpression, at: cst.Call) -> bool:
    """`value` holds at `at` a DDP wrap of this file whose model certainly has buffers."""
    wraps = facts_of(ctx).ddp_wraps
    layers = ModelLayers(ctx)
    return any(
        v.expr in wraps and type(v.expr) is cst.Call and layers.wraps_buffered_model(v.expr)
        for v in ctx.resolver.values(value, at)
    )


def _through_helper(
    ctx: FileContext, call: cst.Call, evidence: RankEvidence, buffered: bool, buffer_free: bool
) -> Finding | None:
    """`call`, on one rank only, runs a function of another project module that runs the
    DDP model it is handed as a model (`evaluate(model, loader)` under `if rank == 0:`,
    `evaluate` calling `model(x)`). Proven when that model certainly has buffers."""
    project = project_of(ctx)
    if project is None or buffer_free:
        return None
    guard = one_rank_guard(ctx, call)
    if guard is None or other_branch_calls(ctx, guard, call):
        return None
    facts = facts_of(ctx)
    for param in project.helper_forwarded_params(ctx, call):
        handed = argument_for(call, param)
        if (
            handed is None
            or not facts.is_ddp_model(handed, call)
            or facts.is_unwrapped_ddp(handed, call)  # `m.module if isinstance(m, DDP) else m`
        ):
            continue
        model, callee = ctx.code(handed), ctx.code(call.func)
        return Finding(
            call,
            f"`{callee}(...)` runs the forward of the DDP wrapper `{model}` it is handed, on "
            f"one rank only: {_harm(False, buffered)}; pass `{model}.module` instead",
            unproven=not buffered
            or _paired_by_next_forward(ctx, call)
            or not _traced(ctx, evidence, call, guard),
        )
    return None


def _synced_training_forward(ctx: FileContext, call: cst.Call) -> bool:
    """The forward's output reaches a `backward()` that runs wherever the forward does (no
    condition of its own: not `if split == "train":` in a step shared with validation),
    with DDP's gradient synchronisation on (not in a `no_sync()` block, in a function
    that does not control it). A forward with gradients off (`torch.no_grad()`) builds no
    graph for a backward to reach."""
    if domain_of(ctx).loops.is_evaluation(call):
        return False
    if unsynced_block(ctx, call) is not None or controls_sync(ctx, ctx.scope(call)):
        return False
    sites = domain_of(ctx).backward.sites
    index = ctx.memo(_sites_by_node)
    # The backward calls whose call or flow holds `call`: those at `call` or above it.
    reaching = {n for node in (call, *ctx.ancestors(call)) for n in index.get(id(node), ())}
    around = {id(c.gate) for c in ctx.flow.conditions(call)}
    for number in sorted(reaching):
        if all(id(c.gate) in around for c in ctx.flow.conditions(sites[number].call)):
            return True
    return False


def _sites_by_node(ctx: FileContext) -> dict[int, list[int]]:
    """By node id, the numbers (in `Backward.sites`) of the backward calls that are that
    node or hold it in their flow (`Backward.flow` with dependencies): found once per file,
    not once per forward asked (quadratic in a large file)."""
    backward = domain_of(ctx).backward
    index: dict[int, list[int]] = {}
    for number, site in enumerate(backward.sites):
        for node in (site.call, *(step.node for step in backward.flow(site, dependencies=True))):
            numbers = index.setdefault(id(node), [])
            if not numbers or numbers[-1] != number:
                numbers.append(number)
    return index


def _said(
    ctx: FileContext, call: cst.Call, buffered: bool, site: cst.CSTNode, graded: bool = True
) -> tuple[str, bool]:
    """What the forward `call` issues (`_harm`), and whether its harm is unknown: asked
    only for a finding, since whether the forward trains is the costly question. Without
    `graded`, the rank-local path reaches it with gradients off: it trains nothing there.
    A forward that trains nothing issues one buffer broadcast, harmless where the other
    ranks' next collective is their next training forward (`_paired_by_next_forward`,
    from `site`, the rank-local statement): unknown then, as the last iteration decides."""
    trains = graded and _synced_training_forward(ctx, call)
    unknown = not trains and (not buffered or _paired_by_next_forward(ctx, site))
    return _harm(trains, buffered), unknown


def _paired_by_next_forward(ctx: FileContext, site: cst.CSTNode) -> bool:
    """`site` runs inside a loop that trains (`is_training_loop`), only on some iterations
    (`_skips_iterations`), and the first statement after it, going round the loop's body,
    that trains or issues a collective trains: the other ranks' next collective is their
    next training forward, whose buffer broadcast pairs with rank 0's (DDP then skips rank
    0's own next one). Only an evaluation in the last iteration, which the schedule
    decides, leaves it unmatched."""
    domain = domain_of(ctx)
    for ancestor in ctx.ancestors(site):
        if type(ancestor) is cst.FunctionDef:
            return False
        if not isinstance(ancestor, cst.For | cst.While):
            continue
        if not domain.loops.is_training_loop(ancestor):
            continue
        if not _skips_iterations(ctx, site, ancestor):
            return False  # it runs in the last iteration too, where nothing pairs with it
        body = ancestor.body
        if type(body) is not cst.IndentedBlock:
            return False
        statements = list(body.body)
        index = next(i for i, s in enumerate(statements) if ctx.is_inside(site, s))
        for statement in statements[index + 1 :] + statements[:index]:
            calls = ctx.calls_within(statement)
            if any(domain.loops.reaches_backward(c) for c in calls):
                return True
            if any(domain.collectives.issues(c) for c in calls):
                return False
        return False
    return False


def _skips_iterations(ctx: FileContext, site: cst.CSTNode, loop: cst.For | cst.While) -> bool:
    """`site` runs, within `loop`, under a test that is neither a rank test nor a mode check
    (`epoch % 5 == 0`, `if is_best:`): whether the last iteration runs it is unknown."""
    ranks = domain_of(ctx).ranks
    for condition in ctx.flow.conditions(site):
        if not ctx.is_inside(condition.gate, loop.body):
            continue
        for term, _ in condition.terms():
            if not ranks.is_rank_test(term, condition.gate) and not ranks.is_mode_check(term):
                return True
    return False


def _harm(trains: bool, buffered: bool) -> str:
    """What the rank-local forward issues that the other ranks do not."""
    if trains:
        return (
            "its output reaches `backward()`, and DDP's backward all-reduces the gradients "
            "(a collective the other ranks do not issue here), so this hangs or pairs with "
            "an unrelated collective of theirs"
        )
    if buffered:
        return (
            "the model holds buffers (BatchNorm statistics), which DDP's forward broadcasts "
            "(a collective the other ranks do not issue here): it pairs with their next "
            "collective instead, a hang once training has ended and a mismatch when that is "
            "a barrier or an all-reduce"
        )
    return (
        "DDP's forward broadcasts buffers (a collective) when the model has buffers, so "
        "this can hang"
    )


def _traced(
    ctx: FileContext, evidence: RankEvidence, node: cst.CSTNode, guard: cst.CSTNode | None = None
) -> bool:
    """The rank gate of `node` (the one at `guard` when given) tests a traced rank value
    (`ddplint.domain.rank_evidence`), not only a name; a decorator or an unknown gate is
    taken as traced."""
    for gate in domain_of(ctx).gates.gates(node):
        if guard is None or gate.node is guard:
            return evidence.gate_traced(gate)
    return True


def _is_param(ctx: FileContext, func: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`func` is a parameter (or not bound here): renaming it to `.module` is unsafe."""
    name = dotted(func)
    if name is None:
        return True
    binding = facts_of(ctx).reaching_binding(name, at)
    return binding is None or binding.kind == "param"


def _kw_value(call: cst.Call, name: str) -> cst.BaseExpression | None:
    arg = keyword(call, name)
    return arg.value if arg is not None else None
