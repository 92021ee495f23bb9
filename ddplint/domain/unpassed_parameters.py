"""Branches that need a parameter value no call in sight passes: `if world_size > 1:` in a
loader builder (`world_size=0`) that every call of the project makes without
`world_size`, or `if type == "shakespeare":` (the default) where every call passes
`type="main_run"`. Only a call out of sight (a user's) takes the branch, so whether it
runs is unknown, and so is a finding in it. A call passing a value that is no literal may
take it. Calls from modules that cannot run on several ranks count where they are the only
ones (a one-process script passing `is_distributed=False`). A function a library offers
its users (in `__all__`, or imported by a package's `__init__.py`) has callers out of sight
by design: its branches run when a user passes the value."""

from __future__ import annotations

import ast
import operator
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.arguments_in_sight import arguments_in_sight
from ddplint.domain.liveness import project_exports
from ddplint.domain.project_view import project_of
from ddplint.domain.runners import handed_on
from ddplint.engine.dead_code import COMPARISONS
from ddplint.engine.flow import fixed_terms
from ddplint.engine.model import parameter_positions
from ddplint.project_files import project_files, project_root
from ddplint.source import might_be_distributed

_COMPARE: dict[type[cst.BaseCompOp], Callable[[Any, Any], object]] = {
    **COMPARISONS,
    cst.Is: operator.is_,
    cst.IsNot: operator.is_not,
}


def needs_unpassed_argument(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs only where a parameter of its function holds a value no call in sight
    gives it (a test on the parameter alone, or comparing it with a literal), the function
    has calls in sight (this file, and the project's modules that may run on several
    ranks), and each passes a literal, or nothing for a literal default, that fails the
    test (`if type == "shakespeare":` with `type="shakespeare"` the default and every call
    passing `type="main_run"`)."""
    for condition in ctx.flow.conditions(node):
        for term, value in _terms(ctx, condition.test, condition.holds, condition.gate):
            parameter = _parameter_test(ctx, term, value, condition.gate)
            if parameter is not None and _no_call_gives(ctx, *parameter):
                return True
            if _attribute_refused(ctx, term, value, condition.gate):
                return True
    return False


def _terms(
    ctx: FileContext, test: cst.BaseExpression, holds: bool, at: cst.CSTNode
) -> list[tuple[cst.BaseExpression, bool]]:
    """The terms `test == holds` fixes (`Condition.terms`), through a name bound once, in
    the function, to a test (`add_images = step % every == 0 and every > 0`, then
    `if add_images:`)."""
    found = []
    for term, value in fixed_terms(test, holds):
        bindings = ctx.resolver.reaching(term.value, at) if type(term) is cst.Name else []
        bound = bindings[0].value if len(bindings) == 1 and bindings[0].kind == "assign" else None
        if isinstance(bound, cst.BooleanOperation | cst.Comparison | cst.UnaryOperation):
            found.extend(fixed_terms(bound, value))
        else:
            found.append((term, value))
    return found


def _parameter_test(
    ctx: FileContext, term: cst.BaseExpression, value: bool, at: cst.CSTNode
) -> tuple[cst.FunctionDef, str, Callable[[object], bool], object] | None:
    """(function, parameter, whether a value of it takes the branch, its literal default
    or `_NOT_LITERAL`) when `term` must be `value` and reads a parameter alone."""
    name, evaluate = _test_on_name(term)
    if name is None:
        return None
    bindings = ctx.resolver.reaching(name.value, at)
    if len(bindings) != 1 or bindings[0].kind != "param":
        return None
    func, default = bindings[0].scope, bindings[0].value
    if type(func) is not cst.FunctionDef:
        return None
    held = _NOT_LITERAL
    if isinstance(default, cst.BaseExpression):
        try:
            held = ast.literal_eval(ctx.code(default))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            held = _NOT_LITERAL

    def takes(given: object) -> bool:
        return bool(evaluate(given)) == value

    return func, name.value, takes, held


def _attribute_refused(
    ctx: FileContext, term: cst.BaseExpression, value: bool, at: cst.CSTNode
) -> bool:
    """`term` tests an attribute of the instance alone (`self.every > 0`), and every value
    the class stores in it fails the test: a literal (`self.every = -1`), or a parameter of
    a method that no call in sight gives a value passing it (`self.every = every`, with
    `every=-1` the default and no call passing it). Another file, or a store on another
    object of this one (`trainer.every = 5`, `setattr`), may set it: then it is unknown."""
    attribute, evaluate = _test_on_attribute(term)
    if attribute is None or not _stored_only_on_self(ctx, attribute.attr.value):
        return False

    def takes(given: object) -> bool:
        return bool(evaluate(given)) == value

    stores = [v for v in ctx.resolver.values(attribute, at) if v.expr is not attribute]
    if not stores:
        return False
    for store in stores:
        expr = store.expr
        parent = ctx.model.parents.get(expr)
        if type(parent) is cst.Param:
            continue  # a parameter's default: judged with the parameter below
        if type(expr) is cst.Name and isinstance(parent, cst.Assign | cst.AnnAssign):
            parameter = _parameter_test(ctx, expr, True, expr)
            if parameter is None:
                return False
            func, name, _, default = parameter
            if not _no_call_gives(ctx, func, name, takes, default):
                return False
            continue
        if not store.leaf or not _refused([_literal_value(expr)], takes):
            return False
    return True


def _test_on_attribute(
    term: cst.BaseExpression,
) -> tuple[cst.Attribute | None, Callable[[object], object]]:
    """`self.x` and how the test evaluates a value of it: `self.x` alone, or
    `self.x OP literal` (`_tested`)."""
    tested, evaluate = _tested(term)
    if (
        type(tested) is cst.Attribute
        and type(tested.value) is cst.Name
        and tested.value.value == "self"
    ):
        return tested, evaluate
    return None, bool


def _stored_only_on_self(ctx: FileContext, attribute: str) -> bool:
    """No store of `attribute` but `self.<attribute> = ...` in this file (no augmented
    one: `self.bad_steps += 1`), no `setattr` in it, and no other file of the project that
    writes `.<attribute> =`. Asked once per file and attribute: each asking searches the
    whole source."""
    return ctx.remembered(_search_stores, attribute)


def _search_stores(ctx: FileContext, attribute: str) -> bool:
    word = re.escape(attribute)
    store = re.compile(rf"(\w+)\s*\.\s*{word}\s*(?::[^=\n]*)?=(?!=)")
    updated = re.compile(rf"\.\s*{word}\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)=")
    if (
        "setattr(" in ctx.source
        or updated.search(ctx.source)
        or any(m.group(1) != "self" for m in store.finditer(ctx.source))
    ):
        return False
    if not os.path.isfile(ctx.path):
        return True
    path = os.path.abspath(ctx.path)
    files = project_files(project_root(path))
    others = files.naming(attribute) - {path}
    return not any(store.search(files.text(other) or "") for other in others)


def _literal_value(expr: cst.BaseExpression) -> object:
    """The value of a literal, negative numbers included; `_NOT_LITERAL` otherwise."""
    if (
        type(expr) is cst.UnaryOperation
        and type(expr.operator) is cst.Minus
        and isinstance(expr.expression, cst.Integer | cst.Float)
    ):
        return -ast.literal_eval(expr.expression.value)
    return _literal(expr)


def _test_on_name(
    term: cst.BaseExpression,
) -> tuple[cst.Name | None, Callable[[object], object]]:
    """The parameter a test reads and how the test evaluates a value of it: `p`, or
    `p OP literal` (`world_size > 1`, `mode == "ddp"`, `group is not None`)."""
    tested, evaluate = _tested(term)
    return (tested, evaluate) if type(tested) is cst.Name else (None, bool)


def _tested(
    term: cst.BaseExpression,
) -> tuple[cst.BaseExpression | None, Callable[[object], object]]:
    """What `term` tests and how it evaluates a value of it: `term` itself, by its truth,
    or the left side of `left OP literal`; None for another comparison."""
    if type(term) is not cst.Comparison:
        return term, bool
    if len(term.comparisons) == 1:
        target = term.comparisons[0]
        compare = _COMPARE.get(type(target.operator))
        literal = _literal(target.comparator)
        if compare is not None and literal is not _NOT_LITERAL:
            return term.left, lambda held: compare(held, literal)
    return None, bool


_NOT_LITERAL = object()


def _literal(expr: cst.BaseExpression) -> object:
    if type(expr) is cst.Name and expr.value in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[expr.value]
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return ast.literal_eval(expr.value)
    return _NOT_LITERAL


def _no_call_gives(
    ctx: FileContext,
    func: cst.FunctionDef,
    name: str,
    takes: Callable[[object], bool],
    default: object,
    depth: int = 2,
) -> bool:
    """`func` has calls in sight, and each passes for its parameter `name` a literal, or
    nothing where the default is a literal, that `takes` refuses (`arguments_in_sight`);
    or, in a call of this file, a parameter of the calling function that no call gives
    such a value either (`test(model, gpip)` in `train(..., gpip=False)`, every call of
    `train` passing `False`; `depth` such steps). Every mention of the function must be
    such a call: one handed on (`mp.spawn(train, args=...)`, a registry), or called in
    another module where the project does not link the call to it (`runner.step(x,
    strict=False)`), gets its arguments out of sight."""
    names = ctx.resolver.call_names(func)
    if any(handed_on(ctx, callee) for callee in names) or _offered_to_users(ctx, func):
        return False
    passed = arguments_in_sight(ctx, func, name)
    if passed is None:
        return False
    if not passed:  # no call that may run on several ranks: what one-process callers pass
        alone = _one_process_arguments(ctx, func, name)
        if not alone:
            return False
        return _refused((default if value is _UNPASSED else value for value in alone), takes)
    here = {id(ctx.resolver.passed(call, func, name)) for call in ctx.resolver.calls_of(func)}
    literals = []
    for value in passed:
        if value is not None and id(value) in here and depth > 0:
            forwarded = _parameter_test(ctx, value, True, value)
            if forwarded is not None:
                caller, parameter, _, caller_default = forwarded
                if caller is func or not _no_call_gives(
                    ctx, caller, parameter, takes, caller_default, depth - 1
                ):
                    return False
                continue  # the caller's parameter never holds a value that takes it
        literals.append(default if value is None else _literal(value))
    if not _refused(literals, takes):
        return False
    mentioned = sum(_calls_in_other_files(ctx, callee) for callee in names)
    return 0 <= mentioned <= len(passed) - len(ctx.resolver.calls_of(func))


def _offered_to_users(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` is part of the API a library offers: a public module-level function of a
    project that exports its modules (`liveness.project_exports`), listed in its module's
    `__all__` or imported by a package's `__init__.py`. Its users' calls, out of sight,
    pass what its parameters are for (composer's `export_for_inference(load_path=...)`,
    which no call of the project passes)."""
    name = func.name.value
    if name.startswith("_") or ctx.model.parents.get(func) is not ctx.module:
        return False
    if not os.path.isfile(ctx.path):
        return False
    path = os.path.abspath(ctx.path)
    files = project_files(project_root(path))
    if not project_exports(files):
        return False
    if re.search(rf"__all__[^\]]*[\"']{re.escape(name)}[\"']", ctx.source):
        return True
    return any(os.path.basename(other) == "__init__.py" for other in files.naming(name) - {path})


def _calls_in_other_files(ctx: FileContext, name: str) -> int:
    """How many calls of `name` the project's other files that may hold distributed code
    write (`name(`, `obj.name(`; import lines and comments aside), or -1 when one of them
    names it otherwise (hands it on). A call from a file that cannot run on several ranks
    (`might_be_distributed`: the project's index of callers leaves it out too) takes the
    branch in one process, where it does no DDP harm."""
    if not os.path.isfile(ctx.path):
        return 0
    path = os.path.abspath(ctx.path)
    files = project_files(project_root(path))
    word = re.escape(name)
    handed_on = re.compile(rf"(?<![\w.]){word}\b(?!\s*\()")
    called = re.compile(rf"(?<!\w){word}\s*\(")
    count = 0
    for other in files.naming(name) - {path}:
        text = files.text(other) or ""
        if not might_be_distributed(text.encode()) or _imports_another(ctx, other, text, name):
            continue
        if _defines_its_own(text, name, path):
            continue
        for line in _PARENTHESISED_IMPORT.sub("", text).splitlines():
            code = line.split("#", 1)[0]
            if _IMPORT_LINE.match(code) or _DEFINITION.match(code):
                continue  # an import, or a function of its own by that name
            if handed_on.search(code):
                return -1
            count += len(called.findall(code))
    return count


def _defines_its_own(text: str, name: str, path: str) -> bool:
    """The file `text` defines a module-level function `name` of its own and never names
    the module at `path`: its calls of `name` reach its own definition (a sibling script
    with its own `prepare_dataloader`)."""
    module = os.path.splitext(os.path.basename(path))[0]
    if re.search(rf"(?<![\w.]){re.escape(module)}\b", text):
        return False
    return (
        re.search(rf"^(async[ \t]+)?def[ \t]+{re.escape(name)}\b", text, re.MULTILINE) is not None
    )


_IMPORT_LINE = re.compile(r"\s*(from\s+\S+\s+)?import\s")
# `from m import (\n    a,\n    b,\n)`: the names on its own lines are no mentions either
_PARENTHESISED_IMPORT = re.compile(r"^[ \t]*from[ \t]+\S+[ \t]+import[ \t]*\([^)]*\)", re.M)
_DEFINITION = re.compile(r"\s*(async\s+)?def\s")


def _imports_another(ctx: FileContext, other: str, text: str, name: str) -> bool:
    """The file `other` imports `name` from a module the project resolves to a file other
    than `ctx`'s (`from data_handling.pretrain_dataset import pretrain_dataloader` in
    WavCaps' `retrieval/`, beside `captioning/` holding a module of the same name): its
    calls of `name` reach that function."""
    project = project_of(ctx)
    if project is None:
        return False
    here = os.path.abspath(ctx.path)
    imports = rf"^\s*from\s+([\w.]+)\s+import\s*(?:\([^)]*|[^\n]*)\b{re.escape(name)}\b"
    for module in re.findall(imports, text, re.M):
        found = project.function_at(other, f"{module}.{name}")
        if found is not None and os.path.abspath(found[0]) != here:
            return True
    return False


def _refused(given: Iterable[object], takes: Callable[[object], bool]) -> bool:
    """Every value given is a literal that `takes` refuses."""
    try:
        return not any(value is _NOT_LITERAL or takes(value) for value in given)
    except (TypeError, ValueError):  # a comparison the value does not support
        return False


def _one_process_arguments(
    ctx: FileContext, func: cst.FunctionDef, name: str
) -> list[object] | None:
    """What the calls of `func` pass for its parameter `name` (a literal, `_UNPASSED`, or
    `_NOT_LITERAL`), when it has no call in sight that may run on several ranks and is
    called (never handed on) only from the project's files that cannot run on several
    ranks (`might_be_distributed`): WavCaps' captioning `pretrain.py` building its loader
    with `is_distributed=False`. Those files are read with `ast`, as the project's index
    of callers leaves them out. None where another file may hold a call."""
    if ctx.resolver.calls_of(func) or not os.path.isfile(ctx.path):
        return None
    callee = func.name.value
    position = parameter_positions(func).get(name)
    path = os.path.abspath(ctx.path)
    files = project_files(project_root(path))
    given: list[object] = []
    for other in files.naming(callee) - {path}:
        text = files.text(other) or ""
        if might_be_distributed(text.encode()):
            return None  # a call the index of callers should have held
        found = _literal_arguments(text, callee, name, position)
        if found is None:
            return None
        given.extend(found)
    return given


_UNPASSED = object()


def _literal_arguments(
    text: str, callee: str, name: str, position: int | None
) -> list[object] | None:
    """What each call of `callee` in `text` passes for parameter `name` (its literal,
    `_UNPASSED`, or `_NOT_LITERAL`); None when the file cannot be read or names `callee`
    otherwise than by calling it or importing it (handing it on)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    called: set[int] = set()
    found: list[object] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        target = node.func
        if not (
            (isinstance(target, ast.Name) and target.id == callee)
            or (isinstance(target, ast.Attribute) and target.attr == callee)
        ):
            continue
        called.add(id(target))
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            return None
        passed = next((k.value for k in node.keywords if k.arg == name), None)
        if passed is None and position is not None and 0 <= position < len(node.args):
            passed = node.args[position]
        if passed is None:
            found.append(_UNPASSED)
            continue
        try:
            found.append(ast.literal_eval(passed))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            found.append(_NOT_LITERAL)
    for node in ast.walk(tree):
        mentioned = (isinstance(node, ast.Name) and node.id == callee) or (
            isinstance(node, ast.Attribute) and node.attr == callee
        )
        if mentioned and id(node) not in called:
            return None  # handed on: `partial(build, ...)`, a registry
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == callee:
            return None  # a function of its own by that name: whose calls are these?
    return found
