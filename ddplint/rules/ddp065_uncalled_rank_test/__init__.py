"""DDP065: a rank or process-group test that names a function without calling it."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import Side, domain_of
from ddplint.domain.ranks import Ranks
from ddplint.engine.flow import logical_terms
from ddplint.rule import Finding, Rule, register

# torch.distributed's questions about the job: each is a function, always true uncalled.
_JOB_QUERIES = frozenset(
    f"torch.distributed.{name}"
    for name in (
        "is_initialized",
        "is_available",
        "is_torchelastic_launched",
        "is_nccl_available",
        "is_gloo_available",
        "is_mpi_available",
    )
)
_WHO = {Side.MAIN: "the main process", Side.OTHERS: "the ranks other than the main one"}


@register
class UncalledRankTest(Rule):
    code = "DDP065"
    name = "uncalled-rank-test"
    severity = Severity.ERROR
    needs_several = False  # `if dist.is_initialized:` misleads one process too
    summary = "A rank test names a function without calling it: always true"
    explanation = """
## What it does
Flags a test (`if`, `elif`, `while`, a conditional expression, and each operand of
`and`/`or`/`not` in one) that names a function instead of calling it, where the function
is a rank test: `if is_main_process:` for a function of the file or of another project
module whose every return is a rank test (`return dist.get_rank() == 0`), or one of
torch.distributed's questions about the job (`if dist.is_initialized:`,
`torch.distributed.is_available`).

Left alone: a name that anything binds (a parameter or variable `is_main_process =
rank == 0`), a method's name, a function whose result is not known to be a rank test, and
a function called (`if is_main_process():`).

## Why is this bad?
A function object is always true. `if is_main_process:` runs its block on every rank, so
the checkpoint, the log or the download meant for one process happens N times (and
`if not is_main_process:` never runs at all); `if dist.is_initialized:` holds where no
process group was started, so the `dist.get_rank()` under it raises in a one-process run.
Nothing fails at the line itself: the script behaves as if the test were not there.

## Example
```python
from utils import is_main_process

if is_main_process:
    torch.save(model.module.state_dict(), "last.pt")
```

## Use instead
```python
if is_main_process():
    torch.save(model.module.state_dict(), "last.pt")
```

## Fix safety
No automatic fix: adding the call is almost always what was meant, but a function that
takes arguments needs them, and only the author knows which.

## References
- https://docs.python.org/3/library/stdtypes.html#truth-value-testing
- https://pytorch.org/docs/stable/distributed.html#torch.distributed.is_initialized
"""
    flag = (
        """
import torch
import torch.distributed as dist

def is_main_process():
    return dist.get_rank() == 0

def save(model, path):
    if is_main_process:
        torch.save(model.module.state_dict(), path)
""",
        """
import torch.distributed as dist

def world_size():
    if dist.is_initialized:
        return dist.get_world_size()
    return 1
""",
        """
import torch.distributed as dist

def is_master():
    return not dist.is_initialized() or dist.get_rank() == 0

def log(step, loss):
    if step % 100 == 0 and is_master:
        print(step, loss)
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist

def is_main_process():
    return dist.get_rank() == 0

def save(model, path):
    if is_main_process():
        torch.save(model.module.state_dict(), path)
""",
        """
import torch
import torch.distributed as dist

def save(model, path, is_main_process=True):
    if is_main_process:
        torch.save(model.module.state_dict(), path)
""",
        """
import torch.distributed as dist

class Trainer:
    def is_main_process(self):
        return dist.get_rank() == 0

def run(is_main_process):
    if is_main_process:
        print("main")
""",
        """
def enabled():
    return True

def run():
    if enabled:
        print("always")
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        ranks = domain_of(ctx).ranks
        for node in ctx.nodes_of(cst.If, cst.While, cst.IfExp):
            assert isinstance(node, (cst.If, cst.While, cst.IfExp))
            terms = list(logical_terms(node.test))
            for term, negated in terms:
                message = _uncalled(ctx, ranks, term, negated, alone=len(terms) == 1)
                if message is not None:
                    yield Finding(term, message)


def _uncalled(
    ctx: FileContext, ranks: Ranks, term: cst.BaseExpression, negated: bool, alone: bool
) -> str | None:
    """What goes wrong where `term`, an operand of a test (the whole test when `alone`),
    names a rank test uncalled."""
    shown = ctx.code(term).strip()
    job = ctx.qualname(term) in _JOB_QUERIES
    side = None if job or type(term) is not cst.Name else ranks.function_side(term)
    if not job and side is None:
        return None
    if negated and not alone:
        effect = f"`not {shown}` never holds and the rest of the test decides alone"
    elif job:
        rest = "" if alone else " wherever the rest of the test holds"
        effect = (
            "the code it guards never runs"
            if negated
            else f"the code it guards runs{rest} even where no process group was started"
        )
    else:
        assert side is not None
        meant = _WHO.get(side.negated() if negated else side, "some ranks")
        rest = "" if alone else " (wherever the rest of the test holds)"
        runs = "on no rank" if negated else f"on every rank{rest}"
        effect = f"what it guards runs {runs}, where only {meant} should run it"
    return (
        f"`{shown}` is the function itself, not its answer: a function is always true, so "
        f"{effect}; call it: `{shown}()`"
    )
