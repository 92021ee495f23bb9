"""Values only some ranks change: a variable every rank assigns and one side of a rank test
assigns again (`start_epoch = 0`, then under `if rank == 0:` `start_epoch =
ckpt["epoch"]`; `global_step = 0`, then `global_step += 1` under the rank-0 logging
block). Where both assignments reach a read, the value read differs between ranks.

An attribute of the instance (`self.early_stop`) is such a value where its class sets it
on every rank only to constants or loaded state, and changes it only under a rank test or
in a method every call of which runs under one (`_save_best()` called under `if
is_master():`), reached from the loop that reads it.

A value is also one where it follows such a value, a few steps deep
(`derived_overrides`): computed from one (`is_best = mAP > best_mAP`), the result of a
function of this file that returns one (`mAP` set under `if dist.get_rank() == 0:` and
to 0 on the others, then returned), or assigned under a test that reads one (`best_epoch
= epoch` under `if is_best:`, beside `best_epoch = -1` before the loop), unless a
collective is handed it after the assignment (`dist.broadcast(stop, 0)`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.collective_temporaries import copied_from, destination
from ddplint.domain.gates import Gate
from ddplint.domain.one_rank_calls import rank_only_method_call
from ddplint.engine import argument
from ddplint.engine.model import Binding, storage_key


@dataclass(frozen=True)
class Override:
    """`name` may hold, at the loop, a value assigned under `gate` only: in the method
    `method` (every call of which runs under `gate`) where it is set."""

    name: str
    gate: Gate
    method: str | None = None
    parameter: str = ""  # the parameter a caller passes `name` to, where it was followed
    # How `name` follows a value only some ranks change, where it is not one itself
    # (`derived_overrides`): `computed from `mAP`, ...`.
    origin: str = ""

    @property
    def shown(self) -> str:
        """The value for a message: `name`, or the parameter given it by a caller."""
        return (
            f"`{self.parameter}` (given `{self.name}` by a caller)"
            if self.parameter
            else f"`{self.name}`"
        )

    def describe(self, ctx: FileContext) -> str:
        """Where the value changes, for a message: `only where `rank == 0` holds`."""
        if self.origin:
            return self.origin
        where = self.gate.describe(ctx.code(self.gate.test).strip())
        return where if self.method is None else f"in `self.{self.method}()`, which runs {where}"


def rank_overrides(ctx: FileContext, loop: cst.For | cst.While) -> list[Override]:
    """For a loop over `range(...)`, each variable of the bounds that only some ranks
    change (`overridden_names`); for a `while` loop, each such variable of its test
    (`while global_step < n_iters:` with `global_step += 1` on rank 0 only)."""
    if isinstance(loop, cst.While):
        return overridden_names(ctx, loop.test, loop, carried=loop)
    iterable = loop.iter
    if not (
        type(iterable) is cst.Call
        and type(iterable.func) is cst.Name
        and iterable.func.value == "range"
        and not ctx.bindings_of("range")
    ):
        return []
    return [o for arg in iterable.args for o in overridden_names(ctx, arg.value, loop)]


def overridden_names(
    ctx: FileContext,
    expr: cst.BaseExpression,
    at: cst.CSTNode,
    carried: cst.CSTNode | None = None,
    callers: bool = True,
    depth: int = 3,
) -> list[Override]:
    """The names read in `expr` whose assignments reaching `at` (all in its frame) include
    one every rank runs and one only the ranks of a rank test run, which assigns another
    expression (`epochs = opt.epochs` again changes nothing). `carried`: a loop whose test
    `expr` is, so that the assignments of its body reach it from the pass before. A
    parameter of the function is followed into the calls of this file that run it
    (`callers`; one level): what each passes may be such a name there. A name that is
    none of these may follow one (`derived_overrides`, `depth` steps deep)."""
    gates, resolver = domain_of(ctx).gates, ctx.resolver
    frame = resolver.model.frame(at)
    found: list[Override] = []
    for node in ctx.walk(expr):
        if type(node) is cst.Attribute:
            override = _attribute_override(ctx, node, at, carried)
            if override is not None:
                found.append(override)
            continue
        if type(node) is not cst.Name:
            continue
        reaching = list(resolver.reaching(node.value, at))
        if carried is not None:
            known = {id(b) for b in reaching}
            reaching += [
                b
                for b in ctx.model.bindings_in(frame).get(node.value, ())
                if id(b) not in known and ctx.is_inside(b.statement, carried)
            ]
        if callers and len(reaching) == 1 and reaching[0].kind == "param":
            found.extend(_passed_overrides(ctx, node.value, at))
            continue
        if any(b.scope is not frame for b in reaching):
            continue
        if len(reaching) < 2:
            found.extend(derived_overrides(ctx, node.value, reaching, depth))
            continue
        reaching = _in_distributed_runs(ctx, reaching)
        if len(reaching) < 2:
            continue
        binding_gates = [gates.gate(b.statement) for b in reaching]
        every_rank = {
            ctx.code(b.value).strip()
            for b, g in zip(reaching, binding_gates, strict=True)
            if g is None
        }
        if not every_rank:
            if _all_agreed(ctx, reaching):
                continue  # `fid = comm.bcast(fid)` / `fid = comm.bcast(None)`: the root's
            split = _split_by_test(ctx, reaching, binding_gates)
            if split is not None and not _collected(ctx, node.value, split.node):
                found.append(Override(node.value, split))
            continue
        before = len(found)
        for binding, gate in zip(reaching, binding_gates, strict=True):
            if (
                gate is not None
                and not gates.opens_to_every_rank(gate)
                and (
                    binding.kind == "augassign" or ctx.code(binding.value).strip() not in every_rank
                )
                and not _received_from_other_side(ctx, binding, gate)
                and not _relayed(ctx, binding)
                and not _reads_received(ctx, binding)
                and not _mirrored(ctx, binding, node.value)
                and not _collected(ctx, node.value, binding.statement)
                and not _agreed(binding)
            ):
                found.append(Override(node.value, gate))
                break
        if len(found) == before and all(g is None for g in binding_gates):
            found.extend(derived_overrides(ctx, node.value, reaching, depth))
    return found


def derived_overrides(
    ctx: FileContext, name: str, reaching: list[Binding], depth: int
) -> list[Override]:
    """`name`, assigned by `reaching` (on every rank), follows a value only some ranks
    change: an assignment reads one, or calls a function of this file that returns one,
    or (beside an assignment outside it) runs under a test that reads one. The first such
    way found, as an `Override` saying how (see the module docstring)."""
    if depth <= 0:
        return []
    below = depth - 1
    for binding in reaching:
        if binding.kind not in ("assign", "augassign"):
            continue
        if _collected(ctx, name, binding.statement):
            continue  # handed to a collective after this: the same on every rank again
        value = binding.value
        computed = (
            overridden_names(ctx, value, binding.statement, callers=False, depth=below)
            if _arithmetic(ctx, value)
            else []
        )
        for inner in computed:
            origin = f"as it is computed from {inner.shown}, which changes {inner.describe(ctx)}"
            return [Override(name, inner.gate, origin=origin)]
        for func, returned in _returned_values(ctx, value, binding):
            for inner in overridden_names(ctx, returned, returned, callers=False, depth=below):
                origin = (
                    f"as `{func.name.value}()` returns it from {inner.shown}, which changes "
                    f"{inner.describe(ctx)}"
                )
                return [Override(name, inner.gate, origin=origin)]
    if len(reaching) < 2:
        return []
    for binding in reaching:
        for condition in ctx.flow.conditions(binding.statement):
            if condition.early_exit or type(condition.gate) is not cst.If:
                continue
            if all(ctx.is_inside(b.statement, condition.gate) for b in reaching):
                continue  # every value of the name is set under the test: not a split
            test = condition.test
            for inner in overridden_names(ctx, test, condition.gate, callers=False, depth=below):
                origin = (
                    f"as it is set under `{ctx.code(test).strip()}`, where {inner.shown} "
                    f"changes {inner.describe(ctx)}"
                )
                return [Override(name, inner.gate, origin=origin)]
    return []


# Calls through which a computed value still follows what it reads (`float(mAP)`,
# `loss.item()`); any other call may return anything (`Model(cfg, hyp=hyp)`).
_VALUE_BUILTINS = frozenset({"float", "int", "bool", "abs", "max", "min", "round", "len", "sum"})
_VALUE_METHODS = frozenset({"item", "mean", "sum", "cpu", "float", "detach", "tolist"})


def _arithmetic(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """`value` computes from what it reads without calling out: operators, comparisons,
    subscripts, and calls only of `_VALUE_BUILTINS` and `_VALUE_METHODS`."""
    for call in ctx.walk(value):
        if type(call) is not cst.Call:
            continue
        func = call.func
        if type(func) is cst.Name and func.value in _VALUE_BUILTINS:
            continue
        if type(func) is cst.Attribute and func.attr.value in _VALUE_METHODS:
            continue
        return False
    return True


def _returned_values(
    ctx: FileContext, value: cst.BaseExpression, binding: Binding
) -> list[tuple[cst.FunctionDef, cst.BaseExpression]]:
    """The expressions the functions of this file that `value` calls (`validate(...)`)
    return: the element at the binding's position for a tuple unpacked from a tuple
    returned (`loss, mAP = validate(...)` from `return loss_avg, mAP`)."""
    if type(value) is not cst.Call:
        return []
    found: list[tuple[cst.FunctionDef, cst.BaseExpression]] = []
    for func in ctx.resolver.callees(value):
        for returned in ctx.resolver.returned(func):
            if binding.index is not None:
                if type(returned) is not cst.Tuple or binding.index >= len(returned.elements):
                    continue
                element = returned.elements[binding.index]
                if type(element) is cst.StarredElement:
                    continue
                returned = element.value
            found.append((func, returned))
    return found


def _mirrored(ctx: FileContext, binding: Binding, name: str) -> bool:
    """`hyperparams = run.config` where `run = wandb.init(..., config=hyperparams)`: the
    logger's copy of the same settings (a sweep could change it, which needs a sweep
    the code does not start), so the rank rebinding it changes nothing."""
    value = binding.value
    if not (type(value) is cst.Attribute and value.attr.value == "config"):
        return False
    if type(value.value) is not cst.Name:
        return False
    runs = ctx.resolver.reaching(value.value.value, binding.statement)
    if not runs:
        return False
    for run in runs:
        made = run.value
        if not (type(made) is cst.Call and ctx.call_name(made) == "wandb.init"):
            return False
        given = argument(made, None, "config")
        if not (type(given) is cst.Name and given.value == name):
            return False
    return True


def _in_distributed_runs(ctx: FileContext, reaching: list[Binding]) -> list[Binding]:
    """The bindings of `reaching` that reach on a distributed run: one that a later
    binding of the list replaces on every such run (`start_epoch = t.item()` under `if
    use_ddp:`, after `t` was broadcast from rank 0) reaches only where the job is one
    process, where no rank waits for another."""
    ranks = domain_of(ctx).ranks

    def replaces(later: Binding, earlier: Binding) -> bool:
        """`later` comes after `earlier`, runs whenever `earlier` did and the job is
        distributed (its own tests beyond `earlier`'s all say the job is distributed), and
        assigns what a collective made the same on every rank (it reads a name handed to
        one after `earlier`: `dist.broadcast(t, src=0)`, then `t.item()`)."""
        if later is earlier or not ctx.before(earlier.statement, later.statement):
            return False
        value = later.value
        if not isinstance(value, cst.BaseExpression) or not any(
            _collected(ctx, name, earlier.statement) for name in ctx.names_in(value)
        ):
            return False
        shared = {id(c.gate) for c in ctx.flow.conditions(earlier.statement)}
        return all(
            ranks.single_process_when(c.test) is (not c.holds)
            for c in ctx.flow.conditions(later.statement)
            if id(c.gate) not in shared
        )

    return [b for b in reaching if not any(replaces(r, b) for r in reaching)]


def _received_from_other_side(ctx: FileContext, binding: Binding, gate: Gate) -> bool:
    """`binding` (`prompt = objects[0]`) reads what a collective of its branch of a rank
    test received (`dist.broadcast_object_list(objects, 0)` before it), and the other
    branch hands a collective the value it gives the same name (`prompt = input()`,
    `objects = [prompt]`, then the same broadcast): every rank ends with the sender's."""
    node = gate.node
    if type(node) is not cst.If or node.orelse is None:
        return False
    here, there = (
        (node.body, node.orelse)
        if ctx.is_inside(binding.statement, node.body)
        else (node.orelse, node.body)
    )
    collectives = domain_of(ctx).collectives
    received = any(
        collectives.is_collective(call)
        and ctx.before(call, binding.statement)
        and set(ctx.names_in(binding.value)) & _handed_names(ctx, call)
        for call in ctx.calls_within(here)
    )
    if not received:
        return False
    assigned = [
        bound
        for bounds in ctx.model.bindings_in(binding.scope).values()
        for bound in bounds
        if bound.kind == "assign" and ctx.is_inside(bound.statement, there)
    ]
    sent = _built_from(ctx, binding.target, assigned)  # `objects = [prompt]` over there
    return any(
        collectives.is_collective(call) and bool(sent & _handed_names(ctx, call))
        for call in ctx.calls_within(there)
    )


def _relayed(ctx: FileContext, binding: Binding) -> bool:
    """The value `binding` gives its name on some ranks is sent to every rank: handed,
    directly or through names built from it after it (`signal = torch.tensor(1.0 if stop
    else 0.0)`), to a collective, after which the name is bound again from what that
    collective received (`stop = bool(signal.item())`, or under `if signal.item() ==
    1.0:`)."""
    name, frame = binding.target, binding.scope
    later = [
        b
        for bounds in ctx.model.bindings_in(frame).values()
        for b in bounds
        if b.kind == "assign" and ctx.before(binding.statement, b.statement)
    ]
    sent = _built_from(ctx, name, later)
    collectives = domain_of(ctx).collectives
    for call in ctx.calls_within(frame):
        if not (ctx.before(binding.statement, call) and collectives.is_collective(call)):
            continue
        received = sent & _handed_names(ctx, call)
        if received and any(
            b.target == name
            and ctx.before(call, b.statement)
            and (
                received & set(ctx.names_in(b.value))
                or any(
                    received & set(ctx.names_in(c.test)) for c in ctx.flow.conditions(b.statement)
                )
            )
            for b in later
        ):
            return True
    return False


def _built_from(ctx: FileContext, name: str, assigned: list[Binding]) -> set[str]:
    """`name` and the names of `assigned` whose values read it, directly or through
    others of them (`objects = [prompt]`, `signal = torch.tensor(1.0 if stop else 0.0)`)."""
    found = {name}
    grown = True
    while grown:
        before = len(found)
        found.update(b.target for b in assigned if found & set(ctx.names_in(b.value)))
        grown = len(found) > before
    return found


def _reads_received(ctx: FileContext, binding: Binding) -> bool:
    """`binding` (`stop = broadcast_list[0]` under `if RANK != 0:`) reads what a collective
    before it in its frame was handed (`dist.broadcast_object_list(broadcast_list, 0)`):
    the value every rank received alike."""
    value = binding.value
    if not isinstance(value, cst.BaseExpression):
        return False
    read = set(ctx.names_in(value))
    collectives = domain_of(ctx).collectives
    return any(
        ctx.before(call, binding.statement)
        and collectives.is_collective(call)
        and bool(read & _handed_names(ctx, call))
        for call in ctx.calls_within(binding.scope)
    )


def _collected(ctx: FileContext, name: str, after: cst.CSTNode) -> bool:
    """A collective after `after` in its frame is handed `name` (`dist.broadcast(
    next_token, src=0)` after `if rank == 0: next_token = ...` / `else: next_token =
    torch.zeros(...)`): it overwrites the value in place, the same on every rank. So may a
    helper that issues one (`extra_steps = synchronize_value(extra_steps, device)`)."""
    collectives = domain_of(ctx).collectives
    return any(
        ctx.before(after, call)
        and name in _handed_names(ctx, call)
        and (collectives.issues(call) or collectives.may_issue_out_of_sight(call))
        for call in ctx.calls_within(ctx.model.frame(after))
    )


# Collectives that return the value every rank agrees on (mpi4py's lower-case ones, and
# torch's functional ones): `comm.bcast(x)` gives the root's `x` on every rank.
_RETURNING_COLLECTIVES = frozenset({"bcast", "allreduce", "allgather", "all_reduce_tensor"})


def _agreed(binding: Binding) -> bool:
    """`binding` assigns what a collective returns to every rank (`comm.bcast(fid)`)."""
    value = binding.value
    if type(value) is not cst.Call:
        return False
    func = value.func
    name = func.attr.value if type(func) is cst.Attribute else None
    return name in _RETURNING_COLLECTIVES


def _all_agreed(ctx: FileContext, reaching: list[Binding]) -> bool:
    """Each binding is what a collective returns to every rank, or is followed in its
    block by one that is (`fid = score(...)` then `fid = comm.bcast(fid)`)."""
    agreed = [b for b in reaching if _agreed(b)]
    return bool(agreed) and all(
        _agreed(b)
        or any(a.branch is b.branch and ctx.before(b.statement, a.statement) for a in agreed)
        for b in reaching
    )


def _handed_names(ctx: FileContext, call: cst.Call) -> set[str]:
    """The names read in the arguments of `call`, but those of an in-place collective's
    destination that is a fresh copy (`dist.broadcast(torch.tensor(stop).cuda(), 0)`,
    `flag.cuda()` of a host tensor): the result lands in the copy, not in them."""
    found: set[str] = set()
    written = destination(ctx, call)
    for arg in call.args:
        copy = written is not None and arg.value is written[1]
        if copy and copied_from(ctx, arg.value) is not None:
            continue
        found.update(ctx.names_in(arg.value))
    return found


def _passed_overrides(ctx: FileContext, name: str, at: cst.CSTNode) -> list[Override]:
    """What the calls of this file resolved to the function around `at` pass for its
    parameter `name`, read as `overridden_names` at each call (`train(start_epoch, ...)`
    after `start_epoch` was set on rank 0 only)."""
    func = ctx.enclosing_function(at)
    if func is None:
        return []
    found: list[Override] = []
    for site in ctx.model.calls_by_name.get(func.name.value, []):
        if func not in ctx.resolver.callees(site):
            continue
        passed = ctx.resolver.passed(site, func, name)
        if passed is not None:
            found.extend(
                replace(o, parameter=name)
                for o in overridden_names(ctx, passed, site, callers=False)
            )
    return found[:1]


def _split_by_test(
    ctx: FileContext, reaching: list[Binding], binding_gates: list[Gate | None]
) -> Gate | None:
    """Both branches of one rank test assign the name, each its own expression (`if resume
    and rank == 0: start_epoch = load(...)` / `else: start_epoch = 0`): the ranks on either
    side read different values. The gate of the branch that holds the test, else None."""
    for binding, gate in zip(reaching, binding_gates, strict=True):
        node = gate.node if gate is not None else None
        if gate is None or type(node) is not cst.If or node.orelse is None:
            continue
        if gate.condition is None or not gate.condition.holds:
            continue
        if not ctx.is_inside(binding.statement, node.body):
            continue
        for other in reaching:
            if (
                ctx.is_inside(other.statement, node.orelse)
                and ctx.code(other.value).strip() != ctx.code(binding.value).strip()
            ):
                return gate
    return None


def _attribute_override(
    ctx: FileContext, node: cst.Attribute, at: cst.CSTNode, carried: cst.CSTNode | None
) -> Override | None:
    """`self.<attr>` read at `at` in a method, whose class assigns it on every rank only to
    constants or loaded state (`__init__` may assign anything) and, under a rank test or in
    a rank-only method (`rank_only_method_call`), to another value, at a place the loop
    around `at` reaches (`_reached_from`). Assigned from outside the class: unknown."""
    key = storage_key(node)
    frame = ctx.model.frame(at)
    if key is None or not key.startswith("self.") or key.count(".") != 1:
        return None
    owner = ctx.model.enclosing_class(frame) if type(frame) is cst.FunctionDef else None
    if owner is None:
        return None
    attribute = key.partition(".")[2]
    if any(
        other.endswith(f".{attribute}") and other != key and ctx.model.bindings[other]
        for other in ctx.model.bindings
    ):
        return None  # `trainer.stop = ...` elsewhere in the file
    gates = domain_of(ctx).gates
    every_rank: set[str] = set()
    changed: list[tuple[Binding, Gate, cst.CSTNode, str | None]] = []
    for binding in ctx.model.bindings.get(key, ()):
        method = binding.scope
        if type(method) is not cst.FunctionDef or ctx.model.enclosing_class(method) is not owner:
            continue
        gate = gates.gate(binding.statement)
        if gate is not None and not gates.opens_to_every_rank(gate):
            changed.append((binding, gate, binding.statement, None))
            continue
        call = rank_only_method_call(ctx, method) if gate is None else None
        call_gate = gates.gate(call) if call is not None else None
        if call is not None and call_gate is not None:
            changed.append((binding, call_gate, call, method.name.value))
            continue
        if call is not None or gate is not None:
            return None  # gated a few calls up, or a gate every rank passes: unknown
        if method.name.value != "__init__" and not _settled(_assigned(binding)):
            return None  # may be the agreed value (`self.stop = bool(flag.item())`)
        every_rank.add(ctx.code(_assigned(binding)).strip())
    if not every_rank:
        return None
    loop = carried or ctx.enclosing_loop(at)
    for binding, gate, site, method_name in changed:
        value = ctx.code(_assigned(binding)).strip()
        if binding.kind != "augassign" and value in every_rank:
            continue
        if _reached_from(ctx, site, at, loop, owner):
            return Override(key, gate, method_name)
    return None


def _assigned(binding: Binding) -> cst.BaseExpression:
    """The value a binding gives its target: its element of an unpacked tuple."""
    value = binding.value
    if binding.index is not None and isinstance(value, (cst.Tuple, cst.List)):
        elements = value.elements
        if binding.index < len(elements):
            return elements[binding.index].value
    return value


def _settled(value: cst.BaseExpression) -> bool:
    """A value every rank computes alike without agreeing first: a constant, or an entry
    of loaded state (`state["early_stop"]`)."""
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if type(value) is cst.Name:
        return value.value in ("True", "False", "None")
    if type(value) is cst.UnaryOperation:
        return _settled(value.expression)
    if type(value) is cst.Subscript and len(value.slice) == 1:
        element = value.slice[0].slice
        return type(element) is cst.Index and type(element.value) is cst.SimpleString
    return False


def _reached_from(
    ctx: FileContext,
    site: cst.CSTNode,
    at: cst.CSTNode,
    loop: cst.CSTNode | None,
    owner: cst.ClassDef,
) -> bool:
    """The change at `site` can happen before a read at `at`: inside the loop around `at`
    (or before `at` where no loop is), directly or in a method of the class that the loop
    calls (`with self._epoch_context():`)."""
    frame = ctx.model.frame(at)
    if ctx.model.frame(site) is frame:
        return ctx.is_inside(site, loop) if loop is not None else ctx.before(site, at)
    if loop is None:
        return False
    method = ctx.model.frame(site)
    if type(method) is not cst.FunctionDef or ctx.model.enclosing_class(method) is not owner:
        return False
    return any(
        type(call.func) is cst.Attribute
        and type(call.func.value) is cst.Name
        and call.func.value.value == "self"
        and ctx.is_inside(call, loop)
        for call in ctx.model.calls_by_name.get(method.name.value, ())
    )
