"""Where a script that counts its processes over several machines pins the rendezvous
address to the machine each process runs on."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import WORLD_SIZE_NAME
from ddplint.domain.environment_writes import EnvironmentWrite, constant_writes
from ddplint.domain.rendezvous_address import (
    ADDRESS,
    LOOPBACK,
    address_writes,
    meets_through_environment,
)
from ddplint.names import dotted

# `args.nodes`, `num_nodes`, `n_machines`, `num_of_node`, `nnodes`: how many machines.
NODE_COUNT = re.compile(
    r"^(?:(?:n|num|number)_?(?:of_)?(?:nodes?|machines?)|nodes|machines|nnodes|node_?count)$"
)


@dataclass(frozen=True)
class LoopbackSpan:
    """`write` pins MASTER_ADDR to this machine while `product` counts processes over
    `nodes` machines."""

    write: EnvironmentWrite
    product: cst.BinaryOperation
    nodes: cst.BaseExpression


def loopback_spans(ctx: FileContext) -> list[LoopbackSpan]:
    """Each `os.environ["MASTER_ADDR"] = "localhost"` (a loopback address written in the
    code, the only address the file writes), in a file whose process group meets through
    the environment and whose world size multiplies a machine count (`args.world_size =
    args.gpus * args.nodes`), not written under a test of that count (`if args.nodes ==
    1:`) in a file that does not assert it is one."""
    writes = constant_writes(ctx, ADDRESS)
    loopback = [w for w in writes if all(v in LOOPBACK for v in w.literals)]
    if not loopback or len(writes) != address_writes(ctx) or not meets_through_environment(ctx):
        return []
    spanning = _node_products(ctx)
    if not spanning:
        return []
    product, nodes = spanning[0]
    count = _last_name(nodes) or ""
    if re.search(rf"assert\s[^\n]*\b{re.escape(count)}\s*==\s*1\b", ctx.source):
        return []
    return [
        LoopbackSpan(w, product, nodes)
        for w in loopback
        if not any(count in ctx.code(c.test) for c in ctx.flow.conditions(w.assign))
    ]


def _node_products(ctx: FileContext) -> list[tuple[cst.BinaryOperation, cst.BaseExpression]]:
    """`a * b` expressions with a machine count as a factor whose result is a world size:
    assigned to a name for one, or passed as `world_size=` or `nprocs=`."""
    found = []
    for node in ctx.nodes_of(cst.BinaryOperation):
        assert type(node) is cst.BinaryOperation
        if type(node.operator) is not cst.Multiply:
            continue
        nodes = next(
            (f for f in (node.left, node.right) if NODE_COUNT.match(_last_name(f) or "")), None
        )
        if nodes is not None and _is_world_size(ctx, node) and not _one_machine(ctx, nodes, node):
            found.append((node, nodes))
    return found


def _one_machine(ctx: FileContext, nodes: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """Every value the machine count `nodes` holds at `at` is the number 1 (`args.nodes =
    1` just before the product): the world spans one machine."""
    values = [v.expr for v in ctx.resolver.values(nodes, at) if v.leaf]
    return bool(values) and all(type(v) is cst.Integer and v.evaluated_value == 1 for v in values)


def _is_world_size(ctx: FileContext, product: cst.BinaryOperation) -> bool:
    parent = ctx.parent(product)
    if type(parent) is cst.Arg:
        return parent.keyword is not None and parent.keyword.value in ("world_size", "nprocs")
    if type(parent) is cst.Assign and len(parent.targets) == 1:
        return WORLD_SIZE_NAME.search(_last_name(parent.targets[0].target) or "") is not None
    return False


def _last_name(expr: cst.BaseExpression) -> str | None:
    """`nodes` for `args.nodes`, `nodes` and `cfg["nodes"]`."""
    if type(expr) is cst.Subscript and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if type(index) is cst.Index and type(index.value) is cst.SimpleString:
            key = index.value.evaluated_value
            return key if isinstance(key, str) else None
        return None
    name = dotted(expr)
    return name.rpartition(".")[2] if name else None
