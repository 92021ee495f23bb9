"""Whether a rank test rests on a value or only on a name.

`ddplint.domain.ranks` recognises rank tests by what they read, names included (`rank == 0`,
`self.is_master`, `args.local_rank in [-1, 0]`): right for deciding what a rule may say, too
weak to prove a hang. A test is *traced* when its per-process value comes from a source
whose value differs between ranks: `dist.get_rank()` and the other rank functions, the
RANK / LOCAL_RANK environment variables, the index `mp.spawn` / `Process(target=...)`
passes to the function it starts, the `--local_rank` argument of a script that parses it,
the name the file hands to `init_process_group(rank=...)` (that value is this process's rank
whatever was added to it: `args.rank += gpu`),
arithmetic on one of those (`rank % ngpus`, `node * ngpus + gpu`), or a function (of this
file, a project module's summary, or a library) that returns a rank test. A test that only
spells a rank in a name (`if local_rank == 0:` with `local_rank` a parameter no caller in
sight passes, `if self.is_master:`) is not: the hang-class rules report it as unproven.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from ddplint.domain import domain_of
from ddplint.domain.apis import MAIN_PROCESS_NAME, RANK_ENV, RANK_FUNCTION
from ddplint.domain.gates import Gate
from ddplint.domain.project_view import project_of
from ddplint.domain.rank_kinds import spawned_functions
from ddplint.domain.ranks import Ranks, compares_with_none, last_name, strip_conversion
from ddplint.engine import Resolver
from ddplint.engine.resolve import argument
from ddplint.names import dotted

if TYPE_CHECKING:
    from ddplint.context import FileContext

_MAX_DEPTH = 4
_LAUNCHER_ARGUMENTS = frozenset({"--local_rank", "--local-rank"})
_INIT_PROCESS_GROUP = "torch.distributed.init_process_group"


class RankEvidence:
    """Traced or name-only rank tests of one file.

    `elsewhere(call)`: a call of another project module's function that returns a rank
    test computed in its body (`Project.returned_rank_test`); `flag_elsewhere(name)`: an
    attribute another project module sets to a traced rank test
    (`Project.rank_flag_traced`); `rank_elsewhere(name)`: an attribute the project's
    modules set to a traced rank (`Project.rank_attribute_traced`)."""

    def __init__(
        self,
        ranks: Ranks,
        resolver: Resolver,
        elsewhere: Callable[[cst.Call], bool] | None = None,
        flag_elsewhere: Callable[[str], bool] | None = None,
        rank_elsewhere: Callable[[str], bool] | None = None,
    ) -> None:
        self.ranks = ranks
        self.resolver = resolver
        self.elsewhere = elsewhere
        self.flag_elsewhere = flag_elsewhere
        self.rank_elsewhere = rank_elsewhere

    def gate_traced(self, gate: Gate) -> bool:
        """The gate's rank test is traced to a value; a main-only decorator is (its body,
        or the library's, tests the rank)."""
        if gate.condition is None:
            return True
        return self.test_traced(gate.condition.test, gate.node)

    def test_traced(
        self, test: cst.BaseExpression, at: cst.CSTNode, depth: int = _MAX_DEPTH
    ) -> bool:
        if depth < 0:
            return False
        while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            test = test.expression
        if type(test) is cst.BooleanOperation:
            parts = [p for p in (test.left, test.right) if self.ranks.side(p, at) is not None]
            return any(self.test_traced(p, at, depth - 1) for p in parts)
        if type(test) is cst.IfExp:  # `Logger() if rank == 0 else None`
            return self.test_traced(test.test, at, depth - 1)
        if type(test) is cst.Comparison and compares_with_none(test):
            return self._holder_traced(test.left, at, depth)  # `writer is not None`
        if type(test) is cst.Comparison:
            operands = [test.left, *(c.comparator for c in test.comparisons)]
            return any(
                self.value_traced(o, at, depth - 1)
                for o in operands
                if self.ranks.is_rank_value(o, at) or self.ranks.is_group_rank(o, at)
            )
        if type(test) is cst.Call:
            return self._call_returns_traced_test(test, depth)
        return (
            self._holder_traced(test, at, depth)
            or any(
                value.expr is not test
                and self.ranks.side(value.expr, value.at) is not None
                and self.test_traced(value.expr, value.at, depth - 1)
                for value in self.resolver.values(test, at)
            )
            or (
                type(test) is cst.Attribute
                and self.flag_elsewhere is not None
                and self.flag_elsewhere(test.attr.value)
            )
        )

    def _holder_traced(self, held: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        """The rank tests deciding where the object `held` exists are traced."""
        tests = self.ranks.holder_tests(held, at)
        return bool(tests) and all(self.test_traced(t, where, depth - 1) for t, where in tests)

    def _call_returns_traced_test(self, call: cst.Call, depth: int) -> bool:
        callees = self.resolver.callees(call)
        if callees:
            returns = [
                r for f in callees for r in self.resolver.model.returns.get(f, []) if r.value
            ]
            return bool(returns) and all(
                r.value is not None and self.test_traced(r.value, r, depth - 1) for r in returns
            )
        if self.resolver.model.imports.resolve(call.func) is not None:
            name = last_name(call.func) or ""
            return bool(MAIN_PROCESS_NAME.match(name))  # a library's main-process function
        return self.elsewhere is not None and self.elsewhere(call)

    def value_traced(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        """`expr` holds a value computed from a per-process source (module docstring)."""
        if depth < 0:
            return False
        for value in self.resolver.values(expr, at):
            if self._source(strip_conversion(value.expr), value.at, depth):
                return True
        return False

    def _source(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        if self.resolver.direct_environ_key(expr, at) in RANK_ENV:
            return True
        if type(expr) is cst.Call:
            name = last_name(expr.func)
            return name is not None and bool(RANK_FUNCTION.match(name))
        if type(expr) is cst.BinaryOperation:
            return self.value_traced(expr.left, at, depth - 1) or self.value_traced(
                expr.right, at, depth - 1
            )
        if dotted(expr) in self._process_group_ranks:
            return True
        if type(expr) is cst.Name:
            return self._spawn_index(expr, at)
        if type(expr) is cst.Attribute:
            name = expr.attr.value
            if name == "local_rank" and self._parses_local_rank:
                return True
            return self.rank_elsewhere is not None and self.rank_elsewhere(name)
        return False

    @cached_property
    def _process_group_ranks(self) -> frozenset[str]:
        """The names the file passes as `init_process_group(rank=...)`."""
        model = self.resolver.model
        found = set()
        for call in model.calls:
            if model.imports.resolve(call.func) == _INIT_PROCESS_GROUP:
                rank = argument(call, None, "rank")
                name = dotted(rank) if rank is not None else None
                if name:
                    found.add(name)
        return frozenset(found)

    @cached_property
    def _spawned(self) -> frozenset[str]:
        return spawned_functions(self.resolver)

    def _spawn_index(self, expr: cst.Name, at: cst.CSTNode) -> bool:
        """The first parameter of a function a process starter runs: the process index."""
        if not self._spawned:
            return False
        for binding in self.resolver.reaching(expr.value, at):
            owner = binding.owner
            if binding.kind != "param" or type(owner) is not cst.FunctionDef:
                continue
            params = [*owner.params.posonly_params, *owner.params.params]
            if owner.name.value in self._spawned and params and params[0].name.value == expr.value:
                return True
        return False

    @cached_property
    def _parses_local_rank(self) -> bool:
        """The file defines the launcher's `--local_rank` argument."""
        return any(
            type(s) is cst.SimpleString and s.raw_value in _LAUNCHER_ARGUMENTS
            for s in self.resolver.model.by_type.get(cst.SimpleString, [])
        )


def rank_evidence(ctx: FileContext) -> RankEvidence:
    """The evidence of `ctx`'s rank tests, asking the project about its modules' functions."""
    project = project_of(ctx)

    def elsewhere(call: cst.Call) -> bool:
        return project is not None and project.returned_rank_test(ctx, call) is not None

    def flag_elsewhere(name: str) -> bool:
        return project is not None and project.rank_flag_traced(ctx.path, name)

    def rank_elsewhere(name: str) -> bool:
        return project is not None and project.rank_attribute_traced(ctx.path, name)

    return RankEvidence(
        domain_of(ctx).ranks, ctx.resolver, elsewhere, flag_elsewhere, rank_elsewhere
    )
