"""What a file's domain questions ask of the other modules of its project.

`ddplint.project.Project` answers them; the domain names only this protocol, so that it does
not import the project, which builds on the per-file analyses. Each question takes the file's
`FileContext` (typed `Any` here: the context, too, builds on the domain).
"""

from __future__ import annotations

from typing import Any, Protocol

import libcst as cst

from ddplint.domain.rank_kinds import RankKind
from ddplint.domain.ranks import Side


class ProjectView(Protocol):
    """The project look-ups of `Domain` and `Collectives`."""

    def holds_world_size(self, ctx: Any, expr: cst.BaseExpression) -> bool: ...

    def returned_rank_test(self, ctx: Any, call: cst.Call) -> Side | None: ...

    def returned_rank(self, ctx: Any, call: cst.Call) -> RankKind | None: ...

    def main_only_decorator(self, ctx: Any, expr: cst.BaseExpression) -> bool: ...

    def switch_value(self, ctx: Any, term: cst.BaseExpression) -> bool | None: ...

    def helper_issues_collective(self, ctx: Any, call: cst.Call) -> bool: ...

    def helper_surely_issues_collective(self, ctx: Any, call: cst.Call) -> bool: ...
