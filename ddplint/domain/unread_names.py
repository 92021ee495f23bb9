"""Values bound to a name that nothing reads: `DEVICE = torch.device("cuda:0")` in a script
that places everything on `args.device`. What such a value says (a device, a seed) does
nothing, so a finding on it reports no harm."""

from __future__ import annotations

import os
import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.project_files import named_in_other_files


def bound_and_never_read(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` lies in the value of an assignment to one plain name (`DEVICE = ...`) that
    the file mentions nowhere else, and, for a module-level name, that no other file of
    the project can import: none names the name, or none names the module
    (`from train import DEVICE` needs both)."""
    statement = ctx.statement(node)
    if not isinstance(statement, cst.Assign) or not ctx.is_inside(node, statement.value):
        return False
    if len(statement.targets) != 1 or not isinstance(statement.targets[0].target, cst.Name):
        return False
    name = statement.targets[0].target.value
    if len(re.findall(rf"(?<![\w.]){re.escape(name)}\b", ctx.source)) != 1:
        return False  # read somewhere (or bound again), or named in a string
    if ctx.enclosing_function(statement) is not None:
        return True
    if not os.path.isfile(ctx.path):
        return False
    module = os.path.splitext(os.path.basename(ctx.path))[0]
    return not (named_in_other_files(ctx.path, name) and named_in_other_files(ctx.path, module))
