"""What a `torch.save` writes: training state (a model, a `state_dict()`, a checkpoint dict)
or data known as such (a tensor, predictions, scores, a metrics history: a dump or a log that
no resumed job reads), and saves that cache one data item (a dataset's per-sample file).
Only positive evidence makes a save data: an unknown value is taken for a checkpoint. And
what a load restores holds no tensor where it feeds only a GradScaler or a scheduler."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import facts_of, last_name, string_key, string_value
from ddplint.domain.runners import holds_at_every_call
from ddplint.names import dotted

# Words of a name that holds data (a batch's tensors, predictions, a metrics log).
_DATA_WORDS = re.compile(
    r"(^|_)(scores?|assignments?|predictions?|preds?|outputs?|logits|features?|feats|"
    r"embeddings?|activations?|history|stats?|statistics|metrics?|results?|losses|"
    r"accuracies|spec|specs|spectrograms?|mels?|samples?|labels?|targets?)(_|$)",
    re.IGNORECASE,
)
# Words of a name that may hold training state: any of them makes the value unknown.
_STATE_WORDS = re.compile(
    r"state|ckpt|checkpoint|model|net|optim|sched|scaler|weight|param|ema|module|snapshot|"
    r"save|encoder|decoder|backbone|head|layer|prototypes?|centroids?|memory|queue|bank",
    re.IGNORECASE,
)
_STATE_CALLS = re.compile(r"state|ckpt|checkpoint|snapshot", re.IGNORECASE)
_COPIES = frozenset({"deepcopy", "copy", "dict", "OrderedDict"})
# Methods that return the same object, moved or copied (`model.cpu()`).
_SAME_OBJECT = frozenset({"cpu", "cuda", "to", "detach", "clone", "half", "float", "copy"})
_TENSOR_TYPES = frozenset({"Tensor", "torch.Tensor", "FloatTensor", "torch.FloatTensor"})
# Methods a torch Dataset runs once per data item.
_ITEM_METHODS = frozenset({"__getitem__", "__getitems__", "__iter__", "__next__"})


def saves_data(ctx: FileContext, obj: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`obj` is known to hold data, not training state: a name of data words (`scores`,
    `predictions`, `history`, `labels`) or a parameter annotated as a tensor, also moved or
    copied (`features.cpu()`), with nothing in what it may hold that names state
    (`state_dict()`, `model`, `optimizer`, `ckpt`)."""
    obj = _moved(obj)
    name = last_name(obj) if isinstance(obj, (cst.Name, cst.Attribute)) else None
    if name is None or _STATE_WORDS.search(name):
        return False
    values = ctx.resolver.values(obj, at)
    if any(_names_state(value.expr) for value in values):
        return False
    return bool(_DATA_WORDS.search(name)) or _tensor_parameter(ctx, name, at)


def caches_item(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs while a dataset loads one item (`__getitem__`, or a method only it calls,
    a few levels up): a per-sample file (`<utterance>.spec.pt`), each rank its own samples."""
    return holds_at_every_call(ctx, node, lambda at: _in_item_method(ctx, at))


def _in_item_method(ctx: FileContext, node: cst.CSTNode) -> bool:
    func = ctx.enclosing_function(node)
    return (
        func is not None
        and func.name.value in _ITEM_METHODS
        and ctx.model.enclosing_class(func) is not None
    )


def _names_state(expr: cst.BaseExpression) -> bool:
    """`expr` may be training state: a name named for it (`model`, `ckpt`), a call named
    for it (`get_checkpoint()`, `net.state_dict()`), a copy of one (`deepcopy(model)`,
    `model.cpu()`), or a container holding one; not the result of another call (`model(x)`
    is data)."""
    if type(expr) is cst.Dict:
        return any(type(e) is not cst.DictElement or _names_state(e.value) for e in expr.elements)
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        return any(type(e) is cst.StarredElement or _names_state(e.value) for e in expr.elements)
    if type(expr) is cst.Call:
        called = last_name(expr.func) or ""
        if _STATE_CALLS.search(called):
            return True
        origin = _moved(expr)
        if origin is not expr:
            return _names_state(origin)
        return called in _COPIES and any(_names_state(a.value) for a in expr.args)
    name = last_name(expr)
    return name is not None and bool(_STATE_WORDS.search(name))


def _moved(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The object a chain of moves and copies starts from (`x` of `x.detach().cpu()`)."""
    while (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value in _SAME_OBJECT
    ):
        expr = expr.func.value
    return expr


def _tensor_parameter(ctx: FileContext, name: str, at: cst.CSTNode) -> bool:
    """`name` is a parameter of the enclosing function annotated `torch.Tensor`."""
    binding = facts_of(ctx).reaching_binding(name, at)
    func = binding.statement if binding is not None and binding.kind == "param" else None
    if type(func) is not cst.FunctionDef:
        return False
    params = (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
    for param in params:
        if param.name.value == name and param.annotation is not None:
            annotation = param.annotation.annotation
            return ctx.code(annotation).strip() in _TENSOR_TYPES
    return False


# Objects whose `state_dict()` holds Python numbers only, no tensor: a GradScaler (its
# scale is kept as a float), a learning-rate scheduler.
_TENSORLESS_MAKERS = re.compile(r"(^|\.)(GradScaler|ShardedGradScaler)$|(^|\.)lr_scheduler\.")
_TENSORLESS_NAMES = re.compile(r"(^|_)(scaler|sched|scheduler|lr_scheduler)(_\w+)?$", re.I)


def restores_tensorless_state(ctx: FileContext, load: cst.Call) -> bool:
    """What `load` returns goes, whole, only into the `load_state_dict` of objects whose
    state holds no tensor (`scaler.load_state_dict(torch.load(path))` with `scaler =
    GradScaler()`): nothing in the file can land on a GPU. An object made out of sight is
    judged by its name (`scaler`, `lr_scheduler`)."""
    parent = ctx.parent(load)
    arg = parent if type(parent) is cst.Arg else None
    call = ctx.parent(arg) if arg is not None else None
    if type(call) is not cst.Call or type(call.func) is not cst.Attribute:
        return False
    if call.func.attr.value != "load_state_dict":
        return False
    receiver = call.func.value
    values = [v for v in ctx.resolver.values(receiver, call) if v.leaf]
    if values and all(type(v.expr) is cst.Call for v in values):
        return all(
            _TENSORLESS_MAKERS.search(ctx.qualname(v.expr.func) or dotted(v.expr.func) or "")
            for v in values
            if type(v.expr) is cst.Call
        )
    name = last_name(receiver)
    return name is not None and bool(_TENSORLESS_NAMES.search(name))


def saved_keys(ctx: FileContext, obj: cst.BaseExpression, at: cst.CSTNode) -> frozenset[str] | None:
    """The keys of what a save writes, where every value it may hold is in sight: a dict
    literal's string keys (`{"model": ..., "epoch": epoch}`, also through a name bound to
    one, with the keys later stored into it: `state["optimizer"] = ...`), or none for a
    model's `state_dict()` (its keys are parameter names) or a wrapped model itself
    (`ddp_model.module`). None when any value is out of sight or the dict is changed some
    other way (`state.update(extra)`)."""
    values = [v.expr for v in ctx.resolver.values(obj, at) if v.leaf] or [obj]
    keys: set[str] = set()
    for value in values:
        if type(value) is cst.Attribute and value.attr.value == "module":
            continue
        if _updated_in_place(ctx, value, obj):
            continue  # `state |= {...}`: its keys are `_stored_keys`'
        if type(value) is cst.Call and type(value.func) is cst.Attribute:
            if value.func.attr.value == "state_dict" and not value.args:
                continue
            return None
        literal = _literal_keys(value)
        if literal is None:
            return None
        keys |= literal
    if type(obj) is cst.Name:
        stored = _stored_keys(ctx, obj.value, at)
        if stored is None:
            return None
        keys |= stored
    return frozenset(keys)


def _updated_in_place(ctx: FileContext, value: cst.BaseExpression, obj: cst.BaseExpression) -> bool:
    """`value` is the name `obj` as the target of an update (`state |= extra`)."""
    parent = ctx.parent(value)
    return (
        type(obj) is cst.Name
        and type(parent) is cst.AugAssign
        and parent.target is value
        and dotted(value) == obj.value
    )


def _literal_keys(value: cst.BaseExpression) -> set[str] | None:
    """The string keys of a dict literal; None for anything else (`{**extra}` too)."""
    if type(value) is not cst.Dict:
        return None
    keys = set()
    for element in value.elements:
        key = string_value(element.key) if type(element) is cst.DictElement else None
        if key is None:
            return None
        keys.add(key)
    return keys


def _stored_keys(ctx: FileContext, name: str, at: cst.CSTNode) -> set[str] | None:
    """The string keys stored into `name` in the function of `at` (`name["k"] = ...`,
    `name |= {"k": ...}`); None when the dict is changed otherwise (`name.update(...)`,
    a computed key)."""
    scope = ctx.scope(at)
    keys: set[str] = set()
    for node in ctx.nodes_of(cst.Subscript, cst.Call, cst.AugAssign):
        if ctx.scope(node) is not scope:
            continue
        if type(node) is cst.AugAssign:
            if dotted(node.target) != name:
                continue
            added = _literal_keys(node.value)
            if added is None:
                return None
            keys |= added
            continue
        if type(node) is cst.Call:
            func = node.func
            if (
                type(func) is cst.Attribute
                and dotted(func.value) == name
                and func.attr.value in ("update", "setdefault", "__setitem__")
            ):
                return None
            continue
        assert type(node) is cst.Subscript
        if dotted(node.value) != name or type(ctx.parent(node)) is not cst.AssignTarget:
            continue
        key = string_key(node)
        if key is None:
            return None
        keys.add(key)
    return keys
