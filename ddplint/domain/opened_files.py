"""Which file a call opens for writing from its start: the one answer for the rules on
files every rank writes (`ddplint.domain.file_writes`) and on what a save writes into
(`ddplint.domain.overwrites.written_path`)."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import string_value
from ddplint.engine import argument
from ddplint.names import dotted

_OPENS = frozenset({"open", "io.open", "codecs.open"})
_MODE = re.compile(r"^[rwxabt+U]+$")  # an `open` mode


def is_opener(ctx: FileContext, call: cst.Call) -> bool:
    """`call` opens a file: `open(...)` (not a function of this file of that name),
    `io.open`, `codecs.open`, or an `open` method (`Path(p).open(...)`, a file manager's
    `g_pathmgr.open(p, ...)`, `gzip.open(p, ...)`)."""
    name = ctx.call_name(call) or dotted(call.func) or ""
    if name in _OPENS:
        return name not in ctx.functions
    return type(call.func) is cst.Attribute and call.func.attr.value == "open"


def opened_for_writing(ctx: FileContext, call: cst.Call) -> tuple[cst.BaseExpression, str] | None:
    """(the path, the mode) of a call that opens a file with a mode that truncates it
    (`w`, `wb`, `w+`): `open(p, "w")`, `open(p, mode="wb")`, `Path(p).open("wb")`,
    `manager.open(p, "wb")`; None for another call or mode, or a mode not written out."""
    if not is_opener(ctx, call):
        return None
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    first = string_value(positional[0]) if positional else None
    method = (ctx.call_name(call) or dotted(call.func)) not in _OPENS
    path: cst.BaseExpression | None
    if method and type(call.func) is cst.Attribute and (not positional or _is_mode(first)):
        path, mode = call.func.value, first  # `Path(p).open("wb")`, `Path(p).open(mode="w")`
        if not positional:
            mode = string_value(argument(call, None, "mode"))
    else:
        path, mode = argument(call, 0, "file"), string_value(argument(call, 1, "mode"))
        if method and _archive_member(ctx, call):
            return None  # a member of an archive the function writes anew
    if path is None:
        return None
    if mode is None or not truncates(mode):
        return None
    return path, mode


def truncates(mode: str | None) -> bool:
    """An `open` mode that empties the file first (`w`, `wb`, `w+`)."""
    return _is_mode(mode) and "w" in (mode or "")


def _is_mode(text: str | None) -> bool:
    return text is not None and _MODE.match(text) is not None


_ARCHIVES = frozenset({"zipfile.ZipFile", "tarfile.open", "tarfile.TarFile"})


def _archive_member(ctx: FileContext, call: cst.Call) -> bool:
    """`checkpoint.open("loop_state.pth", "w")` where `checkpoint` (or `self._zip`) is an
    archive the code opened itself (`with Checkpoint(path, "w") as checkpoint:`,
    `self._zip = zipfile.ZipFile(f, mode)`): the call writes a member of that archive,
    not a file on disk (a file manager's `g_pathmgr.open(p, "wb")` is bound no such way)."""
    receiver = call.func.value if type(call.func) is cst.Attribute else None
    key = dotted(receiver) if receiver is not None else None
    if key is None:
        return False
    bindings = [  # `self._zip = None` before the archive opens holds nothing to write
        b
        for b in ctx.resolver.reaching(key, call)
        if not (type(b.value) is cst.Name and b.value.value == "None")
    ]
    return bool(bindings) and all(
        binding.kind in ("with", "assign")
        and type(binding.value) is cst.Call
        and (ctx.call_name(binding.value) in _ARCHIVES or _opened_to_write(binding.value))
        for binding in bindings
    )


def _opened_to_write(call: cst.Call) -> bool:
    """A call given a truncating mode among its arguments (`Checkpoint(path, "w")`)."""
    return any(truncates(string_value(arg.value)) for arg in call.args if not arg.star)
