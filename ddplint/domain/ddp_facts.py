"""DDP knowledge about one file: wrapped models, rank conditions, world size, collectives.

Every question takes the node it is asked at, so that `model = DDP(model)` makes `model`
a DDP model only from that statement on, and a parameter of a helper inherits what its
callers in the same file pass to it.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from functools import cached_property
from typing import TYPE_CHECKING, cast

import libcst as cst

from ddplint.domain import domain_of
from ddplint.domain.apis import COLLECTIVES, DDP_CLASSES, LOADER_CLASSES, SAMPLER_CLASSES
from ddplint.domain.apis import UNWRAP_FUNCTION as _UNWRAP_FUNCTION
from ddplint.domain.process_group import may_use_process_group, uses_process_group
from ddplint.domain.project_view import project_of
from ddplint.domain.ranks import last_name, strip_conversion
from ddplint.engine import Value
from ddplint.engine.resolve import string_key
from ddplint.engine.resolve import string_literal as string_value
from ddplint.names import dotted

if TYPE_CHECKING:
    from ddplint.context import Binding, FileContext

# The one table of APIs lives in `ddplint.domain.apis`; these names stay for callers.
__all__ = [
    "COLLECTIVES",
    "DDP_CLASSES",
    "LOADER_CLASSES",
    "SAMPLER_CLASSES",
    "DDPFacts",
    "argument",
    "environ_key",
    "facts_of",
    "given_argument",
    "is_false",
    "is_true",
    "keyword",
    "last_name",
    "passed_argument",
    "string_key",
    "string_value",
    "strip_conversion",
]


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    """The `name=` argument of a call, if given."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def passed_argument(call: cst.Call, position: int, name: str) -> cst.Arg | None:
    """The argument given at `position` or as `name=`."""
    kw = keyword(call, name)
    if kw is not None:
        return kw
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position] if position < len(positional) else None


def given_argument(call: cst.Call, position: int, name: str) -> cst.Arg | None:
    """`passed_argument`, unless the value passed is `None`."""
    arg = passed_argument(call, position, name)
    if arg is None or (type(arg.value) is cst.Name and arg.value.value == "None"):
        return None
    return arg


def argument(call: cst.Call, position: int, name: str) -> cst.BaseExpression | None:
    """The value given at `position` or as `name=`."""
    arg = passed_argument(call, position, name)
    return None if arg is None else arg.value


def is_true(expr: cst.BaseExpression | None) -> bool:
    return type(expr) is cst.Name and expr.value == "True"


def is_false(expr: cst.BaseExpression | None) -> bool:
    return type(expr) is cst.Name and expr.value == "False"


def dropped_as_made(ctx: FileContext, node: cst.CSTNode | None) -> bool:
    """`DistributedDataParallel(model, ...).module`: the wrapper is dropped in the very
    expression that makes it."""
    return (
        type(node) is cst.Attribute
        and node.attr.value == "module"
        and type(node.value) is cst.Call
        and ctx.call_name(node.value) in DDP_CLASSES
    )


def environ_key(ctx: FileContext, expr: cst.BaseExpression) -> str | None:
    """`"RANK"` for `os.environ["RANK"]`, `os.environ.get("RANK")`, `os.getenv("RANK")`
    (or a copy of the environment), read right there; `Resolver.environ_key` also
    follows names."""
    return ctx.resolver.direct_environ_key(expr, expr)


def facts_of(ctx: FileContext) -> DDPFacts:
    """The DDP facts of `ctx`'s file, built once per file."""
    return ctx.memo(DDPFacts)


# nn.Module methods that return the module itself: `DDP(net).to(device)` is the wrapper.
_RETURNS_SELF = frozenset({"to", "cuda", "cpu", "float", "half", "bfloat16", "train", "eval"})
# Targets a value is unpacked into by position (`Model.bind`).
_UNPACKED = (cst.Tuple, cst.List)


def ddp_subclasses(ctx: FileContext) -> list[str]:
    """The classes of the module that subclass a DDP class, directly or through another
    such class of the module, sorted."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, classes in ctx.model.classes.items():
            if name in found:
                continue
            bases = [b.value for c in classes for b in c.bases]
            if any(
                ctx.qualname(b) in DDP_CLASSES or (type(b) is cst.Name and b.value in found)
                for b in bases
            ):
                found.add(name)
                changed = True
    return sorted(found)


def _unwrap_idiom(expr: cst.BaseExpression) -> bool:
    """`x.module if <test> else x`, or `x if <test> else x.module`."""
    if type(expr) is not cst.IfExp:
        return False
    for inner, other in ((expr.body, expr.orelse), (expr.orelse, expr.body)):
        if type(inner) is cst.Attribute and inner.attr.value == "module":
            receiver = dotted(inner.value)
            if receiver is not None and receiver == dotted(other):
                return True
    return False


def _read_before(ctx: FileContext, read: cst.CSTNode, bound: cst.CSTNode) -> bool:
    """`read` runs before the binding `bound` can reach it: earlier in the same function
    and in no loop around both, or in a method that is only called, in this file, from
    `bound`'s function before `bound` (`self._load_checkpoint()` in `__init__` before
    `self.model = DDP(self.model)`)."""
    frame = ctx.scope(bound)
    if ctx.enclosing_function(read) is ctx.enclosing_function(bound):
        loop = ctx.enclosing_loop(read)
        while loop is not None:
            if ctx.is_inside(bound, loop):
                return False
            loop = ctx.enclosing_loop(loop)
        return ctx.before(read, bound)
    func = ctx.enclosing_function(read)
    calls = ctx.resolver.calls_of(func) if func is not None else []
    return bool(calls) and all(
        ctx.scope(call) is frame and ctx.before(call, bound) and ctx.enclosing_loop(call) is None
        for call in calls
    )


def _ddp_model_there(ctx: FileContext, value: cst.BaseExpression, at: cst.Call) -> bool:
    """`value`, passed by `at` in the module of `ctx`, may hold a DDP model there."""
    return facts_of(ctx).is_ddp_model(value, at)


class DDPFacts:
    """Answers to the DDP questions rules ask, computed lazily and cached per file."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._handed_ddp: dict[tuple[int, str], bool] = {}

    # -- is this a distributed file at all -------------------------------------------

    @cached_property
    def is_distributed(self) -> bool:
        """The file uses the process group itself (`uses_process_group`), runs on every
        rank through the project (`Project.runs_distributed`), or may
        (`distribution_unproven`)."""
        return self._proven_distributed or self._may_be_distributed is not None

    @cached_property
    def distribution_unproven(self) -> str | None:
        """Why the file may be distributed when only `may_use_process_group` says so (a
        single-GPU baseline left with a template's `import torch.distributed as dist`, a
        layer that asks the rank of a group only a caller may pass) and the project is in
        sight: none of its distributed code runs the file. None when proven, or when the
        file is checked alone (a snippet): what runs it is out of sight, and the import
        states the intent."""
        if self._proven_distributed or project_of(self.ctx) is None:
            return None
        return self._may_be_distributed

    @cached_property
    def _proven_distributed(self) -> bool:
        ctx = self.ctx
        if uses_process_group(ctx):
            return True
        project = project_of(ctx)
        return project is not None and project.runs_distributed(ctx)

    @cached_property
    def _may_be_distributed(self) -> str | None:
        return may_use_process_group(self.ctx)

    # -- DDP-wrapped models ------------------------------------------------------------

    @cached_property
    def ddp_wraps(self) -> list[cst.Call]:
        return list(self.ctx.calls_to(*DDP_CLASSES))

    @cached_property
    def helper_wraps(self) -> list[cst.Call]:
        """Calls of helpers (of this file or the project) that return a model they wrapped
        in DDP (`model = smart_DDP(model)`), whole or as an element of a tuple this file
        unpacks (`model, optimizer = setup_model(cfg)`)."""
        return [
            c
            for c in self.ctx.calls
            if (self._is_ddp_call(c) and not self._is_direct_ddp_call(c)) or self._unpacks_ddp(c)
        ]

    def _unpacks_ddp(self, call: cst.Call) -> bool:
        """`model, optimizer = setup_model(cfg)`, where the function of another project
        module returns a DDP model at a position the assignment binds by position: the
        positions `Binding.index` gives (`_unpacked_ddp_elsewhere`), so none where a target
        is starred and none for a nested target."""
        parent = self.ctx.parent(call)
        if type(parent) is not cst.Assign or len(parent.targets) != 1:
            return False
        target = parent.targets[0].target
        project = project_of(self.ctx)
        if type(target) not in _UNPACKED or project is None:
            return False
        elements = cast("cst.Tuple", target).elements
        if any(type(e) is cst.StarredElement for e in elements):
            return False
        return any(
            type(element.value) not in _UNPACKED
            and project.helper_returns_ddp(self.ctx, call, position)
            for position, element in enumerate(elements)
        )

    @cached_property
    def torch_wrapper_names(self) -> frozenset[str]:
        """The names and attributes the file binds to torch's own DDP wrapper, built here
        (`model = DDP(net, ...)`, `self.model = DDP(net).to(device)`)."""
        found = set()
        for key, bindings in self.ctx.model.bindings.items():
            if any(
                b.kind == "assign" and b.index is None and self._builds_torch_wrapper(b.value)
                for b in bindings
            ):
                found.add(key)
        return frozenset(found)

    def torch_wrappers(
        self, expr: cst.BaseExpression, at: cst.CSTNode
    ) -> tuple[list[cst.BaseExpression], bool] | None:
        """The values of `expr` at `at` that build torch's own DDP wrapper in this file,
        with whether every value it may hold there is one (False where the others are
        models that are not wrapped: `if args.distributed: model = DDP(model)`); None
        where none is, or where one may be another wrapper (a DDP subclass, a helper's
        wrapper, which may forward attributes) or is out of sight."""
        ctx = self.ctx
        values = [v for v in ctx.resolver.values(expr, at) if v.leaf]
        reached = [v for v in values if not self._opposite_branches(v.at, at)]
        wrapped = [
            v
            for v in reached
            if self._builds_torch_wrapper(v.expr) and not _read_before(ctx, at, v.at)
        ]
        if not wrapped or any(self._is_ddp_call(v.expr) for v in reached if v not in wrapped):
            return None
        others = [v for v in reached if v not in wrapped]
        if any(not self._built_model(v.expr) for v in others):
            return None
        return [v.expr for v in wrapped], not others

    def _builds_torch_wrapper(self, expr: cst.BaseExpression) -> bool:
        """`DistributedDataParallel(...)`, also with `.to(device)` and the like after it."""
        while (
            type(expr) is cst.Call
            and type(expr.func) is cst.Attribute
            and expr.func.attr.value in _RETURNS_SELF
        ):
            expr = expr.func.value
        return self._is_direct_ddp_call(expr)

    def _built_model(self, expr: cst.BaseExpression) -> bool:
        """`expr` is a model built or taken in sight, not wrapped: a call (`Net()`,
        `net.cuda()`, `build_model(cfg)`), or a parameter of the function."""
        if type(expr) is cst.Call:
            return True
        return type(expr) is cst.Name and any(
            b.kind == "param" for b in self.ctx.resolver.reaching(expr.value, expr)
        )

    @cached_property
    def wrapping_functions(self) -> frozenset[str]:
        """Functions of this file that return a model they wrapped in DDP."""
        ctx = self.ctx
        found = set()
        for node in ctx.nodes_of(cst.Return):
            func = ctx.enclosing_function(node)
            value = node.value  # type: ignore[attr-defined]
            if func is None or value is None:
                continue
            if self._holds(value, node, self._is_direct_ddp_call):
                found.add(func.name.value)
        return frozenset(found)

    def is_ddp_model(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        """True if `expr` may hold a DDP-wrapped model at `at` (`model = DDP(net) if
        distributed else net` may); never the instance itself (`self`, `cls`)."""
        if type(expr) is cst.Name and expr.value in ("self", "cls"):
            return False
        if self._unwrapped_by_idiom(expr, expr if at is None else at):
            return False
        if self._holds(expr, at, self._is_ddp_call):
            return True
        values = self.ctx.resolver.values(expr, expr if at is None else at)
        return any(
            v.leaf and (self._handed_ddp_elsewhere(v) or self._unpacked_ddp_elsewhere(v))
            for v in values
        )

    def _unpacked_ddp_elsewhere(self, value: Value) -> bool:
        """`value` is a name unpacked from a call of a function of another project module
        (`model, optimizer, scheduler = setup_model(cfg)`) whose returned tuple gives a DDP
        model at that position."""
        expr = value.expr
        project = project_of(self.ctx)
        if type(expr) is not cst.Name or project is None:
            return False
        return any(
            b.kind == "assign"
            and b.index is not None
            and type(b.value) is cst.Call
            and project.helper_returns_ddp(self.ctx, b.value, b.index)
            for b in self.ctx.resolver.reaching(expr.value, value.at)
        )

    def _handed_ddp_elsewhere(self, value: Value) -> bool:
        """`value` is a parameter of a function that no call of this file passes anything
        (`def __init__(self, model): self.model = model`), and a call of it in another
        project module hands it a DDP model (`Trainer(DDP(net, ...))` in `train.py`)."""
        expr = value.expr
        project = project_of(self.ctx)
        if type(expr) is not cst.Name or project is None:
            return False
        binding = self.reaching_binding(expr.value, value.at)
        if binding is None or binding.kind != "param" or self.arguments_for(binding):
            return False
        owner = binding.owner
        if type(owner) is not cst.FunctionDef:
            return False
        key = (id(owner), expr.value)
        if key not in self._handed_ddp:
            self._handed_ddp[key] = False  # a cycle of calls decides nothing
            self._handed_ddp[key] = project.passes_elsewhere(
                self.ctx, owner, expr.value, _ddp_model_there
            )
        return self._handed_ddp[key]

    def is_plain_model(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """`expr` holds at `at` only modules built in this file by a call that wraps nothing
        in DDP (`ref = Net()`, not `torch.compile(ddp_model)`), and no DDP wrap of the file
        takes them: DDP does not average their gradients."""
        built = [v.expr for v in self.ctx.resolver.values(expr, at) if v.leaf]
        if not built or not all(self._builds_plain(b, at) for b in built):
            return False
        wrapped = {
            id(v.expr)
            for w in (*self.ddp_wraps, *self.helper_wraps)
            if w.args
            for v in self.ctx.resolver.values(w.args[0].value, w)
        }
        return not any(id(b) in wrapped for b in built)

    def _builds_plain(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        ctx = self.ctx
        if type(expr) is not cst.Call or self._is_ddp_call(expr):
            return False
        func = expr.func
        known = ctx.call_name(expr) is not None or (
            type(func) is cst.Name and func.value in ctx.model.classes
        )
        return known and not any(self.is_ddp_model(a.value, at) for a in expr.args)

    def is_unwrapped_ddp(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        """True for `ddp.module`, `getattr(ddp, "module", ddp)`, `unwrap_model(ddp)` and
        names bound to them."""
        return self._holds(expr, at, self._is_unwrap_expr)

    def _is_direct_ddp_call(self, expr: cst.BaseExpression) -> bool:
        return type(expr) is cst.Call and self.ctx.call_name(expr) in DDP_CLASSES

    def _is_ddp_call(self, expr: cst.BaseExpression) -> bool:
        if type(expr) is not cst.Call:
            return False
        if self._is_direct_ddp_call(expr):
            return True
        func = expr.func
        if type(func) is cst.Name and (
            func.value in self.wrapping_functions or func.value in self.ddp_subclasses
        ):
            return True
        if type(func) is cst.Attribute and func.attr.value in _RETURNS_SELF:
            return self._is_ddp_call(func.value)  # `DDP(net, ...).to(device)`: the wrapper
        project = project_of(self.ctx)
        return project is not None and project.helper_returns_ddp(self.ctx, expr)

    @cached_property
    def ddp_subclasses(self) -> frozenset[str]:
        """Classes of this file that subclass DDP (`class DDPWrapper(DistributedDataParallel)`,
        directly or through another such class of the file): constructing one wraps."""
        return frozenset(ddp_subclasses(self.ctx))

    def _unwrapped_by_idiom(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """Every binding of the name `expr` that reaches `at` is `x.module if <test> else
        x` (or the reverse): the bare module where `x` is wrapped, `x` where it is not."""
        if type(expr) is not cst.Name:
            return False
        bindings = self.ctx.resolver.reaching(expr.value, at)
        return bool(bindings) and all(
            b.kind == "assign" and b.index is None and _unwrap_idiom(b.value) for b in bindings
        )

    def _is_unwrap_expr(self, expr: cst.BaseExpression) -> bool:
        if type(expr) is cst.Attribute and expr.attr.value == "module":
            return True
        if type(expr) is cst.Subscript and type(expr.value) is cst.Attribute:
            return expr.value.attr.value == "module"  # `ddp.module[0]`: a piece of it
        if type(expr) is cst.IfExp:
            return self._is_unwrap_expr(expr.body) or self._is_unwrap_expr(expr.orelse)
        if type(expr) is cst.Call:
            func = last_name(expr.func)
            if func == "getattr" and len(expr.args) >= 2:
                return string_value(expr.args[1].value) == "module"
            return func is not None and bool(_UNWRAP_FUNCTION.search(func))
        return False

    def _holds(
        self,
        expr: cst.BaseExpression,
        at: cst.CSTNode | None,
        predicate: Callable[[cst.BaseExpression], bool],
    ) -> bool:
        """Whether some value `expr` may hold at `at` satisfies `predicate`: one bound
        where a test holds does not reach a use where the same test fails (`if
        args.distributed: model = DDP(model)`, then `else: torch.save(model...)` under a
        later `if args.distributed:`)."""
        where = expr if at is None else at
        values = self.ctx.resolver.values(expr, where)
        return any(
            predicate(v.expr)
            and not self._opposite_branches(v.at, where)
            and not self._ruled_out_by_arguments(v, values)
            for v in values
        )

    def _ruled_out_by_arguments(self, value: Value, values: list[Value]) -> bool:
        """`value` is bound in a function under a test on one of its flags (`if ddp: model
        = DDP(model)`), and every call of that function this value was reached through
        passes the flag the other way (`self._build_model(ddp=False)`), by argument or
        by the parameter's default."""
        ctx = self.ctx
        func = ctx.enclosing_function(value.at)
        if func is None:
            return False
        parameters = [p.name.value for p in (*func.params.params, *func.params.kwonly_params)]
        flags = [(name, holds) for name, holds in self._flags(value.at) if name in parameters]
        calls = [
            v.expr
            for v in values
            if type(v.expr) is cst.Call and func in ctx.resolver.callees(v.expr)
        ]
        if not flags or not calls:
            return False
        return all(
            any(self._passed_flag(func, call, name) is (not holds) for name, holds in flags)
            for call in calls
        )

    def _passed_flag(self, func: cst.FunctionDef, call: cst.Call, name: str) -> bool | None:
        """The truth of what `call` passes to `func`'s parameter `name` (its default when
        the call passes nothing), when that is a literal True/False/None or number; else
        None (also for a call with `*args` or `**kwargs`, which may pass it)."""
        if any(arg.star for arg in call.args):
            return None
        passed = self.ctx.resolver.passed(call, func, name)
        if passed is None:
            params = func.params
            every = (*params.posonly_params, *params.params, *params.kwonly_params)
            passed = next(p.default for p in every if p.name.value == name)
        if type(passed) is cst.Name and passed.value in ("True", "False", "None"):
            return passed.value == "True"
        if type(passed) is cst.Integer:
            return int(passed.value, 0) != 0
        return None

    def _opposite_branches(self, bound: cst.CSTNode, used: cst.CSTNode) -> bool:
        """`bound` runs only where a flag (a name or attribute, which no call can change
        between) holds one way, and `used` only where it holds the other."""
        if self.ctx.scope(bound) is not self.ctx.scope(used):
            return False
        fixed = self._flags(bound)
        return any((flag, not holds) in fixed for flag, holds in self._flags(used))

    def _flags(self, node: cst.CSTNode) -> set[tuple[str, bool]]:
        """The flags (names and attributes, by their code) that the enclosing branches of
        `node` fix, each with the value it holds there; early exits left out."""
        return {
            (self.ctx.code(term).strip(), holds)
            for condition in self.ctx.flow.conditions(node)
            if not condition.early_exit
            for term, holds in condition.terms()
            if isinstance(term, (cst.Name, cst.Attribute))
        }

    def reaching_binding(self, name: str, at: cst.CSTNode) -> Binding | None:
        """The last binding of `name` that may reach `at` (see `Resolver.reaching`)."""
        found = self.ctx.resolver.reaching(name, at)
        return found[-1] if found else None

    def binding_before(self, name: str, at: cst.CSTNode) -> Binding | None:
        """Like `reaching_binding`, but asked at the statement holding `at`, so that no
        binding made by that statement counts (`with open(p) as f, wrap(f)`, `(x := f(x))`)."""
        return self.reaching_binding(name, self.ctx.statement(at))

    def arguments_for(self, param: Binding) -> list[cst.BaseExpression]:
        """Expressions callers in this file pass for the parameter `param`."""
        return self.ctx.resolver.arguments_for(param)

    # -- ranks (`ddplint.domain.ranks`, `ddplint.domain.gates`) ---------------------------

    def is_rank_value(self, expr: cst.BaseExpression, depth: int = 3) -> bool:
        """An expression holding this process's rank (global or local)."""
        return domain_of(self.ctx).ranks.is_rank_value(expr)

    def is_rank_test(self, expr: cst.BaseExpression, depth: int = 3) -> bool:
        """A condition whose truth differs between ranks: `rank == 0`,
        `is_main_process()`, `args.local_rank in (-1, 0)`, `not self.is_master`, ..."""
        return domain_of(self.ctx).ranks.is_rank_test(expr)

    # -- world size -----------------------------------------------------------------------

    def is_world_size(self, expr: cst.BaseExpression, depth: int = 3) -> bool:
        """An expression holding the number of processes (`depth=0`: spelled as one,
        without following names)."""
        ranks = domain_of(self.ctx).ranks
        if depth == 0:
            return ranks.spells_world_size(expr)
        return ranks.is_world_size(expr)

    # -- collectives (`ddplint.domain.collectives`) -----------------------------------------

    def is_collective_call(self, call: cst.Call) -> bool:
        """A direct call of a torch.distributed collective or barrier."""
        return domain_of(self.ctx).collectives.is_collective(call)

    def functions_reaching(
        self, reaches: Callable[[cst.Call, Container[str]], bool]
    ) -> dict[str, cst.Call]:
        """Functions of this file (by name) holding a call for which `reaches(call, found)`
        holds, `found` being the functions found so far (so a call of one of them can count);
        value: the first such call."""
        ctx = self.ctx
        found: dict[str, cst.Call] = {}
        changed = True
        while changed:
            changed = False
            for name, defs in ctx.functions.items():
                if name in found:
                    continue
                for func in defs:
                    call = next((c for c in ctx.calls_within(func) if reaches(c, found)), None)
                    if call is not None:
                        found[name] = call
                        changed = True
                        break
        return found
