"""Whether the model a DDP wrap holds certainly has no buffers.

DDP re-broadcasts buffers in forward only when the module has some (and
`broadcast_buffers` is on): a forward with gradients off through the wrapper of a
buffer-free model issues no collective. "Certainly" means the model is built by a class of
this file whose construction (`__init__`, the methods and file functions it calls, the
file classes it instantiates) registers no buffer and only creates torch layers known to
hold none; a model from a hub, a string, another module or an unknown layer may have some.
"""

from __future__ import annotations

import builtins

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import SAME_MODULE_METHODS
from ddplint.engine.resolve import methods_named
from ddplint.facts import argument, last_name

_BUFFER_FREE_LAYERS = frozenset(
    f"torch.nn.{name}"
    for name in (
        "Module",
        "Linear",
        "Bilinear",
        "Identity",
        "Embedding",
        "EmbeddingBag",
        "LayerNorm",
        "GroupNorm",
        "RMSNorm",
        "Dropout",
        "Dropout1d",
        "Dropout2d",
        "Dropout3d",
        "GELU",
        "ReLU",
        "SiLU",
        "Tanh",
        "Sigmoid",
        "Softmax",
        "LeakyReLU",
        "Conv1d",
        "Conv2d",
        "Conv3d",
        "ModuleList",
        "ModuleDict",
        "Sequential",
        "Parameter",
        "ParameterList",
        "ParameterDict",
        "MultiheadAttention",
        "Flatten",
    )
)
_PASS_THROUGH_CALLS = frozenset({"torch.compile"})
_PLAIN_MODULES = frozenset({"math", "functools", "itertools", "operator", "warnings", "logging"})
_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))


class ModelBuffers:
    """Buffer-freedom of the models wrapped in DDP in one file."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._free: dict[cst.CSTNode, bool] = {}

    def wraps_buffer_free_model(self, wrap: cst.Call) -> bool:
        """Every model the DDP wrap `wrap` may hold is built by a buffer-free class."""
        model = argument(wrap, 0, "module")
        return model is not None and self._built_buffer_free(model, wrap, 3)

    def _built_buffer_free(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        leaves = [v for v in self.ctx.resolver.values(expr, at) if v.leaf]
        if not leaves or depth < 0:
            return False
        for value in leaves:
            made = value.expr
            if not isinstance(made, cst.Call):
                return False
            func = made.func
            inner: cst.BaseExpression | None = None
            if self.ctx.qualname(func) in _PASS_THROUGH_CALLS:
                inner = argument(made, 0, "model")
            elif isinstance(func, cst.Attribute) and func.attr.value in SAME_MODULE_METHODS:
                inner = func.value
            if inner is not None:
                if not self._built_buffer_free(inner, value.at, depth - 1):
                    return False
            elif not (isinstance(func, cst.Name) and self._class_free(func.value)):
                return False
        return True

    def _class_free(self, name: str) -> bool:
        classes = self.ctx.model.classes.get(name, [])
        return len(classes) == 1 and self._node_free(classes[0])

    def _node_free(self, node: cst.ClassDef | cst.FunctionDef) -> bool:
        known = self._free.get(node)
        if known is None:
            self._free[node] = True  # a recursive construction adds nothing new
            known = self._free[node] = (
                self._class_node_free(node)
                if isinstance(node, cst.ClassDef)
                else self._calls_free(node, None)
            )
        return known

    def _class_node_free(self, cls: cst.ClassDef) -> bool:
        ctx = self.ctx
        if any(
            isinstance(n, cst.Call) and last_name(n.func) == "register_buffer"
            for n in ctx.walk(cls)
        ):
            return False
        for base in cls.bases:
            name = ctx.qualname(base.value)
            if name is not None:
                if name not in _BUFFER_FREE_LAYERS:
                    return False
            elif not (isinstance(base.value, cst.Name) and self._class_free(base.value.value)):
                return False
        return all(self._calls_free(init, cls) for init in methods_named(cls, "__init__"))

    def _calls_free(self, root: cst.FunctionDef, cls: cst.ClassDef | None) -> bool:
        return all(
            self._call_free(node, cls) for node in self.ctx.walk(root) if isinstance(node, cst.Call)
        )

    def _call_free(self, call: cst.Call, cls: cst.ClassDef | None) -> bool:
        """The call, made while constructing the model, adds no buffer."""
        ctx = self.ctx
        func = call.func
        if last_name(func) == "register_buffer":
            return False
        name = ctx.qualname(func)
        if name is not None:
            if name in _BUFFER_FREE_LAYERS:
                return True
            last = name.rpartition(".")[2]
            if name.startswith("torch.nn.") and last[:1].isupper():
                return False  # BatchNorm, InstanceNorm, or a layer not known to be free
            return name.startswith("torch.") or name.partition(".")[0] in _PLAIN_MODULES
        if isinstance(func, cst.Name):
            if func.value in ctx.model.classes:
                return self._class_free(func.value)
            functions = ctx.model.functions.get(func.value, [])
            if functions:
                return all(self._node_free(f) for f in functions)
            return func.value in _BUILTINS
        if isinstance(func, cst.Attribute):
            receiver = func.value
            if isinstance(receiver, cst.Name) and receiver.value == "self" and cls is not None:
                return all(self._node_free(m) for m in methods_named(cls, func.attr.value))
            return True  # `super().__init__()`, `layers.append(...)`: the argument is checked
        return False
