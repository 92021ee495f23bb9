"""DDP012: an out-of-memory error caught and swallowed instead of re-raised."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.facts import string_value
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

OOM_CLASSES = frozenset({"torch.cuda.OutOfMemoryError"})
_BROAD = frozenset({"RuntimeError", "Exception", "BaseException"})
_EXITS = frozenset({"sys.exit", "os._exit", "os.abort", "exit", "quit"})
_OOM_TEXT = ("out of memory", "outofmemory")


def _handler_types(handler: cst.ExceptHandler) -> list[cst.BaseExpression]:
    kind = handler.type
    if kind is None:
        return []
    if isinstance(kind, cst.Tuple):
        return [element.value for element in kind.elements]
    return [kind]


def catches_oom_type(ctx: FileContext, handler: cst.ExceptHandler) -> bool:
    return any(ctx.qualname(t) in OOM_CLASSES for t in _handler_types(handler))


def _catches_broad(ctx: FileContext, handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    for kind in _handler_types(handler):
        if isinstance(kind, cst.Name) and kind.value in _BROAD and ctx.qualname(kind) is None:
            return True
    return False


def _is_oom_test(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """A test that picks out an OOM: `"out of memory" in str(e)`, `isinstance(e, OOM)`."""
    for node in ctx.walk(expr):
        text = string_value(node) if isinstance(node, cst.BaseExpression) else None
        if text is not None and any(marker in text.lower() for marker in _OOM_TEXT):
            return True
        if isinstance(node, (cst.Name, cst.Attribute)) and ctx.qualname(node) in OOM_CLASSES:
            return True
    return False


def _negated(expr: cst.BaseExpression) -> bool:
    """`"out of memory" not in str(e)` or `not ...`: true for errors that are NOT an OOM."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return not _negated(expr.expression)
    if isinstance(expr, cst.Comparison):
        return any(isinstance(c.operator, cst.NotIn) for c in expr.comparisons)
    return False


def _statements(block: cst.BaseSuite) -> list[cst.BaseStatement | cst.BaseSmallStatement]:
    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    if isinstance(block, cst.SimpleStatementSuite):
        return list(block.body)
    return []


def _stops(ctx: FileContext, statements) -> bool:
    """Whether running `statements` ends in a raise or a process exit at its top level
    (an `if`/`else` whose both branches stop counts)."""
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            if _stops(ctx, statement.body):
                return True
        elif isinstance(statement, cst.Raise):
            return True
        elif isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
            name = ctx.call_name(statement.value) or dotted(statement.value.func) or ""
            if name in _EXITS:
                return True
        elif isinstance(statement, cst.If) and statement.orelse is not None:
            orelse = statement.orelse
            other = [orelse] if isinstance(orelse, cst.If) else _statements(orelse.body)
            if _stops(ctx, _statements(statement.body)) and _stops(ctx, other):
                return True
    return False


def oom_path_swallowed(ctx: FileContext, handler: cst.ExceptHandler) -> bool | None:
    """None if the handler does not handle an OOM; else whether its OOM path goes on
    without re-raising or exiting."""
    body = _statements(handler.body)
    if catches_oom_type(ctx, handler):
        return not _stops(ctx, body)
    if not _catches_broad(ctx, handler):
        return None
    return _message_path_swallowed(ctx, body)


def _message_path_swallowed(ctx: FileContext, body) -> bool | None:
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.If) or not _is_oom_test(ctx, statement.test):
            continue
        if _negated(statement.test):
            # `if "out of memory" not in str(e): raise` -> the OOM path is what follows.
            rest = list(body[index + 1 :])
            if statement.orelse is not None:
                orelse = statement.orelse
                rest = ([orelse] if isinstance(orelse, cst.If) else _statements(orelse.body)) + rest
            return not _stops(ctx, rest)
        return not _stops(ctx, _statements(statement.body)) and not (
            _stops(ctx, body[index + 1 :]) and _falls_through(statement.body)
        )
    return None


def _falls_through(block: cst.BaseSuite) -> bool:
    """The block can end without leaving the handler (no return/continue/break at its end)."""
    statements = _statements(block)
    if not statements:
        return True
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine) and last.body:
        return not isinstance(last.body[-1], (cst.Return, cst.Continue, cst.Break, cst.Raise))
    return True


@register
class SwallowedOOM(Rule):
    code = "DDP012"
    name = "swallowed-oom"
    severity = Severity.ERROR
    summary = "Out-of-memory error caught and swallowed: the rank carries on alone"
    explanation = """
## What it does
Flags an `except torch.cuda.OutOfMemoryError` (or `torch.OutOfMemoryError`, or a
`RuntimeError`/`Exception` handler that singles out an OOM by its message, `"out of memory"
in str(e)`) whose OOM path carries on (skips the batch, halves the batch size, returns)
instead of re-raising or exiting.

## Why is this bad?
Under DDP the rank that hit the OOM skips the rest of the step, including the gradient
all-reduce inside `backward()` and any collective that follows, while the other ranks are
already waiting in it. The PyTorch maintainers' advice is that skipping communication after
an OOM desynchronises the collectives: the job hangs until the NCCL watchdog or gloo timeout,
or the ranks' collectives pair up wrongly and step counts drift. If the error propagates,
the process exits and torchrun stops the other workers at once.

## Example
```python
for x, y in loader:
    try:
        loss = criterion(model(x), y)
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        continue
```

## Use instead
```python
for x, y in loader:
    try:
        loss = criterion(model(x), y)
        loss.backward()
    except torch.cuda.OutOfMemoryError:
        print(f"rank {rank}: CUDA OOM at step {step}", flush=True)
        raise
```

## Fix safety
No automatic fix: whether to re-raise or to exit is the author's choice.

## References
- https://pytorch.org/docs/stable/generated/torch.cuda.OutOfMemoryError.html
- https://pytorch.org/docs/stable/elastic/run.html
"""
    flag = (
        """import torch
import torch.distributed as dist

def train(model, loader, optimizer, criterion):
    for x, y in loader:
        try:
            loss = criterion(model(x), y)
            loss.backward()
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            continue
        optimizer.step()
""",
        """import torch
import torch.distributed as dist

def step(model, batch, optimizer):
    try:
        model(batch).sum().backward()
    except RuntimeError as e:
        if "out of memory" in str(e):
            print("OOM, skipping batch")
            optimizer.zero_grad(set_to_none=True)
            return None
        raise
    optimizer.step()
""",
        """import torch
from torch.distributed import init_process_group

def step(model, batch):
    try:
        return model(batch).mean()
    except (torch.OutOfMemoryError, ValueError):
        torch.cuda.empty_cache()
        return None
""",
    )
    allow = (
        """import torch
import torch.distributed as dist

def step(model, batch, rank):
    try:
        model(batch).sum().backward()
    except torch.cuda.OutOfMemoryError:
        print(f"rank {rank} ran out of memory", flush=True)
        raise
""",
        """import sys
import torch
import torch.distributed as dist

def step(model, batch):
    try:
        model(batch).sum().backward()
    except RuntimeError as err:
        if "out of memory" not in str(err):
            raise
        print(torch.cuda.memory_summary())
        sys.exit(1)
""",
        """import torch
import torch.distributed as dist

def step(model, batch):
    try:
        model(batch).sum().backward()
    except RuntimeError as err:
        if "stride" in str(err):
            return None
        raise
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for node in ctx.nodes_of(cst.ExceptHandler):
            if oom_path_swallowed(ctx, node):
                yield Finding(
                    node,
                    "CUDA out-of-memory error caught and not re-raised: this rank goes on "
                    "while the others wait in the gradient all-reduce or the next collective "
                    "(a hang, or desynchronised collectives); re-raise or exit so torchrun "
                    "stops the job",
                )
