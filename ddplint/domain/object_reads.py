"""Arguments an object never reads: a loader handed to the constructor of a project class
(`runner = Runner(model, train_loader, test_loader)`) when the script then calls only
methods of the object that never read the attribute the constructor keeps it in
(`runner.evaluate()` reading `self.test_loader` alone). The class is read from its
module's text with the standard parser (its summary holds no attribute reads). Anything
unclear answers no: another use of the loader or of the object, a method the class body
does not define (a base class's), a computed attribute (`getattr(self, name)`), an
argument the constructor keeps other than in `self.<name> = <param>`."""

from __future__ import annotations

import ast
from collections.abc import Callable

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.loops import named_for
from ddplint.domain.project_view import project_of
from ddplint.domain.text_trees import stdlib_tree
from ddplint.names import dotted
from ddplint.project_files import project_files, project_root


def _handed_to(ctx: FileContext, value: cst.Call) -> list[tuple[cst.Call, cst.Arg]] | None:
    """The calls the name `value` (a loader built here) is bound to is handed to, each with
    the argument; None when the name is used any other way (iterated, returned, an
    attribute read) or `value` is bound to no plain name."""
    name = ctx.name_bound_to(value)
    if name is None:
        return None
    found = []
    for use in _uses(ctx, name, value):
        arg = ctx.parent(use)
        made = ctx.parent(arg) if type(arg) is cst.Arg else None
        if type(arg) is not cst.Arg or type(made) is not cst.Call:
            return None
        found.append((made, arg))
    return found


def unread_by_object(ctx: FileContext, value: cst.Call) -> bool:
    """`value` (a loader built here) is bound to a name whose only uses hand it to
    constructors of project classes whose objects never read it (`unread_argument`)."""
    return _only_handed(ctx, value, unread_argument)


def never_trained_on(ctx: FileContext, value: cst.Call) -> bool:
    """`value` (a loader built here) is bound to a name whose only uses hand it to an
    evaluation (`test_accuracy(model, loader)`) or to a project class whose object never
    reads it (`trains_nothing_with`)."""
    return _only_handed(ctx, value, trains_nothing_with)


def _only_handed(
    ctx: FileContext,
    value: cst.Call,
    accepts: Callable[[FileContext, cst.Call, cst.Arg], bool],
) -> bool:
    """Every use of the name `value` is bound to hands it to a call `accepts` (with the
    argument), and there is one."""
    calls = _handed_to(ctx, value) or []
    return bool(calls) and all(accepts(ctx, made, arg) for made, arg in calls)


def trains_nothing_with(ctx: FileContext, made: cst.Call, arg: cst.Arg) -> bool:
    """The call `made` takes `arg` for no training: an evaluation by its name
    (`test_accuracy(model, loader)`), or an object that never reads it
    (`unread_argument`)."""
    called = (ctx.call_name(made) or dotted(made.func) or "").rpartition(".")[2]
    return named_for([called]) == "evaluation" or unread_argument(ctx, made, arg)


def unread_argument(ctx: FileContext, made: cst.Call, arg: cst.Arg) -> bool:
    """`made` constructs a project class, bound to a name on which the file calls only
    methods that never read (nor make a method of `self` read) what the constructor keeps
    the argument `arg` in."""
    if arg.star:
        return False
    holder = ctx.name_bound_to(made)
    called = _methods_called(ctx, holder, made) if holder is not None else None
    project = project_of(ctx)
    found = project.defined_at(ctx, made) if project is not None else None
    if called is None or found is None:
        return False
    path, class_name = found
    text = project_files(project_root(ctx.path)).text(path)
    cls = _class_named(text, class_name) if text is not None else None
    if cls is None:
        return False
    kept = _kept_in(cls, made, arg)
    return kept is not None and not _read_by(cls, called, kept)


def _uses(ctx: FileContext, name: str, bound: cst.CSTNode) -> list[cst.Name]:
    """The reads of `name` in the frame that binds it (not attribute or keyword names)."""
    frame = ctx.model.frame(bound)
    found = []
    for node in ctx.walk(frame):
        if type(node) is not cst.Name or node.value != name:
            continue
        if ctx.names_no_variable(node):
            continue
        parent = ctx.parent(node)
        if type(parent) is cst.AssignTarget or (type(parent) is cst.Param and parent.name is node):
            continue
        found.append(node)
    return found


def _methods_called(ctx: FileContext, holder: str, made: cst.Call) -> set[str] | None:
    """The attributes read on the object bound to `holder`, methods called
    (`runner.evaluate()`) or not (`runner.device`); None when it is used any other way
    (passed on, rebound)."""
    called = set()
    for use in _uses(ctx, holder, made):
        attribute = ctx.parent(use)
        if type(attribute) is not cst.Attribute or attribute.value is not use:
            return None
        called.add(attribute.attr.value)
    return called


def _class_named(text: str, name: str) -> ast.ClassDef | None:
    tree = stdlib_tree(text)
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    return None


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {
        node.name: node
        for node in cls.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def _kept_in(cls: ast.ClassDef, made: cst.Call, arg: cst.Arg) -> set[str] | None:
    """The attributes `__init__` keeps the argument `arg` in (`self.train_loader =
    train_loader`); None when it does anything else with it."""
    init = _methods(cls).get("__init__")
    if init is None:
        return None
    params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    param: str | None = None
    if arg.keyword is not None:
        param = arg.keyword.value
    else:
        position = [a for a in made.args if a.keyword is None].index(arg)
        param = params[position] if position < len(params) else None
    if param is None or param not in (*params, *(a.arg for a in init.args.kwonlyargs)):
        return None
    kept: set[str] = set()
    stored: set[int] = set()
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if _is_self_attribute(target) and isinstance(value, ast.Name) and value.id == param:
                assert isinstance(target, ast.Attribute)
                kept.add(target.attr)
                stored.add(id(value))
    reads = [
        n
        for n in ast.walk(init)
        if isinstance(n, ast.Name) and n.id == param and isinstance(n.ctx, ast.Load)
    ]
    if not kept or any(id(n) not in stored for n in reads):
        return None
    return kept


def _read_by(cls: ast.ClassDef, called: set[str], kept: set[str]) -> bool:
    """A method of `called`, or one they call on `self` (transitively), may read one of
    the attributes `kept` (or reads attributes by a computed name)."""
    methods = _methods(cls)
    todo, seen = list(called), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in kept:
            return True  # read straight off the object (`runner.train_loader`)
        method = methods.get(name)
        if method is None:
            if name in called and not cls.bases and name in _assigned(cls):
                continue  # an attribute the class sets (`runner.device`), no method
            return True  # a base class's method, or a name the class lacks: out of sight
        for node in ast.walk(method):
            if _is_self_attribute(node):
                assert isinstance(node, ast.Attribute)
                if node.attr in kept or node.attr == "__dict__":
                    return True
                if node.attr in methods:
                    todo.append(node.attr)
            elif isinstance(node, ast.Name) and node.id in ("getattr", "vars"):
                return True
    return False


def _assigned(cls: ast.ClassDef) -> set[str]:
    """The attributes the class's methods assign on `self` (`self.device = device`)."""
    return {
        target.attr
        for node in ast.walk(cls)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Attribute) and _is_self_attribute(target)
    }


def _is_self_attribute(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )
