"""One answer to "is this value the same on every rank because it comes from the command
line": launchers (torchrun, `mp.spawn`, SLURM's `srun`) start every process of a job with
the same arguments, so an option of `parser.parse_args()` that the file never assigns
holds one value on every rank."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.names import dotted

_PARSERS = frozenset({"parse_args", "parse_known_args"})
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)


def same_on_every_rank(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` is built only from literals and command-line options the file never assigns
    (`args.resume`, `args.load_step > 0`, `not opt.eval_only`)."""
    if isinstance(expr, _LITERALS) or (
        type(expr) is cst.Name and expr.value in ("True", "False", "None")
    ):
        return True
    if type(expr) is cst.UnaryOperation:
        return same_on_every_rank(ctx, expr.expression, at)
    if isinstance(expr, cst.BooleanOperation | cst.BinaryOperation):
        return same_on_every_rank(ctx, expr.left, at) and same_on_every_rank(ctx, expr.right, at)
    if type(expr) is cst.Comparison:
        return same_on_every_rank(ctx, expr.left, at) and all(
            same_on_every_rank(ctx, c.comparator, at) for c in expr.comparisons
        )
    if type(expr) is cst.Attribute:
        return _option(ctx, expr, at)
    return False


def _option(ctx: FileContext, expr: cst.Attribute, at: cst.CSTNode) -> bool:
    """`args.x` (or `args.x.y`) where `args` holds what `parse_args()` returned and nothing
    in the file assigns `args.x`."""
    key = dotted(expr)
    base = expr.value
    while type(base) is cst.Attribute:
        base = base.value
    if key is None or type(base) is not cst.Name or base.value in ("self", "cls"):
        return False
    parts = key.split(".")
    if any(ctx.bindings_of(".".join(parts[:n])) for n in range(2, len(parts) + 1)):
        return False
    held = [v.expr for v in ctx.resolver.values(base, at) if v.leaf]
    return bool(held) and all(_parsed(e) for e in held)


def _parsed(expr: cst.BaseExpression) -> bool:
    """`parser.parse_args()`, or `parser.parse_known_args()[0]`."""
    if type(expr) is cst.Subscript:
        expr = expr.value
    return (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value in _PARSERS
    )
