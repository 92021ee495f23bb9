"""Which layers the models of a file hold, from the code that builds them.

A model expression is followed (by the resolver, and through calls that return the module
itself: `.cuda()`, `.to()`, `torch.compile(model)`) to the calls that construct it. Two
questions are asked of them:
- may it hold BatchNorm: a construction builds BatchNorm layers when it constructs one
  (`nn.BatchNorm2d(...)`), a torchvision model built with them (`resnet50()`), or calls a
  class or function of this file whose body does, directly or through other classes and
  functions of the file; for buffers, also a class or function of another project
  module whose construction does (`Project.helper_builds_batchnorm`). A torchvision
  model chosen at run time (`models.__dict__[args.arch]()`) is reported as such: its
  layers are not known.
- certainly buffers: some construction builds BatchNorm layers that keep running
  statistics (not `track_running_stats=False`) or is a class of this file that registers a
  buffer;
- certainly no buffers: every construction is a class of this file whose construction
  (`__init__`, the methods and file functions it calls, the file classes it instantiates)
  registers no buffer and only creates torch layers known to hold none, or a torch
  container of such layers (`nn.Sequential(...)`); a model from a
  hub, a string, another module or an unknown layer may have some. DDP re-broadcasts
  buffers in forward only when the module has some.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterator
from functools import cached_property

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import SAME_MODULE_METHODS
from ddplint.domain.ddp_facts import argument, keyword, last_name
from ddplint.domain.project_view import project_of
from ddplint.engine import Value
from ddplint.engine.resolve import methods_named
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
# Text every module constructing BatchNorm layers contains (`constructs_batchnorm`).
BATCHNORM_TEXT = re.compile(
    r"BatchNorm|resnet|resnext|densenet|vgg\d+_bn|inception_v3|googlenet|efficientnet"
    r"|mobilenet|regnet|mnasnet|shufflenet"
)
_SYNC_NAME = re.compile(r"sync_?b(atch_?)?n(orm)?", re.IGNORECASE)
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
_CONTAINERS = frozenset(
    f"torch.nn.{name}" for name in ("ModuleList", "ModuleDict", "ParameterList", "ParameterDict")
)
# Calls that return the module they are given (compiled, or with its BatchNorm layers
# made SyncBatchNorm: the same buffers), by the keyword of that argument.
_PASS_THROUGH_CALLS = {
    "torch.compile": "model",
    "torch.nn.SyncBatchNorm.convert_sync_batchnorm": "module",
    "torch.nn.modules.batchnorm.SyncBatchNorm.convert_sync_batchnorm": "module",
    "apex.parallel.convert_syncbn_model": "module",
}
_PLAIN_MODULES = frozenset({"math", "functools", "itertools", "operator", "warnings", "logging"})
_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))


def constructs_batchnorm(ctx: FileContext, call: cst.Call) -> bool:
    """`call` constructs BatchNorm layers: `nn.BatchNorm2d(...)`, or a torchvision model
    built with them (`resnet50()`, unless given another `norm_layer`)."""
    name = ctx.call_name(call)
    if name in BATCHNORM_CLASSES:
        return True
    if name is None or not name.startswith("torchvision.models."):
        return False
    if not _TORCHVISION_BATCHNORM.match(name.rpartition(".")[2]):
        return False
    norm = keyword(call, "norm_layer")
    return norm is None or ctx.qualname(norm.value) in BATCHNORM_CLASSES


def constructs_buffered_batchnorm(ctx: FileContext, call: cst.Call) -> bool:
    """`constructs_batchnorm`, but for a BatchNorm layer that keeps no running statistics
    (`nn.BatchNorm2d(c, track_running_stats=False)`): such a layer registers no buffer
    (its `running_mean` and `running_var` are None), so DDP has none of its to broadcast."""
    if not constructs_batchnorm(ctx, call):
        return False
    if ctx.call_name(call) not in BATCHNORM_CLASSES:
        return True
    tracks = argument(call, 4, "track_running_stats")
    return not (type(tracks) is cst.Name and tracks.value == "False")


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


def _parses_command_line(expr: cst.BaseExpression) -> bool:
    """`parser.parse_args()`: a namespace of options, no module."""
    return type(expr) is cst.Call and last_name(expr.func) in ("parse_args", "parse_known_args")


class ModelLayers:
    """What the models of one file are built from: BatchNorm layers, a torchvision model
    chosen at run time, buffers."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._free: dict[cst.CSTNode, bool] = {}
        self._buffered: dict[cst.Call, bool] = {}  # `_source` of buffered layers
        self._bearing: dict[tuple[str, bool], bool] = {}  # `_bears`

    # -- constructions -------------------------------------------------------------------

    def constructions(
        self, model: cst.BaseExpression, at: cst.CSTNode, depth: int = 3
    ) -> Iterator[Value]:
        """Every value the model `model` holds at `at` may be, passed through the calls that
        return the module itself (those are not among them)."""
        for value in self.ctx.resolver.values(model, at):
            inner = self._passed_through(value.expr)
            if inner is None:
                yield value
            elif depth > 0:
                yield from self.constructions(inner, value.at, depth - 1)

    def _passed_through(self, made: cst.BaseExpression) -> cst.BaseExpression | None:
        """`m` for `m.cuda()`, `m.to(device)`, `torch.compile(m)`,
        `nn.SyncBatchNorm.convert_sync_batchnorm(m)`."""
        if type(made) is not cst.Call:
            return None
        func = made.func
        keyword = _PASS_THROUGH_CALLS.get(self.ctx.qualname(func) or "")
        if keyword is not None:
            return argument(made, 0, keyword)
        if type(func) is cst.Attribute and func.attr.value in SAME_MODULE_METHODS:
            return func.value if self.ctx.qualname(func) is None else None
        return None

    # -- BatchNorm -----------------------------------------------------------------------

    @cached_property
    def _sources(self) -> set[cst.Call]:
        """The calls of this file that construct BatchNorm layers."""
        return {c for c in self.ctx.calls if constructs_batchnorm(self.ctx, c)}

    def _source(self, call: cst.Call, buffered: bool) -> bool:
        """`call` constructs BatchNorm layers; `buffered`: ones holding running statistics
        (buffers), constructed here or by a class or function of another project module
        it calls, converted to SyncBatchNorm there or not. The project is asked only of
        the calls a model's construction reaches."""
        if not buffered:
            return call in self._sources
        if call not in self._buffered:
            project = project_of(self.ctx)
            self._buffered[call] = constructs_buffered_batchnorm(self.ctx, call) or (
                project is not None and project.helper_builds_batchnorm(self.ctx, call)
            )
        return self._buffered[call]

    @cached_property
    def _owned_calls(self) -> dict[str, list[cst.Call]]:
        """The calls of the file by the name of each function and class around them (up to
        and including the class)."""
        owned: dict[str, list[cst.Call]] = {}
        for call in self.ctx.calls:
            for owner in self._owners(call):
                owned.setdefault(owner, []).append(call)
        return owned

    def _bears(self, name: str, buffered: bool) -> bool:
        """A class or function of this file named `name` builds BatchNorm layers
        (`_source`), directly or through the classes and functions of the file it calls."""
        key = (name, buffered)
        if key not in self._bearing:
            seen, todo = {name}, [name]
            found = False
            while todo and not found:
                for call in self._owned_calls.get(todo.pop(), ()):
                    if self._source(call, buffered):
                        found = True
                        break
                    if type(call.func) is cst.Name and call.func.value not in seen:
                        seen.add(call.func.value)
                        todo.append(call.func.value)
            self._bearing[key] = found
        return self._bearing[key]

    @property
    def builds_batchnorm(self) -> bool:
        """Some code of the file constructs BatchNorm layers."""
        return bool(self._sources)

    def has_batchnorm(self, model: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """The model `model` holds at `at` may have been constructed with BatchNorm layers
        by this file."""
        return self._with_batchnorm(model, at, buffered=False)

    def _with_batchnorm(self, model: cst.BaseExpression, at: cst.CSTNode, buffered: bool) -> bool:
        return any(
            type(v.expr) is cst.Call and self._builds_batchnorm(v.expr, buffered)
            for v in self.constructions(model, at)
        )

    def runtime_architecture(self, model: cst.BaseExpression, at: cst.CSTNode) -> cst.Call | None:
        """The call that builds `model` as a torchvision model chosen at run time
        (`models.__dict__[args.arch](...)`, `getattr(models, arch)(...)`,
        `models.get_model(name)`), if it is one."""
        for value in self.constructions(model, at):
            if type(value.expr) is cst.Call and self._runtime_torchvision(value.expr):
                return value.expr
        return None

    def _owners(self, node: cst.CSTNode) -> Iterator[str]:
        """The functions around `node`, up to and including its class."""
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, (cst.ClassDef, cst.FunctionDef)):
                yield ancestor.name.value
                if type(ancestor) is cst.ClassDef:
                    return

    def _builds_batchnorm(self, made: cst.Call, buffered: bool) -> bool:
        return any(
            type(node) is cst.Call
            and (
                self._source(node, buffered)
                or (type(node.func) is cst.Name and self._bears(node.func.value, buffered))
            )
            for node in self.ctx.walk(made)
        )

    def _runtime_torchvision(self, call: cst.Call) -> bool:
        ctx, func = self.ctx, call.func
        if type(func) is cst.Subscript:
            return (ctx.qualname(func.value) or "") == "torchvision.models.__dict__"
        if type(func) is cst.Call and last_name(func.func) == "getattr" and func.args:
            return (ctx.qualname(func.args[0].value) or "") == "torchvision.models"
        return ctx.call_name(call) == "torchvision.models.get_model"

    # -- buffers -------------------------------------------------------------------------

    def wraps_buffer_free_model(self, wrap: cst.Call) -> bool:
        """Every model the DDP wrap `wrap` may hold is built by a buffer-free class."""
        model = argument(wrap, 0, "module")
        return model is not None and self._built_buffer_free(model, wrap)

    def wraps_buffered_model(self, wrap: cst.Call) -> bool:
        """Some model the DDP wrap `wrap` may hold certainly has buffers: it is built with
        BatchNorm layers (here or by another project module), or by a class of this file
        that registers a buffer."""
        model = argument(wrap, 0, "module")
        if model is None:
            return False
        if self._with_batchnorm(model, wrap, buffered=True):
            return True
        return any(
            type(v.expr) is cst.Call
            and type(v.expr.func) is cst.Name
            and self._registers_buffer(v.expr.func.value)
            for v in self.constructions(model, wrap)
        )

    def _registers_buffer(self, name: str) -> bool:
        return any(
            self._class_registers_buffer(cls) for cls in self.ctx.model.classes.get(name, [])
        )

    def _class_registers_buffer(self, cls: cst.ClassDef) -> bool:
        return any(
            type(n) is cst.Call and last_name(n.func) == "register_buffer"
            for n in self.ctx.walk(cls)
        )

    def _built_buffer_free(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        leaves = [v.expr for v in self.constructions(expr, at) if v.leaf]
        return bool(leaves) and all(self._construction_free(made) for made in leaves)

    def _construction_free(self, made: cst.BaseExpression) -> bool:
        """`made` builds a buffer-free class of this file, or a buffer-free torch layer or
        container (`nn.Sequential(nn.Linear(...), nn.GELU())`) of buffer-free parts."""
        if type(made) is not cst.Call:
            return False
        if type(made.func) is cst.Name and made.func.value in self.ctx.model.classes:
            return self._class_free(made.func.value) and self._arguments_free(made)
        name = self.ctx.qualname(made.func)
        if name == "torch.nn.Sequential":  # its parts must be seen: `Sequential(*blocks)` is not
            return all(
                not arg.star and arg.keyword is None and self._construction_free(arg.value)
                for arg in made.args
            )
        if name not in _BUFFER_FREE_LAYERS or name in _CONTAINERS:
            return False
        return all(
            self._call_free(node, None) for node in self.ctx.walk(made) if type(node) is cst.Call
        )

    def _arguments_free(self, made: cst.Call) -> bool:
        """What the construction hands the class adds no buffer: each argument holds
        literals, a parsed command line or buffer-free layers. A module handed in
        (`Classifier(encoder, head)` storing `self.encoder = encoder`) brings its own
        buffers, which the class's body does not show."""
        for arg in made.args:
            if arg.star:
                return False
            values = [v for v in self.ctx.resolver.values(arg.value, made) if v.leaf]
            if not values or not all(self._holds_no_module(v.expr, v.at) for v in values):
                return False
        return True

    def _holds_no_module(self, value: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """`value` is a number, a string, a flag, arithmetic, a parsed command line or an
        option of it (`args.hidden`), or a buffer-free construction."""
        if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
            return True
        if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.FormattedString)):
            return True
        if type(value) is cst.Name:
            return value.value in ("None", "True", "False")
        if type(value) is cst.Attribute:  # an option: `args.hidden_dim`
            owners = [v for v in self.ctx.resolver.values(value.value, at) if v.leaf]
            return bool(owners) and all(_parses_command_line(v.expr) for v in owners)
        if type(value) is cst.Call:
            return _parses_command_line(value) or self._construction_free(value)
        return False

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
        if self._class_registers_buffer(cls):
            return False
        for base in cls.bases:
            name = ctx.qualname(base.value)
            if name is not None:
                if name not in _BUFFER_FREE_LAYERS:
                    return False
            elif not (type(base.value) is cst.Name and self._class_free(base.value.value)):
                return False
        return all(self._calls_free(init, cls) for init in methods_named(cls, "__init__"))

    def _calls_free(self, root: cst.FunctionDef, cls: cst.ClassDef | None) -> bool:
        return all(
            self._call_free(node, cls) for node in self.ctx.walk(root) if type(node) is cst.Call
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
        if type(func) is cst.Name:
            if func.value in ctx.model.classes:
                return self._class_free(func.value)
            functions = ctx.model.functions.get(func.value, [])
            if functions:
                return all(self._node_free(f) for f in functions)
            return func.value in _BUILTINS
        if type(func) is cst.Attribute:
            receiver = func.value
            if type(receiver) is cst.Name and receiver.value == "self" and cls is not None:
                return all(self._node_free(m) for m in methods_named(cls, func.attr.value))
            return True  # `super().__init__()`, `layers.append(...)`: the argument is checked
        return False
