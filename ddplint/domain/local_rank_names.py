"""Variables that hold the local rank (`local_rank = int(os.environ["LOCAL_RANK"])`, a
`local_rank` parameter, `gpu = rank % torch.cuda.device_count()`, `self.local_rank`),
found once per file and asked at any node: the one answer the fixes that write the local
rank into the code use."""

from __future__ import annotations

import libcst as cst

from ddplint.context import Binding, FileContext
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import environ_key, strip_conversion
from ddplint.domain.rank_kinds import LOCAL_RANK_NAME, RankKind

__all__ = ["LOCAL_RANK_NAME", "LocalRankNames"]


class LocalRankNames:
    """The bindings that may hold the local rank, sorted once per file by frame, so that
    asking at every hard-coded device stays linear in the file."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        # (index, name, is attribute, binding); the index is the order of `ctx.bindings`,
        # which breaks ties.
        self.by_scope: dict[cst.CSTNode, list[tuple[int, str, bool, Binding]]] = {}
        attributes: list[tuple[int, int, str, Binding]] = []
        index = 0
        for name, bindings in ctx.bindings.items():
            is_attr = name.startswith("self.")
            for binding in bindings:
                if binding.kind in ("augassign", "for", "with") or not _holds_local_rank(
                    ctx, name, binding
                ):
                    continue
                index += 1
                self.by_scope.setdefault(binding.scope, []).append((index, name, is_attr, binding))
                if is_attr:
                    attributes.append((-ctx.order[binding.statement], index, name, binding))
        # `self.x` bindings of every frame, latest first.
        self.attributes = sorted(attributes, key=lambda a: a[:2])

    def at(self, at: cst.CSTNode) -> str | None:
        """A variable holding the local rank that is bound before `at` in its scope (or the
        module's), the innermost and latest first; failing that, a `self.` attribute that
        another method of the same class binds."""
        ctx = self.ctx
        scope = ctx.scope(at)
        # Rank: the innermost scope, then the latest binding, then the first in the table.
        best: tuple[int, int, int, str] | None = None
        frames = (scope,) if scope is ctx.module else (scope, ctx.module)
        for frame in frames:
            inner = 1 if frame is scope else 0
            for index, name, is_attr, binding in self.by_scope.get(frame, ()):
                if (
                    not is_attr
                    and binding.kind != "param"
                    and not ctx.before(binding.statement, at)
                ):
                    continue
                rank = (inner, ctx.order[binding.statement], -index, name)
                if best is None or rank > best:
                    best = rank
        if best is None or best[0] == 0:
            cls = ctx.model.enclosing_class(scope)
            for minus_order, index, name, binding in self.attributes:
                if binding.scope is scope or binding.scope is ctx.module:
                    continue
                if cls is None or ctx.model.enclosing_class(binding.scope) is not cls:
                    continue
                rank = (0, -minus_order, -index, name)
                if best is None or rank > best:
                    best = rank
                break
        return best[3] if best else None


def _holds_local_rank(ctx: FileContext, name: str, binding: Binding) -> bool:
    """Named for the local rank, or assigned from `LOCAL_RANK`; a variable named for a rank
    or a GPU assigned a value that holds the local rank (`rank % ngpus_per_node`)."""
    if LOCAL_RANK_NAME.match(name.rpartition(".")[2]):
        return True
    if binding.kind != "assign":
        return False
    if environ_key(ctx, strip_conversion(binding.value, ("int",))) == "LOCAL_RANK":
        return True
    kind = domain_of(ctx).rank_kinds.kind(binding.value, binding.statement)
    return ("rank" in name or "gpu" in name) and kind is RankKind.LOCAL
