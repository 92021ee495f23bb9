"""`torch.save` calls: where they write, and whether that is a file at all."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import argument, last_name
from ddplint.domain.paths import path_values
from ddplint.domain.saved_values import caches_item, saves_data
from ddplint.names import dotted

SAVE = "torch.save"
_BUFFERS = frozenset({"io.BytesIO", "BytesIO", "io.StringIO"})
_SCRATCH = re.compile(r"/(tmp|dev/shm)(/|$)")
_WRITERS = re.compile(r"put|write|save|upload|dump|store", re.IGNORECASE)


def save_path(call: cst.Call) -> cst.BaseExpression | None:
    """The file argument of `torch.save(obj, f)`."""
    return argument(call, 1, "f")


def is_buffer(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The save goes to an in-memory buffer, not a file."""
    for value, _ in path_values(ctx, path, at):
        if type(value) is cst.Call:
            name = ctx.call_name(value) or dotted(value.func) or ""
            if name in _BUFFERS:
                return True
    return False


def is_checkpoint_save(ctx: FileContext, call: cst.Call) -> bool:
    """`torch.save` into a shared file (not a dataset's per-sample cache: `caches_item`), or
    into an in-memory buffer whose bytes are then written out (`backend.put(buffer.getvalue(),
    path)`); not into a buffer read back in memory. Whatever the object: every rank writing
    one file contends, data or not."""
    if ctx.call_name(call) != SAVE or caches_item(ctx, call):
        return False
    path = save_path(call)
    if path is not None and in_scratch_folder(ctx, path, call):
        return False
    return path is None or not is_buffer(ctx, path, call) or buffer_written(ctx, path, call)


def saves_state(ctx: FileContext, call: cst.Call) -> bool:
    """The object `torch.save` writes may be training state, a last good checkpoint to lose:
    not data known as such (`saved_values.saves_data`), nor a dataset's per-sample cache."""
    obj = argument(call, 0, "obj")
    return not (obj is not None and saves_data(ctx, obj, call)) and not caches_item(ctx, call)


def in_scratch_folder(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The file goes to the machine's temporary folder (`/tmp/...`, `tempfile.mkdtemp()`):
    a debugging dump or scratch file, not a checkpoint anyone resumes from."""
    for value in ctx.resolver.sources(path, at, depth=2):
        for node in ctx.walk(value.expr):
            if type(node) is cst.SimpleString and _SCRATCH.match(node.raw_value):
                return True
            if type(node) is cst.Call and (ctx.call_name(node) or "").startswith("tempfile."):
                return True
    return False


def buffer_written(ctx: FileContext, buffer: cst.BaseExpression, call: cst.Call) -> bool:
    """The buffer's bytes are handed to a writer after the save
    (`backend.put(buffer.getvalue(), path)`, `save_bytes(path, buffer.getvalue())`)."""
    name = dotted(buffer)
    if name is None:
        return False
    for other in ctx.calls_within(ctx.scope(call)):
        func = other.func
        if (
            ctx.before(call, other)
            and type(func) is cst.Attribute
            and func.attr.value == "getvalue"
            and dotted(func.value) == name
            and _written(ctx, other)
        ):
            return True
    return False


def _written(ctx: FileContext, read: cst.Call) -> bool:
    """`read` is an argument of a call that writes or uploads it."""
    argument = ctx.parent(read)
    writer = ctx.parent(argument) if type(argument) is cst.Arg else None
    if type(writer) is not cst.Call:
        return False
    return bool(_WRITERS.search(last_name(writer.func) or ""))


def file_name_varies(ctx: FileContext, path: cst.BaseExpression) -> bool:
    """The last component of the path is computed (`f"{out}/ckpt_{tag}.pt"`,
    `os.path.join(out, name)`): ddplint may not know whether it changes between saves."""
    if type(path) is cst.FormattedString:
        tail: list[cst.BaseFormattedStringContent] = []
        for part in path.parts:
            if type(part) is cst.FormattedStringText and "/" in part.value:
                tail = []
            else:
                tail.append(part)
        return any(type(p) is cst.FormattedStringExpression for p in tail)
    if type(path) is cst.BinaryOperation:
        if type(path.operator) is cst.Modulo:
            return True
        return file_name_varies(ctx, path.right) or not isinstance(
            path.right, (cst.SimpleString, cst.FormattedString, cst.BinaryOperation)
        )
    if type(path) is cst.Call:
        func = path.func
        if type(func) is cst.Attribute and func.attr.value == "format":
            return bool(path.args)
        if path.args and (ctx.call_name(path) or dotted(func) or "").endswith(("join", "Path")):
            last = path.args[-1].value
            return file_name_varies(ctx, last) or not isinstance(
                last, (cst.SimpleString, cst.FormattedString, cst.BinaryOperation)
            )
    return False


_PREFIX_TESTS = frozenset(
    {"replace", "removeprefix", "startswith", "lstrip", "len", "split", "partition", "sub"}
)


def _names_module_prefix(expr: cst.BaseExpression) -> bool:
    """A literal `"module."`, `"module"` or `"module.encoder."`."""
    if type(expr) is not cst.SimpleString:
        return False
    value = expr.raw_value  # not evaluated: any file of the project is read here
    value = value.removeprefix("^").replace("\\.", ".")  # a pattern: `re.sub(r"^module\.", ...)`
    return value == "module" or value.startswith("module.")


# The prefix named in a string: `"module."`, `'module'`, or within one (`"^module\\."`).
_NAMES_PREFIX = re.compile(r"module\.|['\"]module['\"]")


def strips_module_prefix(ctx: FileContext) -> bool:
    """The module drops the DDP wrapper's `module.` prefix from checkpoint keys when loading
    (`consume_prefix_in_state_dict_if_present`, `k.replace("module.", "")`,
    `k.startswith("module")` with `k[len("module."):]`, `k.split("module.")[1]`,
    a `re.sub` of a `^module.` pattern, or `k[7:]` or `k[len(prefix) + 1:]` in a file that
    names the prefix in a string, `"module."` or `'module'` (`if 'module' in keys[0]:`,
    `def remove_prefix(state_dict, prefix="module")`): its length written out)."""
    for call in ctx.calls:
        func = call.func
        name = func.attr.value if type(func) is cst.Attribute else None
        if type(func) is cst.Name:
            name = func.value
        if name == "consume_prefix_in_state_dict_if_present" or _cuts_module_prefix(name, call):
            return True
    return _NAMES_PREFIX.search(ctx.source) is not None and any(
        _drops_prefix_length(node) for node in ctx.nodes_of(cst.SubscriptElement)
    )


def keys_stripped(ctx: FileContext, state: cst.BaseExpression) -> bool:
    """`state` is a dict rebuilt with the `module.` prefix dropped from its keys (`{k[7:]:
    v for k, v in ckpt.items()}`, `{k.replace("module.", ""): v ...}`): its keys are
    those of the bare model, which a DDP wrapper's strict `load_state_dict` refuses."""
    if type(state) is not cst.DictComp:
        return False
    for node in ctx.walk(state.key):
        if type(node) is cst.SubscriptElement and _drops_prefix_length(node):
            return True
        if (
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and _cuts_module_prefix(node.func.attr.value, node)
        ):
            return True
    return False


def _cuts_module_prefix(name: str | None, call: cst.Call) -> bool:
    """`call`, of a function or method called `name`, cuts or tests the `module.` prefix
    (`k.replace("module.", "")`, `k.startswith("module")`, a `re.sub` of `^module.`)."""
    return name in _PREFIX_TESTS and bool(call.args) and _names_module_prefix(call.args[0].value)


def _drops_prefix_length(element: cst.CSTNode) -> bool:
    """`[7:]`, the length of `module.` cut from the front, or `[len(prefix) + 1:]`, a
    prefix's length and its dot (in a file that names the prefix: `prefix="module"`)."""
    if type(element) is not cst.SubscriptElement or type(element.slice) is not cst.Slice:
        return False
    lower, upper = element.slice.lower, element.slice.upper
    if upper is not None:
        return False
    if type(lower) is cst.Integer:
        return lower.value == "7"
    return (
        type(lower) is cst.BinaryOperation
        and type(lower.operator) is cst.Add
        and type(lower.right) is cst.Integer
        and lower.right.value == "1"
        and type(lower.left) is cst.Call
        and type(lower.left.func) is cst.Name
        and lower.left.func.value == "len"
        and len(lower.left.args) == 1
        and type(lower.left.args[0].value) is cst.Name
    )
