"""`init_process_group(init_method="file://...")` on a path that is the same in every run:
the file store needs a file no earlier run left behind."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.engine.resolve import argument

_INIT = "torch.distributed.init_process_group"
_INIT_METHOD = 1  # init_process_group(backend, init_method, ...)
_FILE = "file://"
# Functions that give the same path for the same arguments in every run.
_PATH_FUNCTIONS = frozenset(
    {
        "os.path.join",
        "os.path.abspath",
        "os.path.realpath",
        "os.path.normpath",
        "os.path.expanduser",
        "os.path.dirname",
        "os.getcwd",
        "pathlib.Path",
        "pathlib.Path.cwd",
        "pathlib.Path.home",
    }
)
_BUILTINS = frozenset({"str"})
_PATH_METHODS = frozenset({"replace", "as_posix", "resolve", "absolute", "joinpath", "format"})
_PATH_ATTRIBUTES = frozenset({"parent", "parents", "name", "stem"})
# Calls that delete a file or a folder.
_REMOVALS = frozenset({"os.remove", "os.unlink", "shutil.rmtree"})
_PLACEHOLDER = "{}<>"
_TEXT = "\0"  # marks a string literal among names
_MAX_DEPTH = 8


@dataclass(frozen=True)
class FixedRendezvous:
    """An `init_process_group` call whose `init_method` is a `file://` URL proven the same
    in every run (built from literals and path functions only), with the names its path
    is held in on the way."""

    call: cst.Call
    init_method: cst.BaseExpression
    names: frozenset[str]


def fixed_rendezvous_files(ctx: FileContext) -> list[FixedRendezvous]:
    """The calls of the file that rendezvous through a fixed file, when the file deletes
    none of the names that hold its path (`os.remove(init_file)` before the init)."""
    removed = _removed_names(ctx)
    found = []
    for call in ctx.calls_to(_INIT):
        url = argument(call, _INIT_METHOD, "init_method")
        if url is None or not _starts_with_file(ctx, url, call, _MAX_DEPTH):
            continue
        names: set[str] = set()
        if _fixed(ctx, url, call, _MAX_DEPTH, names) and not _deleted(names, removed):
            found.append(FixedRendezvous(call, url, frozenset(names)))
    return found


def _deleted(names: set[str], removed: set[str]) -> bool:
    """A deletion names a name that holds the path, or a literal that is part of it."""
    if names & removed:
        return True
    texts = [n[len(_TEXT) :] for n in names if n.startswith(_TEXT)]
    return any(
        r.startswith(_TEXT) and len(r) > len(_TEXT) and any(r[len(_TEXT) :] in t for t in texts)
        for r in removed
    )


def _removed_names(ctx: FileContext) -> set[str]:
    """Names (and attribute names) the file deletes, and the string literals it names
    there (marked `_TEXT`): `os.remove(init_file)`, `Path(init_file).unlink()`,
    `shutil.rmtree(tmp_dir)`, `os.remove("/tmp/init")`."""
    found: set[str] = set()
    for call in ctx.calls:
        func = call.func
        deletes = ctx.call_name(call) in _REMOVALS or (
            type(func) is cst.Attribute and func.attr.value == "unlink"
        )
        if not deletes:
            continue
        nodes: list[cst.CSTNode] = [call]
        while nodes:
            node = nodes.pop()
            if type(node) is cst.Name:
                found.add(node.value)
            elif type(node) is cst.Attribute:
                found.add(node.attr.value)
            elif type(node) is cst.SimpleString and isinstance(node.evaluated_value, str):
                found.add(_TEXT + node.evaluated_value)
            nodes.extend(node.children)
    return found


def _starts_with_file(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int
) -> bool:
    """Every value `expr` may hold begins with the literal `file://`."""
    if depth <= 0:
        return False
    if type(expr) is cst.SimpleString:
        text = expr.evaluated_value
        return isinstance(text, str) and text.startswith(_FILE)
    if type(expr) is cst.FormattedString:
        first = expr.parts[0] if expr.parts else None
        return type(first) is cst.FormattedStringText and first.value.startswith(_FILE)
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Add:
        return _starts_with_file(ctx, expr.left, at, depth - 1)
    if type(expr) is cst.Name:
        leaves = [v for v in ctx.resolver.values(expr, at) if v.leaf and v.expr is not expr]
        return bool(leaves) and all(_starts_with_file(ctx, v.expr, v.at, depth - 1) for v in leaves)
    return False


def _fixed(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int, names: set[str]
) -> bool:
    """`expr` is proven the same text in every run: literals, `__file__`, and path
    functions of them, through names (collected in `names`, with the literals)."""
    if depth <= 0:
        return False
    if type(expr) is cst.SimpleString:
        text = expr.evaluated_value
        if not isinstance(text, str):
            return True
        names.add(_TEXT + text)
        # A template for the reader to fill in (`"file:///{your local file path}"`) is
        # not a path any run uses.
        return not any(c in text for c in _PLACEHOLDER)
    if type(expr) is cst.Integer:
        return True
    if type(expr) is cst.ConcatenatedString:
        return _fixed(ctx, expr.left, at, depth - 1, names) and _fixed(
            ctx, expr.right, at, depth - 1, names
        )
    if type(expr) is cst.FormattedString:
        return all(
            type(part) is not cst.FormattedStringExpression
            or _fixed(ctx, part.expression, at, depth - 1, names)
            for part in expr.parts
        )
    if type(expr) is cst.BinaryOperation and isinstance(expr.operator, (cst.Add, cst.Divide)):
        return _fixed(ctx, expr.left, at, depth - 1, names) and _fixed(
            ctx, expr.right, at, depth - 1, names
        )
    if type(expr) is cst.Call:
        return _fixed_call(ctx, expr, at, depth, names)
    if type(expr) is cst.Attribute and expr.attr.value in _PATH_ATTRIBUTES:
        return _fixed(ctx, expr.value, at, depth - 1, names)
    if type(expr) is cst.Name:
        if expr.value == "__file__":
            return True
        names.add(expr.value)
        leaves = [v for v in ctx.resolver.values(expr, at) if v.leaf and v.expr is not expr]
        return bool(leaves) and all(_fixed(ctx, v.expr, v.at, depth - 1, names) for v in leaves)
    return False


def _fixed_call(
    ctx: FileContext, call: cst.Call, at: cst.CSTNode, depth: int, names: set[str]
) -> bool:
    arguments = all(
        not arg.star and _fixed(ctx, arg.value, at, depth - 1, names) for arg in call.args
    )
    func = call.func
    if ctx.call_name(call) in _PATH_FUNCTIONS:
        return arguments
    if type(func) is cst.Name:  # `str(path)`, unless the file binds the name
        return func.value in _BUILTINS and not ctx.model.bindings.get(func.value) and arguments
    return (
        type(func) is cst.Attribute
        and func.attr.value in _PATH_METHODS
        and arguments
        and _fixed(ctx, func.value, at, depth - 1, names)
    )
