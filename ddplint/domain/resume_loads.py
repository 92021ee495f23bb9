"""Checkpoint loads that continue training: a `torch.load` whose result restores the model
and from which a start counter is read, which restores an optimizer's state too, or which a
resume flag chooses. What DDP036 asks (is the optimizer restored?) and what DDP014 asks
(does the run read back the file it overwrites?)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import string_key, string_value
from ddplint.domain.runners import handed_on
from ddplint.engine import argument
from ddplint.engine.model import all_params
from ddplint.names import dotted

LOAD = "torch.load"
# A call that reads a checkpoint back (`torch.load`, `load_checkpoint`, `resume_from`,
# `loadModel`), and one named for resuming in particular. The verb starts a word of the
# name: not `upload_artifact` or `download`, nor a data loader (`DataLoader`,
# `get_loader`, `train_loader`), which reads no checkpoint.
READER = re.compile(
    r"(?:^|(?<=[_.])|(?<=[a-z0-9])(?=[A-Z]))(?<!data_)(?<!Data)"
    r"(?i:(?:re)?load(?!ers?(?:$|[_.A-Z]))|resume|restore|recover|restart)"
)
RESUMER = re.compile(r"(?i)resume|restore|recover|restart")
# A name an optimizer is kept under (`optimizer`, `self.opt`, `solver`).
OPTIMIZER_NAME = re.compile(r"(?i)optim|(^|_)opt(_|$)|solver")
_COUNTER_KEY = re.compile(
    r"(?i)^(start_|last_|cur_|current_)?"
    r"(epoch|epochs|step|steps|global_step|iter|iters|iteration|it|n_iter|num_updates|updates)"
    r"(_start)?$"
)
_START_NAME = re.compile(r"(?i)start|begin|first|init|resume|last|current|cur_")
_RESUME_FLAG = re.compile(r"(?i)resume|restore|continue|auto_resume|recover")


@dataclass(frozen=True)
class Resume:
    """A checkpoint load that continues training: the load, the names it is bound to, the
    counter read from it (`ckpt["epoch"]`, None when only a resume flag says so)."""

    load: cst.Call
    names: frozenset[str]
    counter: cst.BaseExpression | None


# Names of weights that come from another run: pretrained, a teacher's, an initialisation.
_ANOTHER_RUN = re.compile(
    r"(?i)pre_?trained|teacher|init(?:ial)?_?(?:ckpt|checkpoint|weights?|model)|warm_?start"
    r"|finetune_from"
)


def from_another_run(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The path read is named for weights of another run (`pretrained_model_path /
    "best.pth"`, `args.teacher_ckpt`, `init_checkpoint`): the load starts from them, it does
    not resume this run from the file it writes under the same name."""
    shown = [ctx.code(path), *(ctx.code(v.expr) for v in ctx.resolver.values(path, at))]
    return any(_ANOTHER_RUN.search(text) is not None for text in shown) or _passed_so(ctx, path)


def _passed_so(ctx: FileContext, path: cst.BaseExpression) -> bool:
    """`path` is a parameter of its function, and every call of the function in this file
    passes a path named for weights of another run (`self.restore_checkpoint(
    params.pretrained_ckpt_path)`), with no call from elsewhere in sight."""
    func = ctx.enclosing_function(path)
    if type(path) is not cst.Name or func is None:
        return False
    if not any(param.name.value == path.value for param in all_params(func.params)):
        return False
    calls = ctx.resolver.calls_of(func)
    if not calls or handed_on(ctx, func.name.value):
        return False
    passed = [ctx.resolver.passed(call, func, path.value) for call in calls]
    return all(
        value is not None and _ANOTHER_RUN.search(ctx.code(value)) is not None for value in passed
    )


def resumes(ctx: FileContext) -> tuple[Resume, ...]:
    """The `torch.load` calls bound to a name (`ckpt = torch.load(path)`) whose result a
    `load_state_dict` restores, and from which a start counter is read (`start_epoch =
    ckpt["epoch"] + 1`), whose result restores an optimizer's state too
    (`optimizer.load_state_dict(ckpt["optimizer"])`), or which a resume flag chooses (`if
    args.resume:`); found once per file (DDP014 asks for every load it weighs)."""
    return ctx.memo(_resumes)


def _resumes(ctx: FileContext) -> tuple[Resume, ...]:
    found = []
    for load in ctx.calls_to(LOAD):
        names = _bound_names(ctx, load)
        if not names or not _restores_model(ctx, load, names):
            continue
        path = argument(load, 0, "f")
        if path is not None and from_another_run(ctx, path, load):
            continue  # pretrained weights to start from: this run resumes nothing
        counter = _start_counter(ctx, load, names)
        if (
            counter is not None
            or _under_resume_flag(ctx, load)
            or _restores_optimizer_from(ctx, load, names)
        ):
            found.append(Resume(load, names, counter))
    return tuple(found)


def keys_read(ctx: FileContext, load: cst.Call) -> frozenset[str]:
    """The string keys read by subscript from what `load` returns: at once
    (`torch.load(path)["state_dict"]`) or from the names it is bound to, after it in its
    function (`ckpt["optimizer"]`, `ckpt["epoch"]`), wherever the load runs: not under a
    test, loop or `try` the load is not under too (`if not args.finetune:
    optimizer.load_state_dict(ckpt["optimizer"])` reads it only on some runs). A file
    without one of them fails to load there (`ckpt.get("scaler")` tolerates a missing key
    and is not counted)."""
    known = ctx.memo(_keys_read_by_load)
    found = known.get(id(load))
    if found is None:
        found = known[id(load)] = _keys_read(ctx, load)
    return found


def _keys_read_by_load(ctx: FileContext) -> dict[int, frozenset[str]]:
    """`keys_read` of each load asked about, by the load's identity (the tree outlives
    the memo: both belong to the file's context)."""
    return {}


def _keys_read(ctx: FileContext, load: cst.Call) -> frozenset[str]:
    keys: set[str | None] = set()
    parent = ctx.parent(load)
    if type(parent) is cst.Subscript:
        keys.add(string_key(parent))
    names = _bound_names(ctx, load)
    scope = ctx.scope(load)
    for node in ctx.nodes_of(cst.Subscript) if names else ():
        if type(node) is not cst.Subscript or ctx.scope(node) is not scope:
            continue
        named = type(node.value) is cst.Name and node.value.value in names
        if named and ctx.before(load, node) and not _conditional(ctx, node, load):
            keys.add(string_key(node))
    return frozenset(k for k in keys if k is not None)


def keys_used(ctx: FileContext, load: cst.Call) -> frozenset[str] | None:
    """The string keys of every use of what `load` returns, in its function after it
    (`ckpt["model"]`, `ckpt.get("epoch", 0)`); None when it is not bound to a name, or a
    use reads it some other way (passed whole, iterated, its keys listed, returned)."""
    names = _bound_names(ctx, load)
    if not names:
        return None
    scope = ctx.scope(load)
    statement = ctx.statement(load)
    keys: set[str] = set()
    for node in ctx.nodes_of(cst.Name):
        assert type(node) is cst.Name
        if node.value not in names or ctx.scope(node) is not scope:
            continue
        if ctx.is_inside(node, statement) or not ctx.before(load, node):
            continue
        key = _key_of_use(ctx, node)
        if key is None:
            return None
        keys.add(key)
    return frozenset(keys)


def _key_of_use(ctx: FileContext, node: cst.Name) -> str | None:
    """The key `node` is read at (`node["k"]`, `node.get("k", ...)`), else None."""
    parent = ctx.parent(node)
    if type(parent) is cst.Subscript and parent.value is node:
        return string_key(parent)
    if type(parent) is cst.Attribute and parent.attr.value == "get":
        call = ctx.parent(parent)
        if type(call) is cst.Call and call.func is parent and call.args:
            return string_value(call.args[0].value)
    return None


def _conditional(ctx: FileContext, node: cst.CSTNode, load: cst.Call) -> bool:
    """`node` sits under a test, loop or `try` that does not hold `load` too; a second
    `if` on the load's own test (`if args.resume:` twice) is no other condition."""
    load_tests = {ctx.code(a.test) for a in ctx.ancestors(load) if type(a) is cst.If}
    for ancestor in ctx.ancestors(node):
        if ctx.is_inside(load, ancestor):
            return False
        if type(ancestor) is cst.If and ctx.code(ancestor.test) in load_tests:
            continue
        if isinstance(ancestor, cst.If | cst.For | cst.While | cst.Try | cst.IfExp):
            return True
    return False


def _bound_names(ctx: FileContext, load: cst.Call) -> frozenset[str]:
    """The plain names a statement `ckpt = torch.load(...)` binds the load's result to."""
    statement = ctx.statement(load)
    if not (type(statement) is cst.Assign and statement.value is load):
        return frozenset()
    return frozenset(t.target.value for t in statement.targets if type(t.target) is cst.Name)


def _restores_model(ctx: FileContext, load: cst.Call, names: frozenset[str]) -> bool:
    return bool(_restorers(ctx, load, names))


def _restores_optimizer_from(ctx: FileContext, load: cst.Call, names: frozenset[str]) -> bool:
    """An optimizer's `load_state_dict` takes the loaded value
    (`optimizer.load_state_dict(ckpt["optimizer"])`): only a resume does that."""
    return any(OPTIMIZER_NAME.search(receiver) for receiver in _restorers(ctx, load, names))


def _restorers(ctx: FileContext, load: cst.Call, names: frozenset[str]) -> list[str]:
    """The last names of the objects whose `load_state_dict` takes the value the load is
    bound to (`names`), after it in its function (`model`, `optimizer` of `self.optimizer`)."""
    scope = ctx.scope(load)
    found = []
    for call in ctx.method_calls("load_state_dict"):
        func = call.func
        assert type(func) is cst.Attribute
        if (
            ctx.scope(call) is scope
            and ctx.before(load, call)
            and _reached(
                ctx, load, names & {n for a in call.args for n in ctx.names_in(a.value)}, call
            )
        ):
            found.append((dotted(func.value) or "").rpartition(".")[2])
    return found


def _reached(ctx: FileContext, load: cst.Call, names: Iterable[str], at: cst.CSTNode) -> bool:
    """One of `names` holds the load's result at `at`: its binding by the load's statement
    reaches there (`ckpt = torch.load(args.checkpoint)` rebinding the `ckpt` of an earlier
    load of pretrained weights: what follows reads the later one)."""
    statement = ctx.statement(load)
    return any(b.statement is statement for name in names for b in ctx.resolver.reaching(name, at))


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
        if key is None or not _reached(ctx, load, names, node):
            continue
        for ancestor in ctx.ancestors(node):
            if type(ancestor) is cst.Assign:
                targets = [(dotted(t.target) or "").rpartition(".")[2] for t in ancestor.targets]
                if any(_START_NAME.search(t) or t == key for t in targets) and _read_later(
                    ctx, ancestor
                ):
                    return node
                break
            if type(ancestor) is cst.Call and dotted(ancestor.func) == "range":
                return node
            if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                break
    return None


def _read_later(ctx: FileContext, assign: cst.Assign) -> bool:
    """What `assign` binds is read: an attribute or a global may be read anywhere; a local
    name only by a later statement of its function (`epoch = ckpt["epoch"]` that nothing
    reads, in an evaluation that only loads the weights, starts no loop)."""
    locals_ = [t.target for t in assign.targets if type(t.target) is cst.Name]
    if len(locals_) != len(assign.targets) or ctx.enclosing_function(assign) is None:
        return True
    scope = ctx.scope(assign)
    names = {target.value for target in locals_}
    return any(
        type(node) is cst.Name
        and node.value in names
        and ctx.scope(node) is scope
        and ctx.before(assign, node)
        and not ctx.is_inside(node, assign)
        for node in ctx.nodes_of(cst.Name)
    )


def _counter_read(node: cst.CSTNode, names: frozenset[str]) -> str | None:
    """The counter key `node` reads from one of `names`: `ckpt["epoch"]`, `ckpt.get("step")`."""
    if type(node) is cst.Subscript:
        holder, key_node = node.value, node.slice[0].slice if len(node.slice) == 1 else None
        key_expr = key_node.value if type(key_node) is cst.Index else None
    elif (
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value == "get"
        and node.args
    ):
        holder, key_expr = node.func.value, node.args[0].value
    else:
        return None
    if not (type(holder) is cst.Name and holder.value in names):
        return None
    if type(key_expr) is cst.SimpleString:
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
