"""Control flow inside one function: what leaves a block, and the conditions a node runs
under (enclosing branches, and earlier `if ...: return` / `continue` / `raise` / exits).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from ddplint.engine.model import SemanticModel
from ddplint.names import dotted

EXIT_CALLS = frozenset({"sys.exit", "os._exit", "os.abort", "exit", "quit"})
Statement = cst.BaseStatement | cst.BaseSmallStatement
_SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module})
# A block's statements (by id), and its leaving `if`s: source orders and conditions.
_BlockExits = tuple[set[int], list[int], list["Condition"]]


@dataclass(frozen=True)
class Condition:
    """`node` runs only when `test` is `holds` (true or false).

    `gate` is the statement or expression that decides it: the enclosing `if` / `while` /
    conditional expression, or for an early exit the earlier `if` whose branch leaves."""

    test: cst.BaseExpression
    holds: bool
    gate: cst.CSTNode
    early_exit: bool = False

    def terms(self) -> list[tuple[cst.BaseExpression, bool]]:
        """The terms the condition fixes, each with its value: `a and b` holding fixes
        both true, `a or b` failing fixes both false, `not a` fixes `a` the other way."""
        return fixed_terms(self.test, self.holds)


def fixed_terms(test: cst.BaseExpression, holds: bool) -> list[tuple[cst.BaseExpression, bool]]:
    """The terms `test == holds` fixes (see `Condition.terms`)."""
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, holds = test.expression, not holds
    operands = logical_operands(test)
    if operands is not None and operands[2] == holds:
        return [*fixed_terms(operands[0], holds), *fixed_terms(operands[1], holds)]
    return [(test, holds)]


def logical_terms(
    test: cst.BaseExpression, negated: bool = False
) -> Iterator[tuple[cst.BaseExpression, bool]]:
    """The operands of a test's `and`/`or`/`not`, split all the way down, each with whether
    an odd number of `not`s applies to it."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        yield from logical_terms(test.expression, not negated)
        return
    operands = logical_operands(test)
    if operands is not None:
        yield from logical_terms(operands[0], negated)
        yield from logical_terms(operands[1], negated)
        return
    yield test, negated


def logical_operands(
    test: cst.BaseExpression,
) -> tuple[cst.BaseExpression, cst.BaseExpression, bool] | None:
    """(left, right, whether it is an `and`) of `a and b` / `a or b`, and of `a & b` /
    `a | b` on two booleans (`(rank == 0) & (epoch % k == 0)`), which mean the same."""
    if type(test) is cst.BooleanOperation:
        return test.left, test.right, type(test.operator) is cst.And
    if (
        type(test) is cst.BinaryOperation
        and isinstance(test.operator, (cst.BitAnd, cst.BitOr))
        and _is_boolean(test.left)
        and _is_boolean(test.right)
    ):
        return test.left, test.right, type(test.operator) is cst.BitAnd
    return None


def _is_boolean(expr: cst.BaseExpression) -> bool:
    """`expr` is certainly a `bool`: a comparison, a `not`, or a logical operation of such."""
    if type(expr) is cst.Comparison:
        return True
    if type(expr) is cst.UnaryOperation:
        return type(expr.operator) is cst.Not
    operands = logical_operands(expr)
    return operands is not None and _is_boolean(operands[0]) and _is_boolean(operands[1])


def statements(block: cst.CSTNode | None) -> Sequence[Statement]:
    """The statements of a suite, `else` clause or statement line."""
    if isinstance(block, (cst.Else, cst.Finally, cst.ExceptHandler, cst.MatchCase)):
        block = block.body
    if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)):
        return block.body
    if type(block) is cst.SimpleStatementLine:
        return block.body
    return ()


def is_exit_call(node: cst.CSTNode, qualname: Callable[[cst.BaseExpression], str | None]) -> bool:
    """`sys.exit()`, `os._exit(1)`, `exit()`, ... as a statement."""
    return (
        type(node) is cst.Expr and type(node.value) is cst.Call and calls_exit(node.value, qualname)
    )


def calls_exit(call: cst.Call, qualname: Callable[[cst.BaseExpression], str | None]) -> bool:
    """`call` ends the process: `sys.exit()`, `os._exit(1)`, `exit()`, ..."""
    return (qualname(call.func) or dotted(call.func) or "") in EXIT_CALLS


class Flow:
    """Leaving and conditions, for one model."""

    def __init__(self, model: SemanticModel) -> None:
        self.model = model
        self._leaves: dict[tuple[cst.CSTNode, bool], bool] = {}
        # By node identity, each entry keeping its node (see `Resolver`).
        self._conditions: dict[int, tuple[cst.CSTNode, list[Condition]]] = {}
        self._block_exits: dict[cst.CSTNode, _BlockExits] = {}

    def qualname(self, expr: cst.BaseExpression) -> str | None:
        return self.model.imports.resolve(expr)

    def leaves(self, block: cst.CSTNode | None, stops_only: bool = False) -> bool:
        """Running `block` never falls through to the code after it: one of its statements
        is `return`, `raise`, `continue`, `break` or a process exit, or an `if`/`else`,
        `try` or `with` all of whose ways out do. With `stops_only`, only `raise` and
        process exits count (the block does not go on at all). One definition of
        "leaves"."""
        if block is None:
            return False
        key = (block, stops_only)
        known = self._leaves.get(key)
        if known is None:
            known = self._leaves[key] = self.sequence_leaves(statements(block), stops_only)
        return known

    def sequence_leaves(self, body: Sequence[cst.CSTNode], stops_only: bool = False) -> bool:
        """Running these statements in order never reaches the end of them."""
        return any(self._statement_leaves(s, stops_only) for s in body)

    def _statement_leaves(self, statement: cst.CSTNode, stops_only: bool) -> bool:
        if type(statement) is cst.SimpleStatementLine:
            return self.sequence_leaves(statement.body, stops_only)
        if type(statement) is cst.Raise:
            return True
        if isinstance(statement, (cst.Return, cst.Continue, cst.Break)):
            return not stops_only
        if type(statement) is cst.Expr:
            return is_exit_call(statement, self.qualname)
        if type(statement) is cst.If:
            orelse = statement.orelse
            if orelse is None:
                return False
            other = (
                self._statement_leaves(orelse, stops_only)
                if type(orelse) is cst.If
                else self.leaves(orelse, stops_only)
            )
            return other and self.leaves(statement.body, stops_only)
        if isinstance(statement, (cst.Try, cst.TryStar)):
            if statement.finalbody is not None and self.leaves(statement.finalbody, stops_only):
                return True
            completes = not self.leaves(statement.body, stops_only) and not (
                statement.orelse is not None and self.leaves(statement.orelse, stops_only)
            )
            return not completes and all(self.leaves(h, stops_only) for h in statement.handlers)
        if type(statement) is cst.With:
            return self.leaves(statement.body, stops_only)
        return False

    def conditions(self, node: cst.CSTNode) -> list[Condition]:
        """The conditions `node` runs under in its function (or lambda, class body or
        module), innermost first: enclosing branches, and earlier sibling `if`s with a
        branch that leaves (`if rank != 0: return` makes what follows run where
        `rank != 0` is false)."""
        entry = self._conditions.get(id(node))
        if entry is None or entry[0] is not node:
            entry = self._conditions[id(node)] = (node, self._find_conditions(node))
        return list(entry[1])

    def _find_conditions(self, node: cst.CSTNode) -> list[Condition]:
        found: list[Condition] = []
        model = self.model
        child = node
        # Exact types (parsed trees hold no subclasses): `isinstance` on LibCST's ABC-based
        # classes is slow when it fails, as it does for most ancestors.
        for ancestor in model.ancestors(node):
            if type(ancestor) in _SCOPES:
                if type(ancestor) is cst.Module:  # a function's body has no exits before it
                    found.extend(self._early_exits(ancestor, child))
                break
            if type(ancestor) is cst.If or type(ancestor) is cst.IfExp:
                if child is not ancestor.test:
                    found.append(Condition(ancestor.test, child is ancestor.body, ancestor))
            elif type(ancestor) is cst.While:
                if child is ancestor.body:
                    found.append(Condition(ancestor.test, True, ancestor))
            elif type(ancestor) is cst.BooleanOperation:
                if child is ancestor.right:
                    holds = type(ancestor.operator) is cst.And
                    found.append(Condition(ancestor.left, holds, ancestor))
            elif type(ancestor) is cst.IndentedBlock or type(ancestor) is cst.SimpleStatementSuite:
                found.extend(self._early_exits(ancestor, child))
            child = ancestor
        return found

    def _early_exits(self, block: cst.CSTNode, child: cst.CSTNode) -> list[Condition]:
        """Conditions from the statements of `block` before `child` that leave on one
        branch: after `if c: return`, the rest of the block runs where `c` is false."""
        exits = self._block_exits.get(block)
        if exits is None:
            exits = self._block_exits[block] = self._exits_of(block)
        members, starts, conditions = exits
        if id(child) in members:
            count = bisect.bisect_left(starts, self.model.position(child))
        else:  # not one of its statements: every exit of the block
            count = len(conditions)
        return conditions[count - 1 :: -1] if count else []  # innermost (latest) first

    def _exits_of(self, block: cst.CSTNode) -> _BlockExits:
        """The statements of `block`, and the `if` statements among them with a branch
        that leaves, as their source order and their conditions (built once per block)."""
        position = self.model.position
        starts: list[int] = []
        conditions: list[Condition] = []
        body = block.body if type(block) is cst.Module else statements(block)
        for statement in body:
            if type(statement) is cst.If:
                condition = self._exit_condition(statement)
                if condition is not None:
                    starts.append(position(statement))
                    conditions.append(condition)
        return {id(statement) for statement in body}, starts, conditions

    def _exit_condition(self, statement: cst.If) -> Condition | None:
        orelse = statement.orelse
        body_leaves = self.leaves(statement.body)
        if type(orelse) is cst.If:  # `if a: return` / `elif b: ...`
            return Condition(statement.test, False, statement, True) if body_leaves else None
        else_leaves = self.leaves(orelse) if orelse is not None else False
        if body_leaves and not else_leaves:
            return Condition(statement.test, False, statement, True)
        if else_leaves and not body_leaves:
            return Condition(statement.test, True, statement, True)
        return None
