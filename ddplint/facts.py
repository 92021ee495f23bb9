"""DDP knowledge about one file: wrapped models, rank conditions, world size, collectives.

Every question takes the node it is asked at, so that `model = DDP(model)` makes `model`
a DDP model only from that statement on, and a parameter of a helper inherits what its
callers in the same file pass to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from ddplint.names import dotted

if TYPE_CHECKING:
    from ddplint.context import Binding, FileContext

DDP_CLASSES = frozenset({"torch.nn.parallel.DistributedDataParallel"})
SAMPLER_CLASSES = frozenset({"torch.utils.data.DistributedSampler"})
LOADER_CLASSES = frozenset({"torch.utils.data.DataLoader"})

COLLECTIVES = frozenset(
    f"torch.distributed.{name}"
    for name in (
        "all_reduce",
        "all_reduce_coalesced",
        "all_gather",
        "all_gather_into_tensor",
        "all_gather_object",
        "all_gather_coalesced",
        "all_to_all",
        "all_to_all_single",
        "barrier",
        "monitored_barrier",
        "broadcast",
        "broadcast_object_list",
        "gather",
        "gather_object",
        "reduce",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "scatter",
        "scatter_object_list",
        "_all_gather_base",
        "_reduce_scatter_base",
        "new_group",
        "destroy_process_group",
    )
)

_DISTRIBUTED_PREFIXES = (
    "torch.distributed",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.utils.data.DistributedSampler",
)

_RANK_NAME = re.compile(r"^(local_|global_|node_|ddp_|ddp_local_|process_|world_)?rank(_id)?$")
_MAIN_PROCESS_NAME = re.compile(
    r"^(is_)?(main|master|primary|chief)(_process|_proc|_rank|_worker)?$|^is_rank_?(zero|0)$"
    r"|^is_global_zero$|^is_local_(main|master)(_process)?$|^rank_?(zero|0)(_only)?$"
)


@dataclass(frozen=True)
class _ProcessValue:
    """How code spells one per-process value: the functions that return it (called with
    no arguments when `bare_call`), the variable names that hold it, the environment
    variables that carry it, and whether `value % n` still identifies it."""

    functions: re.Pattern[str]
    names: re.Pattern[str]
    environ: frozenset[str]
    bare_call: bool
    modulo: bool


_RANK = _ProcessValue(
    functions=re.compile(r"^(get_)?(local_|global_|node_)?rank$"),
    names=_RANK_NAME,
    environ=frozenset({"RANK", "LOCAL_RANK", "GROUP_RANK", "NODE_RANK", "SLURM_PROCID"}),
    bare_call=True,
    modulo=True,
)
_WORLD_SIZE = _ProcessValue(
    functions=re.compile(r"^(get_)?world_size$"),
    names=re.compile(r"(^|_)world_size$|^num_(replicas|processes|gpus_total)$"),
    environ=frozenset({"WORLD_SIZE", "SLURM_NTASKS"}),
    bare_call=False,
    modulo=False,
)
_UNWRAP_FUNCTION = re.compile(r"unwrap|de_?parallel|without_ddp|get_model|bare_model")


def last_name(expr: cst.BaseExpression) -> str | None:
    """`c` for `a.b.c` or `c`; None for anything else."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    if isinstance(expr, cst.Name):
        return expr.value
    return None


def string_value(expr: cst.BaseExpression | None) -> str | None:
    """The value of a plain string literal (no f-string), else None."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(expr, cst.ConcatenatedString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


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
    if arg is None or (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
        return None
    return arg


def argument(call: cst.Call, position: int, name: str) -> cst.BaseExpression | None:
    """The value given at `position` or as `name=`."""
    arg = passed_argument(call, position, name)
    return None if arg is None else arg.value


def is_true(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def is_false(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def environ_key(ctx: FileContext, expr: cst.BaseExpression) -> str | None:
    """`"RANK"` for `os.environ["RANK"]`, `os.environ.get("RANK")`, `os.getenv("RANK")`."""
    if isinstance(expr, cst.Subscript) and ctx.qualname(expr.value) == "os.environ":
        element = expr.slice[0].slice
        if isinstance(element, cst.Index):
            return string_value(element.value)
    if isinstance(expr, cst.Call):
        name = ctx.call_name(expr)
        if name in ("os.environ.get", "os.getenv") and expr.args:
            return string_value(expr.args[0].value)
    return None


def strip_conversion(
    expr: cst.BaseExpression, functions: tuple[str, ...] = ("int", "float")
) -> cst.BaseExpression:
    """`x` for `int(x)`, `float(x)`, `int(float(x))` (or calls of the given `functions`)."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value in functions
        and expr.args
    ):
        expr = expr.args[0].value
    return expr


class DDPFacts:
    """Answers to the DDP questions rules ask, computed lazily and cached per file."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    # -- is this a distributed file at all -------------------------------------------

    @cached_property
    def is_distributed(self) -> bool:
        """The file imports torch.distributed, DDP or DistributedSampler (or a project
        helper that does)."""
        ctx = self.ctx
        for full in (*ctx.imports.bindings.values(), *ctx.imports.modules):
            if full.startswith(_DISTRIBUTED_PREFIXES):
                return True
        for call in ctx.calls:
            name = ctx.call_name(call)
            if name and name.startswith(_DISTRIBUTED_PREFIXES):
                return True
        project = ctx.project
        return project is not None and project.imports_distributed_helper(ctx)

    # -- DDP-wrapped models ------------------------------------------------------------

    @cached_property
    def ddp_wraps(self) -> list[cst.Call]:
        return list(self.ctx.calls_to(*DDP_CLASSES))

    @cached_property
    def helper_wraps(self) -> list[cst.Call]:
        """Calls of helpers (of this file or the project) that return a model they wrapped
        in DDP (`model = smart_DDP(model)`)."""
        return [
            c for c in self.ctx.calls if self._is_ddp_call(c) and not self._is_direct_ddp_call(c)
        ]

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
            if self._holds(value, node, self._is_direct_ddp_call, set()):
                found.add(func.name.value)
        return frozenset(found)

    def is_ddp_model(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        """True if `expr` holds a DDP-wrapped model at `at`."""
        return self._holds(expr, at, self._is_ddp_call, set())

    def is_unwrapped_ddp(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        """True for `ddp.module`, `getattr(ddp, "module", ddp)`, `unwrap_model(ddp)` and
        names bound to them."""
        return self._holds(expr, at, self._is_unwrap_expr, set())

    def _is_direct_ddp_call(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Call) and self.ctx.call_name(expr) in DDP_CLASSES

    def _is_ddp_call(self, expr: cst.BaseExpression) -> bool:
        if not isinstance(expr, cst.Call):
            return False
        if self._is_direct_ddp_call(expr):
            return True
        if isinstance(expr.func, cst.Name) and expr.func.value in self.wrapping_functions:
            return True
        project = self.ctx.project
        return project is not None and project.helper_returns_ddp(self.ctx, expr)

    def _is_unwrap_expr(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Attribute) and expr.attr.value == "module":
            return True
        if isinstance(expr, cst.IfExp):
            return self._is_unwrap_expr(expr.body) or self._is_unwrap_expr(expr.orelse)
        if isinstance(expr, cst.Call):
            func = last_name(expr.func)
            if func == "getattr" and len(expr.args) >= 2:
                return string_value(expr.args[1].value) == "module"
            return func is not None and bool(_UNWRAP_FUNCTION.search(func))
        return False

    def _holds(self, expr, at, predicate, seen: set[int]) -> bool:
        """Whether `expr` (followed through assignments and call sites) satisfies
        `predicate` at `at`."""
        if predicate(expr):
            return True
        if isinstance(expr, cst.IfExp):  # `DDP(m) if distributed else m`: either may hold
            return self._holds(expr.body, at, predicate, seen) or self._holds(
                expr.orelse, at, predicate, seen
            )
        name = dotted(expr)
        if name is None or id(expr) in seen:
            return False
        seen.add(id(expr))
        binding = self.reaching_binding(name, at if at is not None else expr)
        if binding is None:
            return False
        if binding.kind == "param":
            return any(
                self._holds(arg, arg, predicate, seen) for arg in self.arguments_for(binding)
            )
        if binding.kind != "assign":
            return False
        return self._holds(binding.value, binding.statement, predicate, seen)

    def reaching_binding(self, name: str, at: cst.CSTNode) -> Binding | None:
        """The last binding of `name` that precedes `at` in its scope (or the module's)."""
        ctx = self.ctx
        candidates = ctx.bindings.get(name, [])
        visible = candidates if name.startswith("self.") else ctx.bindings_of(name, at)
        preceding = [b for b in visible if b.kind == "param" or self._precedes(b, at)]
        if preceding:
            return preceding[-1]
        # A global read in a function defined above its assignment.
        module_level = [b for b in visible if b.scope is ctx.module]
        return module_level[-1] if module_level else None

    def binding_before(self, name: str, at: cst.CSTNode) -> Binding | None:
        """Like `reaching_binding`, but asked at the statement holding `at`, so that no
        binding made by that statement counts (`with open(p) as f, wrap(f)`, `(x := f(x))`)."""
        return self.reaching_binding(name, self.ctx.statement(at))

    def _precedes(self, binding: Binding, at: cst.CSTNode) -> bool:
        """The binding happened before `at` runs: `model` in `model = DDP(model)` still
        reads the old value; a loop variable is bound inside its loop body."""
        ctx = self.ctx
        if not ctx.before(binding.statement, at):
            return False
        if binding.kind in ("assign", "augassign"):
            return not ctx.is_inside(at, binding.statement)
        if binding.kind == "for":
            return not ctx.is_inside(at, binding.value)
        return True

    def arguments_for(self, param: Binding) -> list[cst.BaseExpression]:
        """Expressions callers in this file pass for the parameter `param`."""
        func = param.scope
        if not isinstance(func, cst.FunctionDef):
            return []
        names = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
        if param.target not in names and not any(
            p.name.value == param.target for p in func.params.kwonly_params
        ):
            return []
        index = names.index(param.target) if param.target in names else None
        if names and names[0] in ("self", "cls") and index is not None:
            if index == 0:
                return []  # `self` is not passed in the argument list
            index -= 1
        found: list[cst.BaseExpression] = []
        for call in self.ctx.calls:
            if not _calls_function(call.func, func.name.value):
                continue
            value = argument(call, index if index is not None else 10_000, param.target)
            if value is not None:
                found.append(value)
        return found

    # -- ranks ----------------------------------------------------------------------------

    def is_rank_value(self, expr: cst.BaseExpression, depth: int = 3) -> bool:
        """An expression holding this process's rank (global or local)."""
        return self._holds_value(expr, _RANK, depth)

    def _holds_value(self, expr: cst.BaseExpression, value: _ProcessValue, depth: int) -> bool:
        """`expr` is `value`: a call, environment read or name that carries it, or a name
        assigned from one (a few steps back)."""
        ctx = self.ctx
        expr = strip_conversion(expr)
        if (
            value.modulo
            and isinstance(expr, cst.BinaryOperation)
            and isinstance(expr.operator, cst.Modulo)
        ):
            return self._holds_value(expr.left, value, depth)
        if isinstance(expr, cst.Call):
            func = last_name(expr.func)
            if (
                func is not None
                and value.functions.match(func)
                and not (value.bare_call and expr.args)
            ):
                return True
            return environ_key(ctx, expr) in value.environ
        if isinstance(expr, cst.Subscript):
            return environ_key(ctx, expr) in value.environ
        name = last_name(expr)
        if name is None:
            return False
        if value.names.search(name):
            return True
        full = dotted(expr)
        if full is None or depth == 0:
            return False
        return any(self._holds_value(v, value, depth - 1) for v in self._values(full, expr))

    def is_rank_test(self, expr: cst.BaseExpression, depth: int = 3) -> bool:
        """A condition whose truth differs between ranks: `rank == 0`,
        `is_main_process()`, `args.local_rank in (-1, 0)`, `not master`, ..."""
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            return self.is_rank_test(expr.expression, depth)
        if isinstance(expr, cst.BooleanOperation):
            return self.is_rank_test(expr.left, depth) or self.is_rank_test(expr.right, depth)
        if isinstance(expr, cst.Comparison):
            if _is_mode_check(expr):
                return False
            operands = [expr.left, *(c.comparator for c in expr.comparisons)]
            return any(self.is_rank_value(o) for o in operands)
        if isinstance(expr, cst.Call):
            func = last_name(expr.func)
            return func is not None and bool(_MAIN_PROCESS_NAME.match(func))
        name = last_name(expr)
        if name is None:
            return False
        if _MAIN_PROCESS_NAME.match(name):
            return True
        full = dotted(expr)
        if full is None or depth == 0:
            return False
        return any(self.is_rank_test(v, depth - 1) for v in self._values(full, expr))

    def _values(self, name: str, at: cst.CSTNode) -> list[cst.BaseExpression]:
        """Values `name` is assigned; for `self.x`, in any method (`__init__` sets it)."""
        if name.startswith("self."):
            return [b.value for b in self.ctx.bindings.get(name, []) if b.kind != "param"]
        return self.ctx.values_of(name, at)

    def rank_guard(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The rank condition under which `node` runs, if any: an enclosing `if` on a
        rank test, or an earlier `if not main: return` in the same function. (The sync
        rules use the stricter `ddplint.analysis.rank_guards.rank_guard`.)"""
        ctx = self.ctx
        child = node
        for ancestor in ctx.ancestors(node):
            if (
                isinstance(ancestor, (cst.If, cst.IfExp))
                and child is not ancestor.test
                and self.is_rank_test(ancestor.test)
            ):
                return ancestor
            if isinstance(ancestor, cst.FunctionDef):
                from ddplint.analysis.ranks import rank_only_decorator

                decorator = rank_only_decorator(ancestor)
                if decorator is not None:
                    return decorator
                early = self._early_exit_guard(ancestor, child)
                if early is not None:
                    return early
                return None
            child = ancestor
        return None

    def _early_exit_guard(self, func: cst.FunctionDef, top: cst.CSTNode) -> cst.CSTNode | None:
        if not isinstance(func.body, cst.IndentedBlock):
            return None
        for statement in func.body.body:
            if statement is top:
                return None
            if (
                isinstance(statement, cst.If)
                and self.is_rank_test(statement.test)
                and _ends_in_exit(statement.body)
            ):
                return statement
        return None

    # -- world size -----------------------------------------------------------------------

    def is_world_size(self, expr: cst.BaseExpression, depth: int = 3) -> bool:
        """An expression holding the number of processes."""
        return self._holds_value(expr, _WORLD_SIZE, depth)

    # -- collectives ----------------------------------------------------------------------

    def is_collective_call(self, call: cst.Call) -> bool:
        """A direct call of a torch.distributed collective or barrier."""
        return self.ctx.call_name(call) in COLLECTIVES

    @cached_property
    def collective_functions(self) -> dict[str, cst.Call]:
        """Functions of this file (by name) that issue a collective, directly or through
        another such function or a project helper; value: the first collective call."""
        return self.functions_reaching(self._issues_collective)

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

    def _issues_collective(self, call: cst.Call, known: Container[str]) -> bool:
        if self.is_collective_call(call):
            return True
        name = last_name(call.func)
        if isinstance(call.func, cst.Name) and name in known:
            return True
        project = self.ctx.project
        return project is not None and project.helper_issues_collective(self.ctx, call)


def _calls_function(callee: cst.BaseExpression, name: str) -> bool:
    """`name(...)` or `self.name(...)`: a call of this file's function `name`."""
    if isinstance(callee, cst.Name):
        return callee.value == name
    return (
        isinstance(callee, cst.Attribute)
        and callee.attr.value == name
        and isinstance(callee.value, cst.Name)
        and callee.value.value in ("self", "cls")
    )


def _is_mode_check(expr: cst.Comparison) -> bool:
    """`local_rank != -1`, `rank >= 0`: true on every rank of a distributed run."""
    if len(expr.comparisons) != 1:
        return False
    comparison = expr.comparisons[0]
    value = _int_literal(comparison.comparator)
    if value is None:
        return False
    operator = comparison.operator
    if value == -1:
        return isinstance(operator, (cst.Equal, cst.NotEqual, cst.GreaterThan, cst.LessThanEqual))
    return value == 0 and isinstance(operator, (cst.GreaterThanEqual, cst.LessThan))


def _int_literal(expr: cst.BaseExpression) -> int | None:
    """The value of a decimal integer literal, maybe negated (`0`, `-1`); None otherwise."""
    negated = isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus)
    if negated:
        expr = expr.expression  # type: ignore[attr-defined]
    if not isinstance(expr, cst.Integer):
        return None
    try:
        value = int(expr.value)  # hex, octal and binary spellings are not matched
    except ValueError:
        return None
    return -value if negated else value


def _ends_in_exit(block: cst.BaseSuite) -> bool:
    if isinstance(block, cst.SimpleStatementSuite):
        statements = block.body
    elif isinstance(block, cst.IndentedBlock) and block.body:
        last = block.body[-1]
        if not isinstance(last, cst.SimpleStatementLine):
            return False
        statements = last.body
    else:
        return False
    return bool(statements) and isinstance(statements[-1], (cst.Return, cst.Raise))
