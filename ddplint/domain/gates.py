"""One definition of "rank-gated region": code that runs on some ranks only, because an
enclosing branch or an earlier early exit tests the rank, or because its function is
decorated to run on the main process only (`@rank_zero_only`, `@master_only`)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.domain.apis import MAIN_ONLY_DECORATOR
from ddplint.domain.ranks import Ranks, Side, last_name
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
    def test(self) -> cst.CSTNode:
        """The rank test (or decorator expression) to quote."""
        if self.condition is None:
            assert isinstance(self.node, cst.Decorator)
            return self.node.decorator
        return self.condition.test


class Gates:
    """Rank gates of the nodes of one file."""

    def __init__(self, ranks: Ranks, flow: Flow, resolver: Resolver) -> None:
        self.ranks = ranks
        self.flow = flow
        self.resolver = resolver

    def gate(self, node: cst.CSTNode) -> Gate | None:
        """The innermost rank gate `node` runs under in its function, else the function's
        main-only decorator, else None."""
        for condition in self.flow.conditions(node):
            side = self.ranks.side(condition.test, condition.gate)
            if side is not None:
                return Gate(condition.gate, side if condition.holds else side.negated(), condition)
        frame = self.resolver.model.frame(node)
        if isinstance(frame, cst.FunctionDef):
            decorator = main_only_decorator(frame)
            if decorator is not None and self._in_body(node, frame):
                return Gate(decorator, Side.MAIN, None)
        return None

    def _in_body(self, node: cst.CSTNode, func: cst.FunctionDef) -> bool:
        return self.resolver.model.is_inside(node, func.body)

    def gates(self, node: cst.CSTNode) -> list[Gate]:
        """Every rank gate of `node` in its function, innermost first."""
        found = []
        for condition in self.flow.conditions(node):
            side = self.ranks.side(condition.test, condition.gate)
            if side is not None:
                found.append(
                    Gate(condition.gate, side if condition.holds else side.negated(), condition)
                )
        return found


def main_only_decorator(func: cst.FunctionDef) -> cst.Decorator | None:
    """`@rank_zero_only`, `@master_only`, `@accelerator.on_main_process`, ..."""
    for decorator in func.decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        name = last_name(expr)
        if name is not None and MAIN_ONLY_DECORATOR.match(name):
            return decorator
    return None
