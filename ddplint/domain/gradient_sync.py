"""Gradients synchronised by hand: a reduction (or a send) handed the model's gradients
(`dist.all_reduce(p.grad)`, `link.allreduce_async(param.grad.data)`) in the file or in a
project module it may import (a project wrapper whose hooks sum the gradients across
ranks). Where gradients are synchronised so, nothing says they are averaged: a loss divided
by the world size may be what turns their sum into a mean. Read from the text, without a
parse; a mention counts."""

from __future__ import annotations

import os
import re

from ddplint.context import FileContext
from ddplint.domain.apis import REDUCTIONS
from ddplint.domain.project_view import project_of
from ddplint.project_files import project_files, project_root

# A reduction whose arguments name gradients (`allreduce_async(p.grad.data)`,
# `all_reduce(grads[i])`), or a send of them (a hand-written ring), on one line.
_GRADIENT_REDUCTION = re.compile(
    r"(all_?reduce|reduce_scatter|\breduce|\bi?send)\w*\((?:[^()\n]|\([^()\n]*\))*\bgrads?\b",
    re.IGNORECASE,
)


def reduces_gradients_here(ctx: FileContext) -> bool:
    """The file all-reduces (or reduces) gradients itself: `dist.all_reduce(p.grad)`."""
    for call in ctx.calls_to(*REDUCTIONS):
        for arg in call.args:
            if any(n.endswith(".grad") or n == "grad" for n in ctx.names_in(arg.value)):
                return True
    return False


def reduces_gradients_by_hand(ctx: FileContext) -> bool:
    """The file's text, or the text of a project module it may import (transitively),
    hands gradients to a reduction."""
    if _GRADIENT_REDUCTION.search(ctx.source):
        return True
    project = project_of(ctx)
    if project is None or not os.path.isfile(ctx.path):
        return False
    files = project_files(project_root(ctx.path))
    return any(
        _GRADIENT_REDUCTION.search(files.text(p) or "")
        for p in sorted(project.text_closure(os.path.abspath(ctx.path)))
    )
