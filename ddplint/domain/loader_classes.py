"""DataLoader subclasses of a file that build their own sampler: `class TrainLoader(
DataLoader)` whose `__init__` makes the sampler and hands it to `super().__init__(...)`.
Each construction of such a class (`train_loader = TrainLoader(root, 64)`) is a loader
built on that sampler, unless the call passes a flag of `__init__` the way that skips
building it (`TrainLoader(root, 64, train=False)` where the sampler is made under
`if train and ...:`)."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import LOADER_CLASSES


@dataclass(frozen=True)
class LoaderClass:
    """A DataLoader subclass of the file: its `__init__` and the `super().__init__(...)`
    call in it, whose arguments are the DataLoader's own."""

    cls: cst.ClassDef
    init: cst.FunctionDef
    base_call: cst.Call


def loader_classes(ctx: FileContext) -> list[LoaderClass]:
    """DataLoader subclasses of the file whose `__init__` calls `super().__init__(...)`."""
    return ctx.memo(_find_classes)


def _find_classes(ctx: FileContext) -> list[LoaderClass]:
    found = []
    for node in ctx.nodes_of(cst.ClassDef):
        assert type(node) is cst.ClassDef
        if not any(ctx.qualname(base.value) in LOADER_CLASSES for base in node.bases):
            continue
        body = node.body.body if type(node.body) is cst.IndentedBlock else ()
        for init in body:
            if type(init) is not cst.FunctionDef or init.name.value != "__init__":
                continue
            for call in ctx.calls_within(init.body):
                if _super_init(call):
                    found.append(LoaderClass(node, init, call))
    return found


def _super_init(call: cst.Call) -> bool:
    """`super().__init__(...)` or `super(Cls, self).__init__(...)`."""
    func = call.func
    return (
        type(func) is cst.Attribute
        and func.attr.value == "__init__"
        and type(func.value) is cst.Call
        and type(func.value.func) is cst.Name
        and func.value.func.value == "super"
    )


def constructions(ctx: FileContext, loader: LoaderClass, made: cst.CSTNode) -> list[cst.Call]:
    """The calls of the file that construct `loader`'s class and build the sampler `made`
    (a node of its `__init__`): those passing a flag of `__init__` the way that skips
    `made` are left out."""
    found = []
    for call in ctx.model.calls_by_name.get(loader.cls.name.value, ()):
        if loader.init not in ctx.resolver.callees(call):
            continue
        if not _skips(ctx, loader.init, call, made):
            found.append(call)
    return found


def _skips(ctx: FileContext, init: cst.FunctionDef, call: cst.Call, made: cst.CSTNode) -> bool:
    """`made` runs only where a parameter of `init` holds one way, and `call` passes it
    (or leaves its default) the other way, as a literal."""
    params = {p.name.value: p for p in (*init.params.params, *init.params.kwonly_params)}
    if any(arg.star for arg in call.args):
        return False
    for condition in ctx.flow.conditions(made):
        if condition.early_exit:
            continue
        for term, holds in condition.terms():
            if type(term) is not cst.Name or term.value not in params:
                continue
            passed = ctx.resolver.passed(call, init, term.value) or params[term.value].default
            truth = _literal_truth(passed)
            if truth is not None and truth is not holds:
                return True
    return False


def _literal_truth(expr: cst.BaseExpression | None) -> bool | None:
    if type(expr) is cst.Name and expr.value in ("True", "False", "None"):
        return expr.value == "True"
    if type(expr) is cst.Integer:
        return int(expr.value, 0) != 0
    return None
