"""Resumes that restore the model but not the optimizer: a checkpoint loaded to continue
training (the start epoch or step is read from it, or a resume flag chooses it), the
optimizers of the file that keep state between steps, and whether anything in sight
restores or saves their state."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.saves import save_sites
from ddplint.engine import argument
from ddplint.names import dotted

LOAD = "torch.load"
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
_COUNTER_KEY = re.compile(
    r"(?i)^(start_|last_|cur_|current_)?"
    r"(epoch|epochs|step|steps|global_step|iter|iters|iteration|it|n_iter|num_updates|updates)"
    r"(_start)?$"
)
_START_NAME = re.compile(r"(?i)start|begin|first|init|resume|last|current|cur_")
_RESUME_FLAG = re.compile(r"(?i)resume|restore|continue|auto_resume|recover")
_READER = re.compile(r"(?i)load|resume|restore|recover")
_OPTIMIZER_NAME = re.compile(r"(?i)optim|(^|_)opt(_|$)|solver")
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


@dataclass(frozen=True)
class Resume:
    """A checkpoint load that continues training: the load, the names it is bound to, the
    counter read from it (`ckpt["epoch"]`, None when only a resume flag says so)."""

    load: cst.Call
    names: frozenset[str]
    counter: cst.BaseExpression | None


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
        assert isinstance(func, cst.Attribute)
        receiver = dotted(func.value) or ctx.code(func.value)
        if receiver in held or _OPTIMIZER_NAME.search(receiver):
            return True
    for call in ctx.calls:
        name = (ctx.call_name(call) or dotted(call.func) or "").rpartition(".")[2]
        if not _READER.search(name):
            continue
        passed = {dotted(a.value) for a in call.args}
        if passed & held or any(_OPTIMIZER_NAME.search(p or "") for p in passed):
            return True
    return False


def _holders(ctx: FileContext, optimizers: list[Optimizer]) -> set[str]:
    """The names and attributes the optimizers are assigned to (`optimizer`,
    `self.optim`)."""
    held: set[str] = set()
    for optimizer in optimizers:
        statement = ctx.statement(optimizer.call)
        if isinstance(statement, cst.Assign):
            held.update(filter(None, (dotted(t.target) for t in statement.targets)))
        elif isinstance(statement, cst.AnnAssign):
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
            if _OPTIMIZER_NAME.search(ctx.code(value.expr)):
                return True
    return False


def resumes(ctx: FileContext) -> Iterator[Resume]:
    """The `torch.load` calls bound to a name (`ckpt = torch.load(path)`) whose result a
    `load_state_dict` restores, and from which a start counter is read (`start_epoch =
    ckpt["epoch"] + 1`) or which a resume flag chooses (`if args.resume:`)."""
    for load in ctx.calls_to(LOAD):
        statement = ctx.statement(load)
        if not (isinstance(statement, cst.Assign) and statement.value is load):
            continue
        names = frozenset(
            t.target.value for t in statement.targets if isinstance(t.target, cst.Name)
        )
        if not names or not _restores_model(ctx, load, names):
            continue
        counter = _start_counter(ctx, load, names)
        if counter is not None or _under_resume_flag(ctx, load):
            yield Resume(load, names, counter)


def _restores_model(ctx: FileContext, load: cst.Call, names: frozenset[str]) -> bool:
    scope = ctx.scope(load)
    for call in ctx.method_calls("load_state_dict"):
        if (
            ctx.scope(call) is scope
            and ctx.before(load, call)
            and names & {n for a in call.args for n in ctx.names_in(a.value)}
        ):
            return True
    return False


def _start_counter(
    ctx: FileContext, load: cst.Call, names: frozenset[str]
) -> cst.BaseExpression | None:
    """`ckpt["epoch"]` (or `ckpt.get("step")`) read after the load in its function into a
    name that starts the loop (`start_epoch`, `self.begin_step`), into the counter of its
    own name (`step = ckpt["step"]`), or into `range(...)`."""
    scope = ctx.scope(load)
    for node in ctx.nodes_of(cst.Subscript, cst.Call):
        if not isinstance(node, (cst.Subscript, cst.Call)):
            continue
        if ctx.scope(node) is not scope or not ctx.before(load, node):
            continue
        key = _counter_read(node, names)
        if key is None:
            continue
        for ancestor in ctx.ancestors(node):
            if isinstance(ancestor, cst.Assign):
                targets = [(dotted(t.target) or "").rpartition(".")[2] for t in ancestor.targets]
                if any(_START_NAME.search(t) or t == key for t in targets):
                    return node
                break
            if isinstance(ancestor, cst.Call) and dotted(ancestor.func) == "range":
                return node
            if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                break
    return None


def _counter_read(node: cst.CSTNode, names: frozenset[str]) -> str | None:
    """The counter key `node` reads from one of `names`: `ckpt["epoch"]`, `ckpt.get("step")`."""
    if isinstance(node, cst.Subscript):
        holder, key_node = node.value, node.slice[0].slice if len(node.slice) == 1 else None
        key_expr = key_node.value if isinstance(key_node, cst.Index) else None
    elif (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "get"
        and node.args
    ):
        holder, key_expr = node.func.value, node.args[0].value
    else:
        return None
    if not (isinstance(holder, cst.Name) and holder.value in names):
        return None
    if isinstance(key_expr, cst.SimpleString):
        key = key_expr.raw_value
        return key if _COUNTER_KEY.match(key) else None
    return None


def _under_resume_flag(ctx: FileContext, load: cst.Call) -> bool:
    """A condition the load runs under names resuming (`if args.resume:`)."""
    for condition in ctx.flow.conditions(load):
        for term, value in condition.terms():
            if value and _RESUME_FLAG.search(dotted(term) or ""):
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
