"""Which layers the models of a file hold, from the code that builds them.

A model expression is followed (by the resolver, and through `.cuda()` / `.to()`-style calls
that return the module itself) to the call that constructs it. That call builds BatchNorm
layers when it constructs one (`nn.BatchNorm2d(...)`), a torchvision model built with them
(`resnet50()`), or calls a class or function of this file whose body does, directly or
through other classes and functions of the file. A torchvision model chosen at run time
(`models.__dict__[args.arch]()`) is reported as such: its layers are not known.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import SAME_MODULE_METHODS
from ddplint.facts import keyword, last_name
from ddplint.names import dotted

BATCHNORM_CLASSES = frozenset(
    f"torch.nn.{prefix}BatchNorm{d}d" for prefix in ("", "Lazy") for d in (1, 2, 3)
)
# torchvision classification models built with nn.BatchNorm2d by default.
_TORCHVISION_BATCHNORM = re.compile(
    r"^(resnet\d+|resnext\d+_\w+|wide_resnet\d+_\d|densenet\d+|vgg\d+_bn|inception_v3"
    r"|googlenet|efficientnet_(b\d|v2_[sml])|mobilenet_v2|mobilenet_v3_(large|small)"
    r"|regnet_[xy]_\w+|mnasnet\d_\d+|shufflenet_v2_x\d_\d)$"
)
_SYNC_NAME = re.compile(r"sync_?b(atch_?)?n(orm)?", re.IGNORECASE)


def handles_batchnorm(ctx: FileContext) -> bool:
    """The file uses SyncBatchNorm (or apex's `convert_syncbn_model`), or handles BatchNorm
    layers by hand (`isinstance(m, nn.BatchNorm2d)`: frozen or replaced)."""
    for local, full in ctx.imports.bindings.items():
        if _SYNC_NAME.search(full) or _SYNC_NAME.search(local):
            return True
    for call in ctx.calls:
        func = last_name(call.func)
        if func is None:
            continue
        if _SYNC_NAME.search(func) or func == "convert_sync_batchnorm":
            return True
        if (dotted(call.func) or "").endswith("SyncBatchNorm"):
            return True
        if (
            func == "isinstance"
            and len(call.args) == 2
            and any(_is_batchnorm_class(ctx, e) for e in _elements(call.args[1].value))
        ):
            return True
    return False


def _elements(classes: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(classes, (cst.Tuple, cst.List)):
        return [e.value for e in classes.elements]
    return [classes]


def _is_batchnorm_class(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    qual = ctx.qualname(expr) or ""
    if qual in BATCHNORM_CLASSES or qual.startswith(
        ("torch.nn.BatchNorm", "torch.nn.modules.batchnorm")
    ):
        return True
    return "BatchNorm" in (dotted(expr) or "")


class ModelLayers:
    """The BatchNorm-building constructions of one file, and the models built by them."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._sources = {
            c for c in ctx.calls if ctx.call_name(c) in BATCHNORM_CLASSES or self._torchvision(c)
        }
        self._bearing: set[str] = set()  # classes and functions of the file that build one
        frontier = list(self._sources)
        while frontier:
            call = frontier.pop()
            for owner in self._owners(call):
                if owner not in self._bearing:
                    self._bearing.add(owner)
                    calls = ctx.model.calls_by_name.get(owner, [])
                    frontier.extend(c for c in calls if isinstance(c.func, cst.Name))

    @property
    def builds_batchnorm(self) -> bool:
        """Some code of the file constructs BatchNorm layers."""
        return bool(self._sources)

    def has_batchnorm(self, model: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """The model `model` holds at `at` was constructed with BatchNorm layers."""
        return self._construction(self._builds_batchnorm, model, at) is not None

    def runtime_architecture(self, model: cst.BaseExpression, at: cst.CSTNode) -> cst.Call | None:
        """The call that builds `model` as a torchvision model chosen at run time
        (`models.__dict__[args.arch](...)`, `getattr(models, arch)(...)`,
        `models.get_model(name)`), if it is one."""
        return self._construction(self._runtime_torchvision, model, at)

    def _torchvision(self, call: cst.Call) -> bool:
        name = self.ctx.call_name(call)
        if name is None or not name.startswith("torchvision.models."):
            return False
        if not _TORCHVISION_BATCHNORM.match(name.rpartition(".")[2]):
            return False
        norm = keyword(call, "norm_layer")
        return norm is None or self.ctx.qualname(norm.value) in BATCHNORM_CLASSES

    def _owners(self, node: cst.CSTNode) -> Iterator[str]:
        """The functions around `node`, up to and including its class."""
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, (cst.ClassDef, cst.FunctionDef)):
                yield ancestor.name.value
                if isinstance(ancestor, cst.ClassDef):
                    return

    def _builds_batchnorm(self, made: cst.Call) -> bool:
        for node in self.ctx.walk(made):
            if isinstance(node, cst.Call) and (
                node in self._sources
                or (isinstance(node.func, cst.Name) and node.func.value in self._bearing)
            ):
                return True
        return False

    def _runtime_torchvision(self, call: cst.Call) -> bool:
        ctx, func = self.ctx, call.func
        if isinstance(func, cst.Subscript):
            return (ctx.qualname(func.value) or "") == "torchvision.models.__dict__"
        if isinstance(func, cst.Call) and last_name(func.func) == "getattr" and func.args:
            return (ctx.qualname(func.args[0].value) or "") == "torchvision.models"
        return ctx.call_name(call) == "torchvision.models.get_model"

    def _construction(
        self,
        builds: Callable[[cst.Call], bool],
        model: cst.BaseExpression,
        at: cst.CSTNode,
        depth: int = 3,
    ) -> cst.Call | None:
        """The call constructing the model `model` holds for which `builds` holds."""
        for value in self.ctx.resolver.values(model, at):
            made = value.expr
            if not isinstance(made, cst.Call):
                continue
            func = made.func
            if isinstance(func, cst.Attribute) and func.attr.value in SAME_MODULE_METHODS:
                if self.ctx.qualname(func) is None and depth > 0:
                    found = self._construction(builds, func.value, value.at, depth - 1)
                    if found is not None:
                        return found
            elif builds(made):
                return made
        return None
