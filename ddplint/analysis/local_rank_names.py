"""Variables that hold the local rank (`local_rank = int(os.environ["LOCAL_RANK"])`, a
`local_rank` parameter, `self.local_rank`), found once per file and asked at any node."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import Binding, FileContext
from ddplint.facts import environ_key, strip_conversion

LOCAL_RANK_NAME = re.compile(r"^(ddp_)?local_rank$")


class LocalRankNames:
    """The bindings that may hold the local rank, sorted once per file by frame, so that
    asking at every hard-coded device stays linear in the file."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        # (name, is attribute, binding), in the order of `ctx.bindings`, which breaks ties.
        self.by_scope: dict[cst.CSTNode, list[tuple[int, str, bool, Binding]]] = {}
        attributes: list[tuple[int, int, str, Binding]] = []
        index = 0
        for name, bindings in ctx.bindings.items():
            last = name.rpartition(".")[2]
            is_attr = name.startswith("self.")
            for binding in bindings:
                if binding.kind in ("augassign", "for", "with"):
                    continue
                named = bool(LOCAL_RANK_NAME.match(last))
                if not named and (
                    binding.kind == "param" or not _env_local_rank(ctx, binding.value)
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
        module's), e.g. `local_rank = int(os.environ["LOCAL_RANK"])` or a `local_rank`
        parameter; failing that, a `self.` attribute bound anywhere."""
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
            for minus_order, index, name, binding in self.attributes:
                if binding.scope is scope or binding.scope is ctx.module:
                    continue
                rank = (0, -minus_order, -index, name)
                if best is None or rank > best:
                    best = rank
                break
        return best[3] if best else None


def _env_local_rank(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    expr = strip_conversion(expr, ("int",))
    return environ_key(ctx, expr) == "LOCAL_RANK"
