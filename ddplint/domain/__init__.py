"""What the rules know about PyTorch distributed training, each concept defined once.

`apis`: the torch / torchvision / timm / HF names and environment variables;
`ranks`: rank values, world sizes, rank tests and their side; `rank_kinds`: global or
local rank; `gates`: rank-gated regions; `rank_decorators`: decorators that run a function on the
main process only;
`collectives`: collective calls and collective-issuing functions; `backward`: what reaches
`backward()`; `loops`: training loops and evaluation code; `versions`: code that runs only
on an old torch; `project_view`: what they ask of the project's other modules. `Domain`
bundles them for one file (`domain_of(ctx)`). The other modules hold the analyses several
rules or the project share, one concept each (`ddp_facts`: wrapped models and the older
per-file facts, `facts_of(ctx)`; saves, checkpoints, samplers, devices, processes, ...).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.backward import Backward, BackwardSite, Step
from ddplint.domain.collectives import Collectives
from ddplint.domain.gates import Gate, Gates
from ddplint.domain.loops import Loops
from ddplint.domain.project_view import ProjectView, project_of
from ddplint.domain.rank_kinds import RankKind, RankKinds
from ddplint.domain.rank_values import differs_by_rank
from ddplint.domain.ranks import Ranks, Side
from ddplint.domain.spawned_workers import index_parameter
from ddplint.domain.versions import OldTorch, TorchVersions
from ddplint.engine import Flow, Resolver


class Domain:
    """The domain questions about one file."""

    def __init__(
        self, resolver: Resolver, flow: Flow, project: ProjectView | None, context: FileContext
    ) -> None:
        self.ranks = Ranks(
            resolver,
            _world_size_elsewhere(project, context),
            _rank_test_elsewhere(project, context),
            _rank_passed_elsewhere(project, context),
            lambda func: index_parameter(context, func),
            _flag_elsewhere(project, context),
        )
        self.rank_kinds = RankKinds(resolver, _rank_kind_elsewhere(project, context))
        self.gates = Gates(
            self.ranks,
            flow,
            resolver,
            _decorator_elsewhere(project, context),
            _switch_elsewhere(project, context),
        )
        self.collectives = Collectives(resolver, flow, self.ranks, project, context)
        self.backward = Backward(resolver)
        self.loops = Loops(resolver, self.backward)
        self.versions = TorchVersions(resolver, flow)


def domain_of(ctx: FileContext) -> Domain:
    """The domain questions about `ctx`'s file, built once per file."""
    return ctx.memo(_domain)


def _domain(ctx: FileContext) -> Domain:
    return Domain(ctx.resolver, ctx.flow, project_of(ctx), ctx)


def _world_size_elsewhere(
    project: ProjectView | None, context: FileContext
) -> Callable[[cst.BaseExpression], bool] | None:
    """Whether an expression reads a world size kept in another project module."""
    if project is None:
        return None
    return lambda expr: project.holds_world_size(context, expr)


def _rank_test_elsewhere(
    project: ProjectView | None, context: FileContext
) -> Callable[[cst.Call], Side | None] | None:
    """Which side of a rank test a function of another project module returns."""
    if project is None:
        return None
    return lambda call: project.returned_rank_test(context, call)


def _flag_elsewhere(
    project: ProjectView | None, context: FileContext
) -> Callable[[str], Side | None] | None:
    """Which side of a rank test the project assigns every attribute of a name
    (`ddplint.domain.rank_flags`)."""
    if project is None:
        return None
    return lambda name: project.rank_flag(context.path, name)


def _rank_passed_elsewhere(
    project: ProjectView | None, context: FileContext
) -> Callable[[cst.FunctionDef, str], bool] | None:
    """Whether a call in another project module passes, for a function's parameter, a
    value computed from that process's rank there (`differs_by_rank` in the calling
    module): `get_loaders(..., local_rank=local_rank)` in `train.py` for `def
    get_loaders(..., local_rank=0)`."""
    if project is None:
        return None

    def ranked(other: FileContext, value: cst.BaseExpression, call: cst.Call) -> bool:
        return differs_by_rank(domain_of(other).ranks, value, call)

    return lambda func, name: project.passes_elsewhere(context, func, name, ranked)


def _rank_kind_elsewhere(
    project: ProjectView | None, context: FileContext
) -> Callable[[cst.Call], RankKind | None] | None:
    """The kind of rank a function of another project module returns, when known."""
    if project is None:
        return None
    return lambda call: project.returned_rank(context, call)


def _decorator_elsewhere(
    project: ProjectView | None, context: FileContext
) -> Callable[[cst.BaseExpression], bool] | None:
    """Whether a decorator names a main-only decorator of another project module."""
    if project is None:
        return None
    return lambda expr: project.main_only_decorator(context, expr)


def _switch_elsewhere(
    project: ProjectView | None, context: FileContext
) -> Callable[[cst.BaseExpression], bool | None] | None:
    """The value of a distributed switch of the project under which its job starts."""
    if project is None:
        return None
    return lambda term: project.switch_value(context, term)


__all__ = [
    "Backward",
    "BackwardSite",
    "Collectives",
    "Domain",
    "Gate",
    "Gates",
    "Loops",
    "OldTorch",
    "RankKind",
    "RankKinds",
    "Ranks",
    "Side",
    "Step",
    "TorchVersions",
    "domain_of",
]
