"""DDP060: any error of DDP training caught and let pass, so one rank leaves the others
waiting."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.oom import catches_broad, oom_path_swallowed
from ddplint.domain.project_view import project_of
from ddplint.domain.runners import every_rank, one_process
from ddplint.engine.flow import calls_exit
from ddplint.engine.resolve import argument
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp060_swallowed_error.training_calls import first_training_call

_CATCH = frozenset({"loguru.logger.catch"})
_STOP_WORDS = re.compile(r"\b(?:raise|exit|_exit|abort|quit)\b")


@register
class SwallowedError(Rule):
    code = "DDP060"
    name = "swallowed-error"
    severity = Severity.ERROR
    summary = "Every error of DDP training caught and let pass: one rank fails, the others hang"
    explanation = """
## What it does
Flags an `except Exception` (or `except BaseException`, `except RuntimeError`, a bare
`except:`) whose `try` block runs DDP training steps on every rank (a `backward()`
through a DDP model, a function of this file handed the DDP model that runs one, or a
function of this file that does one of these, such as the `main()` of
`try: main() except Exception: traceback.print_exc()`), when the handler neither
re-raises nor exits (no `raise`, no `sys.exit`/`os._exit` anywhere in it, and no `finally`
that stops). Also flags loguru's `@logger.catch` (whose default swallows the error) on a
function that trains that way, unless it is given `reraise=True` or an `onerror`.

Left alone: handlers of a named error (`except ValueError`, `except KeyboardInterrupt`),
a handler in the training loop that leaves the pass (`except Exception: continue`
before the `backward()` is DDP011's),
a `try` around collectives but no training step (`try: loss = all_reduce_mean(loss)
except: pass` is mostly a fallback for a run without a process group),
a handler that singles out an out-of-memory error (DDP012 judges those), a handler that
re-raises on any path, stores the error for a later `raise` in the same function, a
`try` that only some ranks run (under a rank test) or that runs where the job is not
distributed. Where the callers of the function are out of sight, or the model of the
`backward()` comes from out of sight (a trainer method handed `model`), the finding is
unproven (`--preview`).

## Why is this bad?
When a worker exits with an error, torchrun (and `mp.spawn`) stops the other workers at
once, and the job ends with the failing rank's traceback. A rank that catches the error
and carries on does not exit with one: it skips the rest of the step (the next pass of
its loop then pairs its collectives with the other ranks' earlier ones), or it leaves
the training and ends normally. torchrun's agent waits until every worker has finished
or one has failed, so the other ranks wait in their next collective, DDP's gradient
all-reduce, until the NCCL or gloo timeout (10 to 30 minutes), and the real error is one
line in one rank's log.

## Example
```python
try:
    for epoch in range(epochs):
        train_one_epoch(ddp_model, loader, optimizer)
except Exception as e:
    logger.error(e)
```

## Use instead
```python
try:
    for epoch in range(epochs):
        train_one_epoch(ddp_model, loader, optimizer)
except Exception:
    logger.exception("training failed on rank %d", dist.get_rank())
    raise
```

## Fix safety
No fix is offered: whether to re-raise, exit or clean up first is the author's choice.

## References
- https://pytorch.org/docs/stable/elastic/run.html
- https://pytorch.org/docs/stable/elastic/errors.html
- https://loguru.readthedocs.io/en/stable/api/logger.html#loguru._logger.Logger.catch
"""
    flag = (
        """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, optimizer, logger, local_rank):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    try:
        for x, y in loader:
            loss = model(x).sub(y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    except Exception as e:
        logger.error(e)
""",
        """
import traceback
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        model(x).sub(y).abs().mean().backward()
        optimizer.step()

def main(net, loader, optimizer, local_rank):
    dist.init_process_group("nccl")
    train(DDP(net.cuda(local_rank), device_ids=[local_rank]), loader, optimizer)

if __name__ == "__main__":
    try:
        main(None, None, None, 0)
    except BaseException:
        traceback.print_exc()
""",
        """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def fit(net, loader, optimizer, local_rank):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    for x, y in loader:
        optimizer.zero_grad()
        try:
            model(x).sub(y).pow(2).mean().backward()
        except RuntimeError as err:
            print(f"bad batch, stepping with zero gradients: {err}")
            optimizer.zero_grad()
        optimizer.step()
""",
    )
    allow = (
        """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, optimizer, logger, local_rank):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    try:
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sub(y).pow(2).mean().backward()
            optimizer.step()
    except Exception:
        logger.exception("training failed")
        raise
""",
        """
import sys
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, optimizer, local_rank):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    try:
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sub(y).pow(2).mean().backward()
            optimizer.step()
    except KeyboardInterrupt:
        print("interrupted")
    except Exception as e:
        print(e, file=sys.stderr)
        sys.exit(1)
""",
        """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, loader, optimizer, writer, local_rank):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = model(x).sub(y).pow(2).mean()
        loss.backward()
        optimizer.step()
        try:
            writer.add_scalar("loss", loss.item(), step)
        except Exception:
            pass
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for handler in ctx.nodes_of(cst.ExceptHandler):
            if type(handler) is cst.ExceptHandler:
                yield from _handler_finding(ctx, handler)
        for function in ctx.nodes_of(cst.FunctionDef):
            if type(function) is cst.FunctionDef:
                yield from _catch_finding(ctx, function)


def _handler_finding(ctx: FileContext, handler: cst.ExceptHandler) -> Iterator[Finding]:
    if not catches_broad(ctx, handler) or oom_path_swallowed(ctx, handler) is not None:
        return  # a named error, or an OOM path DDP012 judges
    attempt = ctx.parent(handler)
    swallows = _swallows(ctx, handler.body)
    if type(attempt) is not cst.Try or swallows is False:
        return
    if attempt.finalbody is not None and ctx.flow.leaves(attempt.finalbody.body, True):
        return
    if _kept_for_later(ctx, handler, attempt):
        return
    if ctx.enclosing_loop(attempt) is not None and ctx.flow.leaves(handler.body):
        return  # `except ...: continue` before the backward is DDP011's
    training = first_training_call(ctx, attempt.body)
    if training is None:
        return
    proven = _runs_on_every_rank(ctx, attempt)
    if proven is False:
        return
    caught = "a bare `except:`" if handler.type is None else f"`except {ctx.code(handler.type)}`"
    yield Finding(
        handler,
        f"{caught} lets any error of DDP training pass (`{ctx.code(training.call.func)}()`: "
        f"{training.issues}): {_consequence(ctx, attempt)}; re-raise after logging so that "
        "torchrun stops every rank at once",
        unproven=proven is None or swallows is None or not training.proven,
    )


def _catch_finding(ctx: FileContext, function: cst.FunctionDef) -> Iterator[Finding]:
    for decorator in function.decorators:
        expr = decorator.decorator
        target = expr.func if type(expr) is cst.Call else expr
        if ctx.qualname(target) not in _CATCH:
            continue
        if type(expr) is cst.Call and (
            argument(expr, None, "reraise") is not None or argument(expr, None, "onerror")
        ):
            continue  # the error goes on, or a handler of the author's choice runs
        training = first_training_call(ctx, function)
        if training is None:
            return
        proven = _runs_on_every_rank(ctx, training.call)
        if proven is False:
            return
        yield Finding(
            decorator,
            f"`@{ctx.code(expr)}` on `{function.name.value}` logs any error of its DDP "
            f"training (`{ctx.code(training.call.func)}()`: {training.issues}) and returns "
            "normally: the failing rank leaves the training without an error exit, so "
            "torchrun does not stop the other ranks and they wait in their next collective "
            "until the timeout; use `@logger.catch(reraise=True)`",
            unproven=proven is None or not training.proven,
        )


def _runs_on_every_rank(ctx: FileContext, node: cst.CSTNode) -> bool | None:
    if one_process(ctx, node):
        return False
    return every_rank(ctx, node)


def _swallows(ctx: FileContext, handler_body: cst.BaseSuite) -> bool | None:
    """False when some path of the handler re-raises or exits (also in a function of
    this file it calls), None when it calls a function of another project module whose
    text may (`raise`, `exit`; read without a parse), True otherwise."""
    project = project_of(ctx)
    answer: bool | None = True
    for node in ctx.walk(handler_body):
        if _stops(ctx, node):
            return False
        if type(node) is not cst.Call:
            continue
        callees = ctx.resolver.callees(node)
        if any(_stops(ctx, inner) for f in callees for inner in ctx.walk(f.body)):
            return False
        name = ctx.call_name(node)
        if callees or project is None or name is None:
            continue
        text = project.module_text(ctx.path, name)
        if text is not None and _STOP_WORDS.search(text):
            answer = None  # a helper of another module that may raise or exit
    return answer


def _stops(ctx: FileContext, node: cst.CSTNode) -> bool:
    """A `raise`, or a call that ends the process."""
    return type(node) is cst.Raise or (type(node) is cst.Call and calls_exit(node, ctx.qualname))


def _kept_for_later(ctx: FileContext, handler: cst.ExceptHandler, attempt: cst.Try) -> bool:
    """The handler stores something (`failed = True`, `errors.append(e)`) and code after
    the `try` in its function raises or exits: the error may be re-raised there."""
    stores = any(
        isinstance(node, cst.Assign | cst.AugAssign | cst.AnnAssign)
        or (
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and node.func.attr.value in ("append", "put", "set")
        )
        for node in ctx.walk(handler.body)
    )
    if not stores:
        return False
    scope = ctx.enclosing_function(attempt) or ctx.module
    after = ctx.subtree_end[attempt]
    return any(ctx.order[node] >= after and _stops(ctx, node) for node in ctx.walk(scope))


def _consequence(ctx: FileContext, attempt: cst.Try) -> str:
    if ctx.enclosing_loop(attempt) is not None:
        return (
            "a rank that fails here goes on without the rest of this step's collectives, "
            "so its next ones pair with the other ranks' earlier ones (desynchronised "
            "steps) and the ranks end in a hang"
        )
    return (
        "a rank that fails here leaves the training without an error exit, so torchrun "
        "does not stop the other ranks: they wait in their next collective until the timeout"
    )
