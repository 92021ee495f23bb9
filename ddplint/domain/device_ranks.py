"""Rank kinds (`ddplint.domain.rank_kinds`) where a device or a process group is chosen:
the kind of rank a device expression is built from, and whether `init_process_group` is
given node-local values (a job of one node, where local and global ranks agree)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import keyword
from ddplint.domain.devices import device_string_index, is_device_count
from ddplint.domain.rank_kinds import RankKind, combined
from ddplint.names import dotted


def device_kind(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 4
) -> RankKind | None:
    """The kind of rank a device is given as: a rank, `f"cuda:{rank}"`,
    `"cuda:{}".format(rank)`, `"cuda:%d" % rank`, or a name holding one of them."""
    kinds = domain_of(ctx).rank_kinds
    kind = kinds.kind(expr, at)
    if kind is not None or depth == 0:
        return kind
    index = device_string_index(expr)
    if index is not None:
        return kinds.kind(index, at)
    if dotted(expr) is None:
        return None
    return combined(
        device_kind(ctx, v.expr, v.at, depth - 1)
        for v in ctx.resolver.values(expr, at, 1)
        if v.expr is not expr
        and (device_string_index(v.expr) is not None or dotted(v.expr) is not None)
    )


def single_node_group(ctx: FileContext) -> tuple[bool, bool]:
    """Whether `init_process_group` itself gets the local rank / the local GPU count."""
    local_group = one_node_group = False
    for call in ctx.calls_to("torch.distributed.init_process_group"):
        rank = keyword(call, "rank")
        if rank is not None and domain_of(ctx).rank_kinds.kind(rank.value, call) is RankKind.LOCAL:
            local_group = True
        size = keyword(call, "world_size")
        if size is not None and is_device_count(ctx, size.value):
            one_node_group = True
    return local_group, one_node_group
