"""The `--local_rank` command-line option as a script declares it, and the one launcher
that passes it by convention: what DDP022 (deprecated launch) and DDP040 (the parser
rejects the launch) both read."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import keyword, string_value

LOCAL_RANK_FLAGS = frozenset({"--local_rank", "--local-rank"})


def local_rank_options(ctx: FileContext) -> Iterator[tuple[cst.Call, frozenset[str]]]:
    """Each `add_argument` call declaring a local-rank option (also through an alias:
    `arg = parser.add_argument; arg("--local_rank", ...)`), with the spellings it
    declares."""
    for call in ctx.calls:
        flags = frozenset(string_value(a.value) or "" for a in call.args if a.keyword is None)
        if flags & LOCAL_RANK_FLAGS and _adds_argument(ctx, call):
            yield call, flags & LOCAL_RANK_FLAGS


def _adds_argument(ctx: FileContext, call: cst.Call) -> bool:
    func = call.func
    if type(func) is cst.Attribute:
        return func.attr.value == "add_argument"
    return type(func) is cst.Name and any(
        type(v.expr) is cst.Attribute and v.expr.attr.value == "add_argument"
        for v in ctx.resolver.values(func, call)
    )


def is_required(call: cst.Call) -> bool:
    """`add_argument(..., required=True)`, or with any other value argparse takes as true
    (`required=int`, `required=1`)."""
    required = keyword(call, "required")
    if required is None:
        return False
    value = required.value
    if type(value) is cst.Name:
        return value.value == "True" or value.value in _TRUE_BUILTINS
    if type(value) is cst.Integer:
        return int(value.value, 0) != 0
    if type(value) is cst.SimpleString:
        return value.evaluated_value not in ("", b"")
    return False


# Builtin classes: always true as a value (`required=int`).
_TRUE_BUILTINS = frozenset({"int", "str", "float", "bool", "list", "dict", "tuple", "set"})


def imports_deepspeed(ctx: FileContext) -> bool:
    """The file imports DeepSpeed, whose launcher passes `--local_rank=N` itself."""
    bound = ctx.imports.bindings.values()
    return any(v == "deepspeed" or v.startswith("deepspeed.") for v in bound)


def unpacked(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The names and attributes an assignment target binds, through tuples and lists
    (`args.local_rank, args.rank, args.world_size = world_info_from_env()`)."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from unpacked(element.value)
    else:
        yield target


def is_assigned(ctx: FileContext, node: cst.Attribute) -> bool:
    """`node` is written, not read: an assignment's target, also as one of the names a
    tuple or list target unpacks into."""
    parent = ctx.parent(node)
    while isinstance(parent, (cst.Element, cst.StarredElement, cst.Tuple, cst.List)):
        parent = ctx.parent(parent)
    return type(parent) is cst.AssignTarget


def destination(call: cst.Call, flags: frozenset[str]) -> str:
    """The namespace attribute an option is stored in (`dest=`, else its first long flag)."""
    given = keyword(call, "dest")
    name = string_value(given.value) if given is not None else None
    names = [string_value(a.value) or "" for a in call.args if a.keyword is None]
    first = next((n for n in names if n.startswith("--")), None)  # `-k` is a short alias
    return name or (first or sorted(flags)[0]).lstrip("-").replace("-", "_")
