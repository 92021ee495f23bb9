"""Resumes that restore the model but not the optimizer (`domain.resume_loads`): the
optimizers of the file that keep state between steps, and whether anything in sight
restores or saves their state."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.resume_loads import OPTIMIZER_NAME, READER
from ddplint.domain.saves import save_sites
from ddplint.engine import argument
from ddplint.names import dotted

# `torch.optim` classes that keep per-parameter state between steps (all but plain SGD).
_STATEFUL = frozenset(
    {
        "Adam",
        "AdamW",
        "Adamax",
        "NAdam",
        "RAdam",
        "Adagrad",
        "Adadelta",
        "RMSprop",
        "Rprop",
        "ASGD",
        "SparseAdam",
        "LBFGS",
        "Adafactor",
        "Muon",
    }
)
_STATEFUL_THIRD_PARTY = re.compile(r"Adam|Lamb|LAMB|Lion|Adafactor|Novograd|RMS")
_MEMORY = {
    "SGD": "momentum buffers",
    "RMSprop": "running averages of squared gradients",
    "Adagrad": "accumulated squared gradients",
    "Adadelta": "running averages",
    "LBFGS": "curvature history",
}


@dataclass(frozen=True)
class Optimizer:
    """A stateful optimizer the file builds: the call, its class name, what it keeps."""

    call: cst.Call
    kind: str
    memory: str


def stateful_optimizers(ctx: FileContext) -> list[Optimizer]:
    """The optimizers the file constructs that keep state between steps: any `torch.optim`
    class but SGD, SGD with a momentum that is not a literal 0, Adam-like third-party ones."""
    loops = domain_of(ctx).loops
    found = []
    for call in ctx.calls:
        if not loops.is_optimizer_class(call):
            continue
        name = (ctx.call_name(call) or "").rpartition(".")[2]
        if name == "SGD":
            momentum = argument(call, 2, "momentum")
            if momentum is None or _zero(momentum):
                continue
        elif name not in _STATEFUL and not _STATEFUL_THIRD_PARTY.search(name):
            continue
        found.append(Optimizer(call, name, _MEMORY.get(name, "moment estimates")))
    return found


def _zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) and float(expr.value) == 0


def restores_optimizer(ctx: FileContext, optimizers: list[Optimizer]) -> bool:
    """Something in sight may restore an optimizer's state: a `load_state_dict` on an
    optimizer (by its value or its name), or an optimizer handed to a call named for
    loading or resuming (`load_checkpoint(path, model, optimizer)`)."""
    held = _holders(ctx, optimizers)
    for call in ctx.method_calls("load_state_dict"):
        func = call.func
        assert type(func) is cst.Attribute
        receiver = dotted(func.value) or ctx.code(func.value)
        if receiver in held or OPTIMIZER_NAME.search(receiver):
            return True
    for call in ctx.calls:
        name = (ctx.call_name(call) or dotted(call.func) or "").rpartition(".")[2]
        if not READER.search(name):
            continue
        passed = {dotted(a.value) for a in call.args}
        if passed & held or any(OPTIMIZER_NAME.search(p or "") for p in passed):
            return True
    return False


def _holders(ctx: FileContext, optimizers: list[Optimizer]) -> set[str]:
    """The names and attributes the optimizers are assigned to (`optimizer`,
    `self.optim`)."""
    held: set[str] = set()
    for optimizer in optimizers:
        statement = ctx.statement(optimizer.call)
        if type(statement) is cst.Assign:
            held.update(filter(None, (dotted(t.target) for t in statement.targets)))
        elif type(statement) is cst.AnnAssign:
            held.update(filter(None, [dotted(statement.target)]))
    return held


def saves_optimizer_state(ctx: FileContext) -> bool | None:
    """Whether a checkpoint saved in sight holds optimizer state (an optimizer's
    `state_dict()`, or anything named for one); None when the file saves nothing."""
    saved = [ctx.code(obj) for _, obj in save_sites(ctx)]
    if not saved:
        return None
    for call, obj in save_sites(ctx):
        for value in ctx.resolver.sources(obj, call, 2):
            if OPTIMIZER_NAME.search(ctx.code(value.expr)):
                return True
    return False


def trains_with(ctx: FileContext, optimizer: Optimizer, load: cst.Call) -> bool:
    """The optimizer is built where the load's resume applies: in the same function, in
    the same class (a trainer's `__init__` and its `resume`), or either at module level."""
    made, loaded = ctx.enclosing_function(optimizer.call), ctx.enclosing_function(load)
    if made is None or loaded is None or made is loaded:
        return True
    owner = ctx.model.enclosing_class(made)
    return owner is not None and owner is ctx.model.enclosing_class(loaded)
