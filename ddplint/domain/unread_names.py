"""Values bound to a name that nothing reads: `DEVICE = torch.device("cuda:0")` in a script
that places everything on `args.device`. What such a value says (a device, a seed) does
nothing, so a finding on it reports no harm."""

from __future__ import annotations

import os
import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.project_files import named_in_other_files, project_files, project_root


def bound_and_never_read(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` lies in the value of an assignment to one plain name (`DEVICE = ...`) that
    the file mentions nowhere else, and, for a module-level name, that no other file of
    the project can import: none names the name, or none names the module
    (`from train import DEVICE` needs both). Or to an attribute of a name (`args.device =
    ...`) that no code of the project reads (`_attribute_never_read`)."""
    statement = ctx.statement(node)
    if type(statement) is not cst.Assign or not ctx.is_inside(node, statement.value):
        return False
    if len(statement.targets) != 1:
        return False
    target = statement.targets[0].target
    if type(target) is cst.Attribute and type(target.value) is cst.Name:
        return _attribute_never_read(ctx, target.attr.value)
    if type(target) is not cst.Name:
        return False
    name = target.value
    if len(re.findall(rf"(?<![\w.]){re.escape(name)}\b", ctx.source)) != 1:
        return False  # read somewhere (or bound again), or named in a string
    if ctx.enclosing_function(statement) is not None:
        return True
    if not os.path.isfile(ctx.path):
        return False
    module = os.path.splitext(os.path.basename(ctx.path))[0]
    return not (named_in_other_files(ctx.path, name) and named_in_other_files(ctx.path, module))


# Ways to read an attribute without writing `.name`: the object's namespace as a whole.
_NAMESPACE_READS = re.compile(r"\bvars\(|__dict__|\bgetattr\(|\.get\(")


def _attribute_never_read(ctx: FileContext, attribute: str) -> bool:
    """No file of the project (this file alone where it is no file on disk) writes
    `.attribute` (not called: `torch.device(...)`) but this one assignment, names it in a
    string (`getattr(args, "device")`, a dictionary key), or reads an object's namespace
    whole (`vars(args)`, `__dict__`, `getattr`, `.get(`): whatever the attribute holds,
    nothing reads it."""
    texts = [ctx.source]
    if os.path.isfile(ctx.path):
        files = project_files(project_root(os.path.abspath(ctx.path)))
        own = os.path.abspath(ctx.path)
        texts += [files.text(p) or "" for p in files.paths if p != own]
    # `.device` not called: `torch.device(...)` reads a function of a module, not the value
    written = re.compile(rf"\.\s*{re.escape(attribute)}\b(?!\s*\()")
    named = re.compile(rf"[\"']{re.escape(attribute)}[\"']")
    uses = sum(len(written.findall(text)) for text in texts)
    return uses == 1 and not any(
        named.search(text) or _NAMESPACE_READS.search(text) for text in texts
    )
