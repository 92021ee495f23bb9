"""Code that never runs: a branch whose test the literals the resolver knows decide against
it (`world_size = 1` then `if world_size > 1:`, `DEBUG = False` then `if DEBUG:`), the
code after an early exit whose test they decide for it, or code that needs one test both
true and false (`else` of `if args.distributed:` after `if not args.distributed: raise`)."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import libcst as cst

from ddplint.engine.flow import Condition, Flow
from ddplint.engine.resolve import Resolver, sole_constructor, top_level_asserts
from ddplint.names import dotted

# The comparisons of literals both this module and others evaluate.
COMPARISONS: dict[type[cst.BaseCompOp], Callable[[Any, Any], bool]] = {
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
}


def never_runs(flow: Flow, resolver: Resolver, node: cst.CSTNode) -> bool:
    """A condition `node` runs under in its function is certainly false, or two of them
    need one value both true and false (`contradicted`)."""
    conditions = flow.conditions(node)
    return any(decided(resolver, c.test, c.gate) is (not c.holds) for c in conditions) or (
        len(conditions) > 1 and contradicted(resolver, conditions)
    )


def contradicted(resolver: Resolver, conditions: list[Condition]) -> bool:
    """Two of `conditions` fix one name or attribute chain (`args.distributed`) to opposite
    truth values, and nothing between their tests may change it: no assignment reaches
    one test and not the other, and for an attribute no call between them is handed the
    object or called on it (`init_distributed_mode(args)` may set `args.distributed`). A
    query the run cannot change (`torch.cuda.is_available()`) counts as such a value."""
    fixed: dict[str, tuple[bool, cst.CSTNode]] = {}
    for condition in conditions:
        for term, value in condition.terms():
            constant = _run_constant(resolver, term)
            key = dotted(term) if type(term) in (cst.Name, cst.Attribute) else constant
            if key is None:
                continue
            earlier = fixed.setdefault(key, (value, condition.gate))
            if earlier[0] != value and (
                constant is not None or _unchanged(resolver, key, earlier[1], condition.gate)
            ):
                return True
    return False


# Queries whose answer holds for the whole run (`torch.cuda.is_available()`).
_RUN_CONSTANTS = frozenset(
    {
        "torch.cuda.is_available",
        "torch.backends.mps.is_available",
        "torch.backends.cudnn.is_available",
    }
)


def _run_constant(resolver: Resolver, term: cst.BaseExpression) -> str | None:
    """The name of a query `term` calls, with no arguments, whose answer the run cannot
    change (`_RUN_CONSTANTS`), else None."""
    if type(term) is not cst.Call or term.args:
        return None
    name = resolver.model.imports.resolve(term.func)
    return name if name in _RUN_CONSTANTS else None


def exclusive(flow: Flow, resolver: Resolver, first: cst.CSTNode, second: cst.CSTNode) -> bool:
    """`first` and `second`, in one frame, need one name or attribute chain to hold values
    that exclude each other (`if args.mode == "test":` and `if args.mode == "train":`, `if
    flag:` and `if not flag:`), and nothing between their tests may change it: no run
    reaches both."""
    fixed: dict[str, list[tuple[object, bool, cst.CSTNode]]] = {}
    for condition in flow.conditions(first):
        for term, value in condition.terms():
            found = _pinned(term, value)
            if found is not None:
                fixed.setdefault(found[0], []).append((found[1], found[2], condition.gate))
    for condition in flow.conditions(second):
        for term, value in condition.terms():
            found = _pinned(term, value)
            if found is None:
                continue
            key, literal, equal = found
            for other, other_equal, gate in fixed.get(key, ()):
                if _clash(literal, equal, other, other_equal) and _unchanged(
                    resolver, key, gate, condition.gate
                ):
                    return True
    return False


def _clash(literal: object, equal: bool, other: object, other_equal: bool) -> bool:
    """Two pins of one key exclude each other: equal to two different literals, equal and
    not equal to one, or truthy and falsy (a bare name's truth, `_TRUTH`, is compared only
    with another's: `mode` and `mode == "x"` may both hold)."""
    if isinstance(literal, _Truth) or isinstance(other, _Truth):
        return isinstance(literal, _Truth) and isinstance(other, _Truth) and literal != other
    if equal and other_equal:
        return literal != other
    return (equal or other_equal) and literal == other


@dataclass(frozen=True)
class _Truth:
    """A bare name's truth as a test fixes it (`if flag:`, `if not flag:`)."""

    value: bool


def _pinned(term: cst.BaseExpression, value: bool) -> tuple[str, object, bool] | None:
    """(key, literal, equal) of a term that pins a name or attribute chain: `key == "x"`
    holding (equal to "x"), failing or `key != "x"` holding (not equal to it); a bare
    `key` as its truth (`_Truth`)."""
    if type(term) in (cst.Name, cst.Attribute):
        key = dotted(term)
        return None if key is None else (key, _Truth(value), True)
    if type(term) is not cst.Comparison or len(term.comparisons) != 1:
        return None
    target = term.comparisons[0]
    operator = type(target.operator)
    key = dotted(term.left) if type(term.left) in (cst.Name, cst.Attribute) else None
    literal = _literal_value(target.comparator)
    if key is None or literal is None or operator not in (cst.Equal, cst.NotEqual):
        return None
    return key, literal, (operator is cst.Equal) == value


def _literal_value(expr: cst.BaseExpression) -> object:
    """The value of a string or integer literal, else None."""
    if type(expr) is cst.SimpleString:
        return expr.evaluated_value
    if type(expr) is cst.Integer:
        return int(expr.evaluated_value)
    return None


def _unchanged(resolver: Resolver, key: str, first: cst.CSTNode, second: cst.CSTNode) -> bool:
    """`key` holds the same value at the gates `first` and `second` of one function."""
    model = resolver.model
    if model.frame(first) is not model.frame(second):
        return False
    reaching = {id(b.statement) for b in resolver.reaching(key, first)}
    if reaching != {id(b.statement) for b in resolver.reaching(key, second)}:
        return False
    if "." not in key:
        return True
    root = key.partition(".")[0]
    start, end = sorted((model.order[first], model.order[second]))
    for call in model.calls_by_frame(model.frame(first)):
        if not start < model.order[call] < end:
            continue
        receiver = call.func.value if type(call.func) is cst.Attribute else None
        handed = [a.value for a in call.args]
        if any(type(e) is cst.Name and e.value == root for e in (receiver, *handed)):
            return False
    return True


def decided(resolver: Resolver, test: cst.BaseExpression, at: cst.CSTNode) -> bool | None:
    """The truth of `test` at `at` when the literals it may read decide it, else None."""
    values = _outcomes(resolver, test, at)
    if values is None or len(values) != 1:
        return None
    return bool(next(iter(values)))


def _outcomes(
    resolver: Resolver, expr: cst.BaseExpression, at: cst.CSTNode
) -> frozenset[int] | None:
    """Every value `expr` may have (booleans as 0 and 1), None when one is unknown."""
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Not:
        inner = _outcomes(resolver, expr.expression, at)
        return None if inner is None else frozenset(int(not v) for v in inner)
    if type(expr) is cst.BooleanOperation:
        both = type(expr.operator) is cst.And
        if both and _nan_and_ordered(expr):
            return frozenset({0})
        left = _outcomes(resolver, expr.left, at)
        if left == frozenset({int(not both)}):  # `False and ...`, `True or ...`
            return left
        right = _outcomes(resolver, expr.right, at)
        if left is None or right is None:
            return None
        return frozenset(int(bool(a and b) if both else bool(a or b)) for a in left for b in right)
    if type(expr) is cst.Comparison and len(expr.comparisons) == 1:
        target = expr.comparisons[0]
        compare = COMPARISONS.get(type(target.operator))
        left = _outcomes(resolver, expr.left, at)
        right = _outcomes(resolver, target.comparator, at)
        if compare is None or left is None or right is None:
            return None
        return frozenset(int(compare(a, b)) for a, b in itertools.product(left, right))
    if type(expr) in (cst.Name, cst.Integer):
        return _literals(resolver, expr, at)
    if type(expr) is cst.Attribute:
        return _asserted(resolver, expr, at)
    return None


_NAN_TESTS = frozenset({"isnan", "isnan().any", "isnan().all"})
_ORDERED = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


def _nan_and_ordered(expr: cst.BooleanOperation) -> bool:
    """`torch.isnan(loss).any() and loss.item() > 16`: a NaN is neither less nor more than
    anything, so a value tested for NaN and ordered in one conjunction never passes both."""
    terms = [expr.left, expr.right]
    nans = {name for term in terms if (name := _nan_tested(term)) is not None}
    return any(
        type(term) is cst.Comparison
        and len(term.comparisons) == 1
        and isinstance(term.comparisons[0].operator, _ORDERED)
        and {_number_of(term.left), _number_of(term.comparisons[0].comparator)} & nans
        for term in terms
    )


def _nan_tested(term: cst.BaseExpression) -> str | None:
    """The value `isnan(x)`, `isnan(x).any()` or `isnan(x).all()` tests (`torch.`,
    `math.`, `np.`), by its dotted name."""
    shape = ""
    if type(term) is cst.Call and type(term.func) is cst.Attribute and not term.args:
        shape, term = f"().{term.func.attr.value}", term.func.value
    if type(term) is not cst.Call or len(term.args) != 1:
        return None
    name = (dotted(term.func) or "").rpartition(".")[2]
    return dotted(term.args[0].value) if f"{name}{shape}" in _NAN_TESTS else None


def _number_of(expr: cst.BaseExpression) -> str | None:
    """The dotted name of the value compared: `loss` of `loss`, `loss.item()`, `float(loss)`."""
    if type(expr) is cst.Call and not expr.args and type(expr.func) is cst.Attribute:
        if expr.func.attr.value == "item":
            expr = expr.func.value
    elif type(expr) is cst.Call and len(expr.args) == 1 and dotted(expr.func) == "float":
        expr = expr.args[0].value
    return dotted(expr)


def _asserted(resolver: Resolver, expr: cst.Attribute, at: cst.CSTNode) -> frozenset[int] | None:
    """The truth of `self.attr` read in a method, when the class's constructor asserts it
    (`assert not self.distribute`) and no method assigns the attribute after that
    assertion: every object of the class holds it from construction on."""
    model = resolver.model
    frame = model.frame(at)
    owner = model.enclosing_class(frame)
    if owner is None or type(expr.value) is not cst.Name or type(frame) is not cst.FunctionDef:
        return None
    params = frame.params.params
    if not params or params[0].name.value != expr.value.value:
        return None
    attribute = expr.attr.value
    constructor = sole_constructor(owner)
    found = _assertion(constructor, attribute) if constructor is not None else None
    if found is None:
        return None
    assertion, value = found
    if frame is constructor and not model.before(assertion, at):
        return None
    for node in model.walk(owner):
        if type(node) in (cst.Assign, cst.AugAssign, cst.AnnAssign) and model.before(
            assertion, node
        ):
            targets = (
                [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]  # type: ignore[attr-defined]
            )
            if any(_names_attribute(t, attribute) for t in targets):
                return None
    return frozenset({value})


def _assertion(init: cst.FunctionDef, attribute: str) -> tuple[cst.Assert, int] | None:
    """The first top-level `assert self.attr` or `assert not self.attr` of a constructor,
    with the truth it fixes."""
    for statement in top_level_asserts(init):
        test, value = statement.test, 1
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            test, value = test.expression, 0
        if _names_attribute(test, attribute):
            return statement, value
    return None


def _names_attribute(target: cst.BaseExpression, attribute: str) -> bool:
    """`target` is `<name>.attribute`."""
    return (
        type(target) is cst.Attribute
        and type(target.value) is cst.Name
        and target.attr.value == attribute
    )


def _literals(
    resolver: Resolver, expr: cst.BaseExpression, at: cst.CSTNode
) -> frozenset[int] | None:
    """The integer or boolean literals a literal, or a name assigned only literals in
    the frame that reads it, may hold (another frame may rebind a global at any time)."""
    found: set[int] = set()
    for value in resolver.values(expr, at):
        if value.leaf:
            literal = _literal(value.expr)
            if literal is None:
                return None
            found.add(literal)
        elif not _local(resolver, value.expr, value.at):
            return None
    return frozenset(found) or None


def _local(resolver: Resolver, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` is a name bound only by plain assignments of the frame that reads it."""
    if type(expr) is not cst.Name:
        return False
    frame = resolver.model.frame(at)
    bindings = resolver.reaching(expr.value, at)
    return bool(bindings) and all(b.kind == "assign" and b.scope is frame for b in bindings)


def _literal(expr: cst.BaseExpression) -> int | None:
    if type(expr) is cst.Integer:
        return int(expr.evaluated_value)
    if type(expr) is cst.Name and expr.value in ("True", "False"):
        return int(expr.value == "True")
    return None
