"""`torch.save` calls: where they write, and whether that is a file at all."""

from __future__ import annotations

import libcst as cst

from ddplint.analysis.paths import path_values
from ddplint.context import FileContext
from ddplint.facts import argument
from ddplint.names import dotted

SAVE = "torch.save"
_BUFFERS = frozenset({"io.BytesIO", "BytesIO", "io.StringIO"})


def save_path(call: cst.Call) -> cst.BaseExpression | None:
    """The file argument of `torch.save(obj, f)`."""
    return argument(call, 1, "f")


def is_buffer(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The save goes to an in-memory buffer, not a file."""
    for value, _ in path_values(ctx, path, at):
        if isinstance(value, cst.Call):
            name = ctx.call_name(value) or dotted(value.func) or ""
            if name in _BUFFERS:
                return True
    return False


def is_checkpoint_save(ctx: FileContext, call: cst.Call) -> bool:
    """`torch.save` into a file (not into an in-memory buffer)."""
    if ctx.call_name(call) != SAVE:
        return False
    path = save_path(call)
    return path is None or not is_buffer(ctx, path, call)


_RANK_READS = frozenset({"get_rank", "get_local_rank", "init_process_group", "spawn"})


def data_parallel_only(ctx: FileContext) -> bool:
    """The file wraps models in `nn.DataParallel` and nothing in it runs several
    processes: no DDP wrap (direct or through a helper), no process group, no rank read.
    One process saves: there are no other ranks to contend with."""
    facts = ctx.facts
    if not any(True for _ in ctx.calls_to("torch.nn.DataParallel")):
        return False
    if facts.ddp_wraps or facts.helper_wraps:
        return False
    for call in ctx.calls:
        func = call.func
        name = func.attr.value if isinstance(func, cst.Attribute) else dotted(func)
        if name in _RANK_READS or facts.is_rank_value(call):
            return False
    return not any(
        isinstance(node, cst.Subscript) and facts.is_rank_value(node)
        for node in ctx.nodes_of(cst.Subscript)
    )


def file_name_varies(ctx: FileContext, path: cst.BaseExpression) -> bool:
    """The last component of the path is computed (`f"{out}/ckpt_{tag}.pt"`,
    `os.path.join(out, name)`): ddplint may not know whether it changes between saves."""
    if isinstance(path, cst.FormattedString):
        tail: list[cst.BaseFormattedStringContent] = []
        for part in path.parts:
            if isinstance(part, cst.FormattedStringText) and "/" in part.value:
                tail = []
            else:
                tail.append(part)
        return any(isinstance(p, cst.FormattedStringExpression) for p in tail)
    if isinstance(path, cst.BinaryOperation):
        if isinstance(path.operator, cst.Modulo):
            return True
        return file_name_varies(ctx, path.right) or not isinstance(
            path.right, (cst.SimpleString, cst.FormattedString, cst.BinaryOperation)
        )
    if isinstance(path, cst.Call):
        func = path.func
        if isinstance(func, cst.Attribute) and func.attr.value == "format":
            return bool(path.args)
        if path.args and (ctx.call_name(path) or dotted(func) or "").endswith(("join", "Path")):
            last = path.args[-1].value
            return file_name_varies(ctx, last) or not isinstance(
                last, (cst.SimpleString, cst.FormattedString, cst.BinaryOperation)
            )
    return False
