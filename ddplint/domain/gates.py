"""One definition of "rank-gated region": code that runs on some ranks only, because an
enclosing branch or an earlier early exit tests the rank, or because its function is
decorated to run on the main process only (`@rank_zero_only`, `ddplint.domain.rank_decorators`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from ddplint.domain.rank_decorators import RankDecorators
from ddplint.domain.ranks import Ranks, Side
from ddplint.engine import Condition, Flow, Resolver


@dataclass(frozen=True)
class Gate:
    """Why a node runs on some ranks only.

    `node` is what decides it: the `if` (or `while`, conditional expression, boolean
    operation) whose test is a rank test, or the decorator. `side` is the ranks the node
    runs on. `condition` is None for a decorator."""

    node: cst.CSTNode
    side: Side
    condition: Condition | None

    def describe(self, code: str) -> str:
        """How a message names the gate; `code` is the source of the test or decorator."""
        condition = self.condition
        if condition is None:
            return f"in a function decorated `@{code}`"
        if condition.early_exit:
            return f"after an early exit on `{code}`, so only where it is false"
        if condition.holds:
            return f"only where `{code}` holds"
        return f"only where `{code}` is false"

    @property
    def turned_away(self) -> cst.CSTNode | None:
        """What the ranks the gate turns away run instead: the other branch of its `if` or
        conditional expression (for an early exit, the branch that leaves); None for a
        decorator, another kind of gate, or an `if` without that branch."""
        condition, node = self.condition, self.node
        if condition is None or not isinstance(node, cst.If | cst.IfExp):
            return None
        return node.orelse if condition.holds else node.body

    @property
    def test(self) -> cst.CSTNode:
        """The rank test (or decorator expression) to quote."""
        if self.condition is None:
            assert type(self.node) is cst.Decorator
            return self.node.decorator
        return self.condition.test


class Gates:
    """Rank gates of the nodes of one file."""

    def __init__(
        self,
        ranks: Ranks,
        flow: Flow,
        resolver: Resolver,
        decorator_elsewhere: Callable[[cst.BaseExpression], bool] | None = None,
        switch: Callable[[cst.BaseExpression], bool | None] | None = None,
    ) -> None:
        """`decorator_elsewhere` says whether a decorator names a main-only decorator of
        another project module; `switch`, for a flag read as a test, the value under which
        the project starts its job when the flag is a distributed switch of the project
        (`Project.switch_value`)."""
        self.ranks = ranks
        self.flow = flow
        self.resolver = resolver
        self._switch = switch
        self.decorators = RankDecorators(resolver, self._main_only_test, decorator_elsewhere)

    def main_only_decorator(self, func: cst.FunctionDef) -> cst.Decorator | None:
        """The decorator that runs `func` on the main process only (`@rank_zero_only`, or
        a project decorator whose wrapper calls it under `if rank == 0:`), else None."""
        return self.decorators.of(func)

    def _main_only_test(self, node: cst.CSTNode) -> bool:
        """A rank test of `node`'s function lets it run on the main process only."""
        return any(g.side is Side.MAIN for g in self.gates(node))

    def gate(self, node: cst.CSTNode) -> Gate | None:
        """The innermost rank gate `node` runs under in its function, else the function's
        main-only decorator, else, in a nested function, the gate of its `def` (the function
        exists only where that ran: a hook defined after `if rank != 0: return`), else None."""
        conditions = self.flow.conditions(node)
        for condition in conditions:
            gate = self._gate(condition, conditions)
            if gate is not None:
                return gate
        model = self.resolver.model
        frame = model.frame(node)
        if type(frame) is cst.FunctionDef and self._in_body(node, frame):
            decorator = self.main_only_decorator(frame)
            if decorator is not None:
                return Gate(decorator, Side.MAIN, None)
            if type(model.frame(frame)) is cst.FunctionDef:
                return self.gate(frame)
        return None

    def single_process(self, node: cst.CSTNode) -> bool:
        """`node` runs only when the job is not distributed: under `if world_size == 1:`,
        `if not args.distributed:`, `else` of `if strategy == "ddp":`, after
        `if dist.get_world_size() != 1: raise`, or where a distributed switch of the project
        is off (`if not cfg.enable_fsdp:`); and under no condition that holds only when it
        is (`elif strategy == "fsdp":` after `if strategy == "ddp":`)."""
        return self._mode_sides(node) == {True}

    def distributed_only(self, node: cst.CSTNode) -> bool:
        """`node` runs only when the job is distributed: under `if args.local_rank != -1:`,
        `if "WORLD_SIZE" in os.environ:`, `else` of `if world_size == 1:`, and under no
        condition that holds only when it is not (`single_process`'s mirror)."""
        return self._mode_sides(node) == {False}

    def _mode_sides(self, node: cst.CSTNode) -> set[bool]:
        """For each mode test around `node`, whether `node` runs on its one-process side."""
        sides: set[bool] = set()
        conditions = list(self.flow.conditions(node))
        for condition in conditions:
            when = self.ranks.single_process_when(condition.test)
            if when is not None:
                sides.add(when == condition.holds)
                continue
            for term, value in self._left_standing(condition, conditions):
                when = self.ranks.single_process_when(term)
                if when is not None:  # `local_rank == -1 and args.evaluate` holding
                    sides.add(when == value)
                elif self._switch is not None:
                    on = self._switch(term)
                    if on is not None:
                        sides.add(value != on)
        return sides

    def _left_standing(
        self, condition: Condition, conditions: list[Condition]
    ) -> list[tuple[cst.BaseExpression, bool]]:
        """The terms `condition` fixes; for a disjunction (`a and b` failing: `else` of
        `if distributed and torch.cuda.is_available():`) whose other terms the remaining
        conditions fix the other way (`"cuda:0" if torch.cuda.is_available() else
        "cpu"`), the one term left standing (`distributed` false)."""
        alternatives = _disjuncts(condition.test, condition.holds)
        if not alternatives:
            return condition.terms()
        fixed = [
            (term, value)
            for other in conditions
            if other is not condition
            for term, value in other.terms()
        ]
        standing = [
            (term, value)
            for term, value in alternatives
            if not any(held != value and term.deep_equals(known) for known, held in fixed)
        ]
        return standing if len(standing) == 1 else condition.terms()

    def opens_to_every_rank(self, gate: Gate) -> bool:
        """Where the gate lets its node run, its test is a disjunction with a term that is
        not a rank test (`if use_fsdp or rank == 0:`, after an early exit on
        `not use_fsdp and not is_rank0`): where that term holds, every rank runs the node."""
        condition = gate.condition
        if condition is None:
            return False
        terms = _disjuncts(condition.test, condition.holds)
        return any(self.ranks.side(term, condition.gate) is None for term, _ in terms)

    def keeps_out(self, gate: Gate) -> bool:
        """In a distributed run, the gate keeps its node from some ranks whatever the other
        terms of its test hold: no disjunct is a flag that lets every rank past (after
        `if rank == 0 and args.test_only: return`, every rank runs on where the flag is
        off; `if rank == 0 or not args.distributed:` still keeps the others out of a
        distributed run)."""
        condition = gate.condition
        if condition is None:
            return True
        return not any(
            self.ranks.side(term, condition.gate) is None and not self.ranks.is_mode_check(term)
            for term, _ in _disjuncts(condition.test, condition.holds)
        )

    def _in_body(self, node: cst.CSTNode, func: cst.FunctionDef) -> bool:
        return self.resolver.model.is_inside(node, func.body)

    def gates(self, node: cst.CSTNode) -> list[Gate]:
        """Every rank gate of `node` in its function, innermost first."""
        conditions = self.flow.conditions(node)
        return [g for c in conditions if (g := self._gate(c, conditions)) is not None]

    def _gate(self, condition: Condition, conditions: list[Condition]) -> Gate | None:
        side = self.ranks.side(condition.test, condition.gate)
        if side is None or self._opened(condition, conditions):
            return None
        return Gate(condition.gate, side if condition.holds else side.negated(), condition)

    def _opened(self, condition: Condition, conditions: list[Condition]) -> bool:
        """The condition is a disjunction with a term that is not a rank test, and another
        condition of the node makes that term hold on every rank: after
        `if not use_fsdp and not is_rank0: return`, inside `if use_fsdp:` every rank runs."""
        terms = _disjuncts(condition.test, condition.holds)
        if not terms:
            return False
        code = self.resolver.model.module.code_for_node
        for term, value in terms:
            if self.ranks.side(term, condition.gate) is not None:
                continue
            text = code(term).strip()
            for other in conditions:
                if other is condition:
                    continue
                for fixed, fixed_value in _literals_of(other.test, other.holds):
                    if fixed_value == value and code(fixed).strip() == text:
                        return True
        return False


def _literal(test: cst.BaseExpression, holds: bool) -> tuple[cst.BaseExpression, bool]:
    """`(x, False)` for `not x` holding: the term without its negations."""
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, holds = test.expression, not holds
    return test, holds


def _disjuncts(test: cst.BaseExpression, holds: bool) -> list[tuple[cst.BaseExpression, bool]]:
    """The terms of `test == holds` read as a disjunction (`a or b` holding, `a and b`
    failing), each as (term, the value that satisfies it); [] when it is not one."""
    test, holds = _literal(test, holds)
    if type(test) is not cst.BooleanOperation:
        return []
    if (type(test.operator) is cst.Or) != holds:
        return []
    found: list[tuple[cst.BaseExpression, bool]] = []
    for part in (test.left, test.right):
        inner = _disjuncts(part, holds)
        found.extend(inner or [_literal(part, holds)])
    return found


def _literals_of(test: cst.BaseExpression, holds: bool) -> list[tuple[cst.BaseExpression, bool]]:
    """The terms `test == holds` fixes (`a and b` holding fixes both; `not a` fixes `a`)."""
    test, holds = _literal(test, holds)
    if type(test) is cst.BooleanOperation and (type(test.operator) is cst.And) == holds:
        return [*_literals_of(test.left, holds), *_literals_of(test.right, holds)]
    return [(test, holds)]
