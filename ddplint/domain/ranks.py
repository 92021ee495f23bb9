"""One definition of "rank test": a condition whose truth differs between the ranks of a
job, and which side of it the main process (rank 0) is on.

A rank test is built from a per-process value compared with a constant (`rank == 0`,
`self.gpu_id == 0`, `args.local_rank in [-1, 0]`, `dist.get_rank() == 0`, the rank within
a process group `dist.get_rank(group) == 0`), a main-process predicate
(`is_main_process()`, `self.is_master`, `trainer.is_global_zero`), a name or attribute
bound to one (`master_process = rank == 0`; an attribute another module sets to one,
`ddplint.domain.rank_flags`), or a call of a project function (of this file, or of another
module through its summary) that returns one. Mode checks are not rank
tests: `world_size == 1`, `args.distributed`, `local_rank == -1` / `!= -1`, `rank >= 0`,
`rank is None` hold alike on every rank of a distributed run.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable

import libcst as cst

from ddplint.domain.apis import (
    DDP_CLASSES,
    DISTRIBUTED_FLAG,
    MAIN_PROCESS_NAME,
    RANK_ENV,
    RANK_FUNCTION,
    RANK_NAME,
    WORLD_SIZE_ENV,
    WORLD_SIZE_FUNCTION,
    WORLD_SIZE_NAME,
)
from ddplint.domain.launch_modes import switch_when
from ddplint.engine import Resolver, Value
from ddplint.engine.flow import logical_operands
from ddplint.engine.resolve import string_key
from ddplint.names import dotted

GROUP_NAME = re.compile(r"(^|_)(sub)?(group|pg)s?(_|$)")
CPU_ONLY_FLAG = re.compile(r"^(no_(cuda|gpu)|(use_|force_)?cpu(_only)?)$")
# A flag named for running distributed (`enable_fsdp`, `use_ddp`, `FLAGS.parallel`).
_DISTRIBUTED_SWITCH = re.compile(
    r"^(use_|is_|enable_|do_|run_)?(parallel|distributed|dist|ddp|fsdp|deepspeed|multi_?gpu)$",
    re.IGNORECASE,
)


# A rank compared with the -1 a script keeps where no launcher set one (`local_rank = -1`):
# whether the test holding means one process (`local_rank == -1`, `local_rank < 0`) or a
# distributed job (`local_rank != -1`, `local_rank >= 0`).
_SENTINEL_TESTS: dict[tuple[int, type[cst.BaseCompOp]], bool] = {
    (-1, cst.Equal): True,
    (-1, cst.LessThanEqual): True,
    (-1, cst.NotEqual): False,
    (-1, cst.GreaterThan): False,
    (0, cst.LessThan): True,
    (0, cst.GreaterThanEqual): False,
}


class Side(enum.Enum):
    """Which ranks a rank test is true on."""

    MAIN = "main"  # the main process (rank 0) only, maybe with the non-distributed run
    OTHERS = "others"  # every rank but the main one
    SOME = "some"  # some ranks; which is not known

    def negated(self) -> Side:
        return {Side.MAIN: Side.OTHERS, Side.OTHERS: Side.MAIN}.get(self, Side.SOME)


def bool_constant(expr: cst.BaseExpression) -> bool | None:
    """The value of `True` or `False`, else None."""
    if type(expr) is cst.Name and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def last_name(expr: cst.BaseExpression) -> str | None:
    """`c` for `a.b.c` or `c`; None for anything else."""
    if type(expr) is cst.Attribute:
        return expr.attr.value
    if type(expr) is cst.Name:
        return expr.value
    return None


def strip_conversion(
    expr: cst.BaseExpression, functions: tuple[str, ...] = ("int", "float")
) -> cst.BaseExpression:
    """`x` for `int(x)`, `float(x)`, `int(float(x))` (or calls of the given `functions`)."""
    while (
        type(expr) is cst.Call
        and type(expr.func) is cst.Name
        and expr.func.value in functions
        and expr.args
    ):
        expr = expr.args[0].value
    return expr


def int_literal(expr: cst.BaseExpression) -> int | None:
    """The value of a decimal integer literal, maybe negated (`0`, `-1`); None otherwise."""
    negated = type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus
    if type(expr) is cst.UnaryOperation:
        if not negated:
            return None
        expr = expr.expression
    if type(expr) is not cst.Integer:
        return None
    try:
        value = int(expr.value)  # hex, octal and binary spellings are not matched
    except ValueError:
        return None
    return -value if negated else value


def _literals(expr: cst.BaseExpression) -> list[int | None]:
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return [int_literal(e.value) for e in expr.elements]
    return [int_literal(expr)]


# A flag named for distribution in a short form: `if not dist:` with `dist: bool`.
_SHORT_FLAG = re.compile(r"^(use_|is_|enable_)?dist$")


# Words that, beside `dist`, name a test of whether the process group is up
# (`is_dist_initialized()`, `dist_is_available()`, `dist_enabled`).
_GROUP_UP = frozenset({"initialized", "initialised", "available", "avail", "enabled"})


def _names_distribution(name: str) -> bool:
    """A test named for distribution: `args.distributed`, `use_ddp`, `dist.is_initialized()`,
    `is_dist_initialized()`, a bare `dist` flag."""
    if any(flag in name for flag in DISTRIBUTED_FLAG) or _SHORT_FLAG.match(name) is not None:
        return True
    words = name.split("_")
    return "dist" in words and not _GROUP_UP.isdisjoint(words)


class Ranks:
    """Rank values, world sizes and rank tests of one file."""

    def __init__(
        self,
        resolver: Resolver,
        world_size_elsewhere: Callable[[cst.BaseExpression], bool] | None = None,
        returned_elsewhere: Callable[[cst.Call], Side | None] | None = None,
        passed_elsewhere: Callable[[cst.FunctionDef, str], bool] | None = None,
        spawn_index: Callable[[cst.FunctionDef], str | None] | None = None,
        flag_elsewhere: Callable[[str], Side | None] | None = None,
    ) -> None:
        """`world_size_elsewhere` says whether a name or attribute reads a world size kept
        in another module of the project (`ext_dist.my_size`); `returned_elsewhere`, which
        side of a rank test a call of another project module's function returns
        (`distributed.is_subgroup_main_process()`; `Project.returned_rank_test`);
        `passed_elsewhere`, whether a call in another project module passes a rank for a
        function's parameter (`Project.passes_elsewhere`); `spawn_index`, the parameter
        of a function that receives the process index when this file spawns it
        (`spawned_workers.index_parameter`: a rank, whatever its name); `flag_elsewhere`,
        the side of the rank test the project assigns every attribute of a name it
        assigns (`args.print_progress = RANK == 0` in another module:
        `Project.rank_flag`)."""
        self.resolver = resolver
        self._flag_elsewhere = flag_elsewhere
        self._passed_elsewhere = passed_elsewhere
        self._spawn_index = spawn_index
        self._world_size_elsewhere = world_size_elsewhere
        self._returned_elsewhere = returned_elsewhere
        self._sides: dict[cst.CSTNode, Side | None] = {}
        self._following: set[tuple[cst.CSTNode, bool]] = set()

    # -- per-process values ---------------------------------------------------------------

    def is_rank_value(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        """An expression holding this process's rank (global, local or node)."""
        return self._holds(expr, at, rank=True)

    def rank_passed_elsewhere(self, func: cst.FunctionDef, name: str) -> bool:
        """A call of `func` in another module of the project passes, for its parameter
        `name`, a value computed from that process's rank."""
        return self._passed_elsewhere is not None and self._passed_elsewhere(func, name)

    def is_world_size(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        """An expression holding the number of processes."""
        return self._holds(expr, at, rank=False)

    def _holds(self, expr: cst.BaseExpression, at: cst.CSTNode | None, rank: bool) -> bool:
        # `self.step = self.global_step % n` with `self.global_step = self.step`: the
        # modulo's left side leads back here, so an expression already being followed
        # holds nothing new.
        key = (expr, rank)
        if key in self._following:
            return False
        self._following.add(key)
        try:
            where = expr if at is None else at
            if rank and type(expr) is cst.Name and self.is_spawn_index(expr, where):
                return True  # whatever else calls the worker (`main(0, cfg)` without spawning)
            return any(
                self._spells(value.expr, value.at, rank)
                for value in self.resolver.values(expr, where)
            )
        finally:
            self._following.discard(key)

    def is_group_rank(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        """This process's rank within a process group: a rank function given the group
        (`dist.get_rank(group)`, `get_rank(group=get_process_subgroup())`). Compared with
        0 it picks the group's main process, as the rank does the job's. Other arguments
        (`matrix_rank(a)`) make no rank."""
        where = expr if at is None else at
        return any(_asks_group_rank(v.expr) for v in self.resolver.values(expr, where))

    def depends_on_rank(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        """The value of `expr` is computed from this process's rank, so it differs between
        ranks: `f"shard_{rank}.pt"`, `os.path.join(out, name)` with `name` built from the
        rank, a helper of this file returning `f"rank_{dist.get_rank()}"`, an item of this
        rank's share of the work (`for shard in shards[rank::world_size]`)."""
        where = expr if at is None else at
        return any(
            self._spells(v.expr, v.at, rank=True) or self._takes_rank_items(v.expr, v.at)
            for v in self.resolver.sources(expr, where)
        )

    def _takes_rank_items(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """`expr` is a loop variable over items that differ between ranks (a slice or a
        range computed from the rank): each rank takes its own items."""
        if type(expr) is not cst.Name:
            return False
        for binding in self.resolver.reaching(expr.value, at):
            key = (binding.value, True)
            if binding.kind != "for" or key in self._following:
                continue
            self._following.add(key)
            try:
                if self.depends_on_rank(binding.value, binding.statement):
                    return True
            finally:
                self._following.discard(key)
        return False

    def rank_in_text(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        """`expr` is a string or path built from the rank (a per-rank file name), not just a
        value computed from it (`torch.device("cuda", local_rank)`)."""
        where = expr if at is None else at
        return any(
            _forms_text(v.expr) and self.depends_on_rank(v.expr, v.at)
            for v in self.resolver.sources(expr, where, depth=2)
        )

    def rank_in_arguments(self, call: cst.Call) -> bool:
        """An argument of `call` is a file name built from the rank (`rank_in_text`): the
        callee writes per-rank files."""
        return any(self.rank_in_text(arg.value) for arg in call.args)

    def spells_world_size(self, expr: cst.BaseExpression) -> bool:
        """`expr` itself is the world size (`world_size`, `dist.get_world_size()`,
        `int(os.environ["WORLD_SIZE"])`), without following names."""
        return self._spells(expr, expr, rank=False)

    def _spells(self, expr: cst.BaseExpression, at: cst.CSTNode, rank: bool) -> bool:
        """`expr` itself spells the value (no following of names)."""
        expr = strip_conversion(expr)
        if rank and type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Modulo:
            return self.is_rank_value(expr.left, at)
        environ = RANK_ENV if rank else WORLD_SIZE_ENV
        if type(expr) is cst.Call:
            func = last_name(expr.func)
            pattern = RANK_FUNCTION if rank else WORLD_SIZE_FUNCTION
            if func is not None and pattern.match(func) and not (rank and expr.args):
                return True
            return self.resolver.direct_environ_key(expr, at) in environ
        names = RANK_NAME if rank else WORLD_SIZE_NAME
        if type(expr) is cst.Subscript:
            if self.resolver.direct_environ_key(expr, at) in environ:
                return True
            key = string_key(expr)  # `info["rank"]`, spelled as `info.rank` would be
            return key is not None and names.search(key) is not None
        name = last_name(expr)
        if name is None:
            return False
        if names.search(name):
            return True
        if rank and type(expr) is cst.Name and self.is_spawn_index(expr, at):
            return True
        elsewhere = None if rank else self._world_size_elsewhere
        return elsewhere is not None and elsewhere(expr)

    def is_spawn_index(self, name: cst.Name, at: cst.CSTNode) -> bool:
        """`name` is the parameter through which `mp.spawn` hands a worker its index."""
        if self._spawn_index is None:
            return False
        return any(
            binding.kind == "param"
            and type(binding.owner) is cst.FunctionDef
            and self._spawn_index(binding.owner) == binding.target
            for binding in self.resolver.reaching(name.value, at)
        )

    # -- mode checks --------------------------------------------------------------------

    def is_mode_check(self, test: cst.BaseExpression) -> bool:
        """A test true alike on every rank of a run that says whether (or how widely) the
        job is distributed: `dist.is_initialized()`, `args.distributed`, `world_size > 1`,
        `local_rank != -1`, `not is_dist_avail_and_initialized()`, and `and`/`or`/`not`
        of them."""
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            return self.is_mode_check(test.expression)
        if type(test) is cst.BooleanOperation:
            return self.is_mode_check(test.left) and self.is_mode_check(test.right)
        if type(test) is cst.Comparison:
            operands = [test.left, *(c.comparator for c in test.comparisons)]
            if any(self.is_world_size(o) for o in operands):
                return True
            if _against_bool(test):  # `args.distributed is not True`: the flag itself
                return self.is_mode_check(test.left)
            if _against_flag_number(test) and self.is_mode_check(test.left):
                return True  # `args.isdistributed == 1`
            return self._comparison_side(test, test) is None and any(
                self.is_rank_value(o) for o in operands
            )
        func = test.func if type(test) is cst.Call else test
        name = (last_name(func) or "").lower()
        return _names_distribution(name) or name in ("is_available",)

    def single_process_when(self, test: cst.BaseExpression) -> bool | None:
        """True if `test` holding means the job is not distributed (`world_size == 1`,
        `not args.distributed`, `local_rank == -1`), False if it means the job is
        (`dist.is_initialized()`, `world_size > 1`), None when it says neither."""
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            inner = self.single_process_when(test.expression)
            return None if inner is None else not inner
        if type(test) is cst.BooleanOperation and type(test.operator) is cst.Or:
            return self._single_or_cpu(test)
        if type(test) is cst.BooleanOperation:
            return self._distributed_and(test)
        if type(test) is cst.Comparison and _against_bool(test):
            # `args.use_ddp is True`: the flag itself; `is False`, `is not True`: negated
            flag = self.single_process_when(test.left)
            return None if flag is None else flag != _negated_flag_test(test)
        if type(test) is cst.Comparison and _against_flag_number(test):
            # `args.isdistributed == 1`: the flag itself; `== 0`, `!= 1`: negated
            flag = self.single_process_when(test.left)
            if flag is not None:
                return flag != _negated_flag_test(test)
        if type(test) is cst.Comparison and len(test.comparisons) == 1:
            target = test.comparisons[0]
            number = int_literal(target.comparator)
            kind = type(target.operator)
            launched = self._launcher_variable_set(test)
            if launched is not None:
                return not launched
            named = switch_when(test.left, target)
            if named is not None:
                return named
            if self.is_world_size(test.left):
                if (number == 1 and kind in (cst.Equal, cst.LessThanEqual)) or (
                    number == 2 and kind is cst.LessThan
                ):
                    return True
                if (number == 1 and kind in (cst.NotEqual, cst.GreaterThan)) or (
                    number == 2 and kind is cst.GreaterThanEqual
                ):
                    return False
            elif number in (-1, 0) and self.is_rank_value(test.left):
                return _SENTINEL_TESTS.get((number, kind))  # -1: no launcher set the rank
            return None
        if type(test) is cst.Call and self._tests_ddp_type(test):
            return False  # `isinstance(model, DistributedDataParallel)`: wrapped for a job
        func = test.func if type(test) is cst.Call else test
        name = (last_name(func) or "").lower()
        if _names_distribution(name):
            return False
        return None

    def _tests_ddp_type(self, test: cst.Call) -> bool:
        """`isinstance(model, DistributedDataParallel)` (or a tuple holding it): true only
        where the model is wrapped for a distributed job; false where it is not wrapped,
        whose backward and forward then issue no collective."""
        if dotted(test.func) != "isinstance" or len(test.args) != 2:
            return False
        kinds = test.args[1].value
        classes = (
            [e.value for e in kinds.elements if type(e) is cst.Element]
            if type(kinds) is cst.Tuple
            else [kinds]
        )
        resolve = self.resolver.model.imports.resolve
        return any((resolve(kind) or "") in DDP_CLASSES for kind in classes)

    def _single_or_cpu(self, test: cst.BooleanOperation) -> bool | None:
        """`local_rank == -1 or args.no_cuda` (the pre-torchrun HF/NVIDIA switch): not
        distributed, or on the CPU, where these scripts join no process group. True when
        one term is a single-process test and the others are too or are CPU-only flags;
        False when one term means the job is distributed and the others do too or are
        flags of a sharded wrapper (`cfg.enable_fsdp or cfg.enable_ddp`)."""
        terms = [test.left, test.right]
        whens = [self.single_process_when(t) for t in terms]
        if False in whens and all(
            w is False or (w is None and _DISTRIBUTED_SWITCH.match(last_name(t) or "") is not None)
            for t, w in zip(terms, whens, strict=True)
        ):
            return False  # `enable_fsdp or enable_ddp`: either way the job is distributed
        if True not in whens:
            return None
        if all(w is True or _cpu_only_flag(t) for t, w in zip(terms, whens, strict=True)):
            return True
        return None

    def _distributed_and(self, test: cst.BooleanOperation) -> bool | None:
        """`args.parallel and world_size > 1`: False (the job is distributed where it
        holds) when one term says so and the others do too or are flags named for it; its
        `else` is the project's single-process run."""
        terms = [test.left, test.right]
        whens = [self.single_process_when(t) for t in terms]
        if False in whens and all(
            w is False or (w is None and _DISTRIBUTED_SWITCH.match(last_name(t) or "") is not None)
            for t, w in zip(terms, whens, strict=True)
        ):
            return False
        return None

    def _launcher_variable_set(self, test: cst.Comparison) -> bool | None:
        """`"WORLD_SIZE" in os.environ` (True) or `"LOCAL_RANK" not in os.environ` (False):
        whether a launcher's rank or world-size variable is set, else None."""
        target = test.comparisons[0]
        if not isinstance(target.operator, (cst.In, cst.NotIn)):
            return None
        key = test.left
        if not (type(key) is cst.SimpleString and key.raw_value in RANK_ENV | WORLD_SIZE_ENV):
            return None
        if self.resolver.model.imports.resolve(target.comparator) != "os.environ":
            return None
        return type(target.operator) is cst.In

    # -- rank tests -----------------------------------------------------------------------

    def side(self, test: cst.BaseExpression, at: cst.CSTNode | None = None) -> Side | None:
        """The ranks on which `test` is true, or None when it is not a rank test."""
        known = self._sides.get(test, ...)
        if known is not ...:
            return known
        self._sides[test] = None  # a name bound to itself cannot recurse forever
        found = self._side(test, test if at is None else at)
        self._sides[test] = found
        return found

    def is_rank_test(self, test: cst.BaseExpression, at: cst.CSTNode | None = None) -> bool:
        return self.side(test, at) is not None

    def _side(self, test: cst.BaseExpression, at: cst.CSTNode) -> Side | None:
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            inner = self.side(test.expression, at)
            return None if inner is None else inner.negated()
        operands = logical_operands(test)
        if operands is not None:
            left, right = self.side(operands[0], at), self.side(operands[1], at)
            if left is None or right is None or left is right:
                return left or right
            return Side.SOME
        if type(test) is cst.Comparison:
            return self._comparison_side(test, at)
        if type(test) is cst.IfExp:
            return self._held_side(test, at) or self._chosen_side(test, at)
        if type(test) is cst.Call:
            func = last_name(test.func)
            if func is not None and MAIN_PROCESS_NAME.match(func):
                return Side.MAIN
            return self._returned_side(test)
        name = last_name(test)
        if name is None:
            return None
        if type(test) is cst.Name and self.names_function(test):
            return None  # `if is_main_process:` tests a function object: always true
        if MAIN_PROCESS_NAME.match(name):
            return Side.MAIN
        held = self._holder_side(test, at)
        if held is not None:
            return held
        for value in self.resolver.values(test, at):
            if value.expr is not test:
                side = self.side(value.expr, value.at)
                if side is not None:
                    return side
        if type(test) is cst.Attribute and self._flag_elsewhere is not None:
            return self._flag_elsewhere(name)
        return None

    def _chosen_side(self, test: cst.IfExp, at: cst.CSTNode) -> Side | None:
        """`True if rank == 0 else False` is true where its test is (and `False if ...
        else True` where it is not)."""
        body, orelse = bool_constant(test.body), bool_constant(test.orelse)
        if body is None or orelse is None or body == orelse:
            return None
        side = self.side(test.test, at)
        return side if side is None or body else side.negated()

    def _held_side(self, test: cst.IfExp, at: cst.CSTNode) -> Side | None:
        """Where an object made only on some ranks exists: `Logger(...) if rank == 0 else
        None` is truthy (and not None) exactly where its rank test holds."""
        side = self.side(test.test, at)
        if side is None:
            return None
        if _is_none(test.orelse) and _made(test.body):
            return side
        if _is_none(test.body) and _made(test.orelse):
            return side.negated()
        return None

    def _holder_side(self, test: cst.BaseExpression, at: cst.CSTNode) -> Side | None:
        """Where a name bound to None and, under a rank test, to an object (`writer = None`
        then `if rank == 0: writer = SummaryWriter()`) holds the object: the side of that
        test, when every object it may hold is made under one. (A name bound to
        `Logger() if rank == 0 else None` is `_side`'s: the side of its value.)"""
        tests = self._branch_tests(list(self.resolver.values(test, at)))
        sides = {self.side(t, where) for t, where in tests}
        return sides.pop() if len(sides) == 1 else None

    def holder_tests(
        self, test: cst.BaseExpression, at: cst.CSTNode
    ) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
        """The rank tests (with where they stand) under which the objects a name bound to
        None elsewhere are made; [] unless every object it may hold is made under one."""
        if type(test) is cst.IfExp:
            return [(test.test, at)] if self._held_side(test, at) is not None else []
        values = list(self.resolver.values(test, at))
        chosen = [(v.expr, v.at) for v in values if type(v.expr) is cst.IfExp]
        if chosen and all(self._held_side(expr, where) is not None for expr, where in chosen):
            return [(expr.test, where) for expr, where in chosen]
        return self._branch_tests(values)

    def _branch_tests(self, values: list[Value]) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
        """The rank `if` tests under which the objects among `values` (a name's, the
        others None) are made; [] unless each is made under one."""
        leaves = [v for v in values if v.leaf]
        made = [v for v in leaves if _made(v.expr)]
        if not made or len(made) == len(leaves):
            return []
        if not all(_is_none(v.expr) or _made(v.expr) for v in leaves):
            return []
        found: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
        for value in made:
            branch = self._rank_branch(value.at)
            if branch is None:
                return []
            found.append((branch.test, branch))
        return found

    def _rank_branch(self, node: cst.CSTNode) -> cst.If | None:
        """The innermost rank `if` of its function whose body holds `node`."""
        model = self.resolver.model
        for ancestor in model.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None
            if (
                type(ancestor) is cst.If
                and model.is_inside(node, ancestor.body)
                and self.side(ancestor.test, ancestor) is not None
            ):
                return ancestor
        return None

    def names_function(self, name: cst.Name) -> bool:
        """`name` is a function defined in this file, or one of another project module
        that returns a rank test, and nothing else binds it."""
        model = self.resolver.model
        if model.bindings.get(name.value):
            return False
        return name.value in model.functions or self._side_elsewhere(name) is not None

    def function_side(self, name: cst.Name) -> Side | None:
        """The side of the rank test that calling the function `name` names would give
        (`is_main_process` of `def is_main_process(): return get_rank() == 0`): a
        function of this file at module level, or one of another project module; None
        where something else binds the name or the function is no rank test."""
        model = self.resolver.model
        if model.bindings.get(name.value):
            return None
        if name.value in model.functions:
            defs = [f for f in model.functions[name.value] if model.enclosing_class(f) is None]
            if not defs or model.imports.resolve(name) is not None:
                return None  # a method's name, or a name both defined and imported
            return self.returned_side(defs)
        return self._side_elsewhere(name)

    def _side_elsewhere(self, name: cst.Name) -> Side | None:
        """The side of the rank test the function of another project module that the
        imported `name` names returns, if any."""
        if self.resolver.model.imports.resolve(name) is None or self._returned_elsewhere is None:
            return None
        return self._returned_elsewhere(cst.Call(func=name))

    def _returned_side(self, call: cst.Call) -> Side | None:
        """A call of a project function whose every return value is a rank test: one of
        this file, else one of another module."""
        callees = self.resolver.callees(call)
        if not callees and self._returned_elsewhere is not None:
            return self._returned_elsewhere(call)
        return self.returned_side(callees)

    def returned_side(self, funcs: Iterable[cst.FunctionDef]) -> Side | None:
        """The side of the rank test that every return of the functions `funcs` (the
        definitions of one name) gives, else None."""
        sides: set[Side] = set()
        for func in funcs:
            for returned in self.resolver.model.returns.get(func, []):
                if returned.value is None:
                    return None
                side = self.side(returned.value, returned)
                if side is None:
                    return None
                sides.add(side)
        if not sides:
            return None
        return sides.pop() if len(sides) == 1 else Side.SOME

    def _comparison_side(self, test: cst.Comparison, at: cst.CSTNode) -> Side | None:
        if len(test.comparisons) != 1:
            operands = [test.left, *(c.comparator for c in test.comparisons)]
            return Side.SOME if any(self.is_rank_value(o, at) for o in operands) else None
        target = test.comparisons[0]
        left, right, operator = test.left, target.comparator, target.operator
        if compares_with_none(test) and not (
            self.is_rank_value(left, at) or self.is_group_rank(left, at)
        ):
            held = self.side(left, at)  # `writer is not None`: where the object exists
            if held is None:
                return None
            return held if type(operator) is cst.IsNot else held.negated()
        if self.is_rank_value(left, at) or self.is_group_rank(left, at):
            value, constant = left, right
        elif self.is_rank_value(right, at) or self.is_group_rank(right, at):
            value, constant = right, left
            operator = _mirrored(operator)
        else:
            return None
        del value
        if _is_none(constant):
            return None  # `rank is None`: whether the job is distributed
        if _only_text(constant):
            return None  # `rank not in ("cpu", "cuda")`: a device name, not a rank
        literals = _literals(constant)
        if isinstance(operator, (cst.In, cst.NotIn)):
            if not literals or None in literals:
                return Side.SOME
            main = 0 in literals and all(v in (0, -1) for v in literals)
            if main:
                return Side.MAIN if type(operator) is cst.In else Side.OTHERS
            return Side.SOME if literals != [-1] else None
        number = literals[0]
        if number is None:
            return Side.SOME
        if number == -1:
            return None  # `local_rank == -1`: not distributed
        kind = type(operator)
        if number == 0:
            if kind in (cst.Equal, cst.Is, cst.LessThanEqual):
                return Side.MAIN
            if kind in (cst.NotEqual, cst.IsNot, cst.GreaterThan):
                return Side.OTHERS
            return None  # `rank >= 0`, `rank < 0`: true on every rank, or on none
        if number == 1 and kind is cst.LessThan:
            return Side.MAIN
        if number == 1 and kind is cst.GreaterThanEqual:
            return Side.OTHERS
        return Side.SOME


_TEXT_OPERATORS = (cst.Add, cst.Modulo, cst.Divide)
_TEXT_FUNCTIONS = frozenset({"str", "format", "join", "Path", "PurePath", "PosixPath"})


def _asks_mesh_rank(expr: cst.BaseExpression) -> bool:
    """`mesh["tp"].get_local_rank()` or `mesh.get_local_rank("tp")` /
    `get_local_rank(mesh_dim="tp")`: a DeviceMesh's rank within one dimension's group."""
    if not (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value == "get_local_rank"
    ):
        return False
    if not expr.args:
        return type(expr.func.value) is cst.Subscript
    arg = expr.args[0]
    keyword = arg.keyword.value if arg.keyword is not None else "mesh_dim"
    return len(expr.args) == 1 and keyword == "mesh_dim" and type(arg.value) is cst.SimpleString


def _asks_group_rank(expr: cst.BaseExpression) -> bool:
    """`expr` calls a rank function with one argument, a process group (`group=...`, or
    a value whose name says group: `pg`, `self.dp_group`, `get_process_subgroup()`), or
    asks a device mesh for the rank along one of its dimensions (`mesh["tp"].get_local_rank()`,
    `mesh.get_local_rank("tp")`)."""
    expr = strip_conversion(expr)
    if _asks_mesh_rank(expr):
        return True
    if type(expr) is not cst.Call or len(expr.args) != 1:
        return False
    func = last_name(expr.func)
    if func is None or not RANK_FUNCTION.match(func):
        return False
    arg = expr.args[0]
    if arg.keyword is not None:
        return arg.keyword.value == "group"
    value = arg.value.func if type(arg.value) is cst.Call else arg.value
    name = last_name(value)
    return name is not None and GROUP_NAME.search(name) is not None


def _cpu_only_flag(expr: cst.BaseExpression) -> bool:
    """`args.no_cuda`, `cpu`, `args.use_cpu`: an option that keeps the run off the GPU."""
    name = last_name(expr)
    return name is not None and bool(CPU_ONLY_FLAG.match(name.lower()))


def _forms_text(expr: cst.BaseExpression) -> bool:
    """`expr` builds a string or a path: an f-string, `a + b`, `"%d" % r`, `dir / name`,
    `str(r)`, `"{}".format(r)`, `os.path.join(...)`, `Path(...)`."""
    if isinstance(expr, (cst.FormattedString, cst.ConcatenatedString)):
        return True
    if type(expr) is cst.BinaryOperation:
        return isinstance(expr.operator, _TEXT_OPERATORS)
    return type(expr) is cst.Call and last_name(expr.func) in _TEXT_FUNCTIONS


def _only_text(expr: cst.BaseExpression) -> bool:
    """`expr` is a string literal, or a tuple/list/set of them: no rank of a process group
    (an int) equals one, so a rank variable compared with it holds a device name where the
    job is not distributed (`rank = "cpu"` or `"cuda"` beside the spawn index)."""
    strings = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return bool(expr.elements) and all(isinstance(e.value, strings) for e in expr.elements)
    return isinstance(expr, strings)


def _is_none(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "None"


def compares_with_none(test: cst.Comparison) -> bool:
    """`x is None` / `x is not None`."""
    if len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    return isinstance(target.operator, (cst.Is, cst.IsNot)) and _is_none(target.comparator)


def _made(expr: cst.BaseExpression) -> bool:
    """`expr` builds an object (a call: a logger, a writer, a progress bar), which tests
    true: not a literal, which may be false."""
    return type(expr) is cst.Call


_MIRROR: dict[type[cst.BaseCompOp], type[cst.BaseCompOp]] = {
    cst.LessThan: cst.GreaterThan,
    cst.GreaterThan: cst.LessThan,
    cst.LessThanEqual: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.LessThanEqual,
}


def _mirrored(operator: cst.BaseCompOp) -> cst.BaseCompOp:
    """`0 < rank` reads as `rank > 0`."""
    mirror = _MIRROR.get(type(operator))
    return mirror() if mirror is not None else operator


def _against_bool(test: cst.Comparison) -> bool:
    """`x is True`, `x == False`, `x is not True`: one comparison with a bool literal."""
    if len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    return (
        isinstance(target.operator, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual))
        and type(target.comparator) is cst.Name
        and target.comparator.value in ("True", "False")
    )


def _against_flag_number(test: cst.Comparison) -> bool:
    """`x == 1`, `x != 0`, `x == 0`: one equality test with 0 or 1, the values of a flag
    given as an integer option (`--isdistributed 1`)."""
    if len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    return isinstance(target.operator, (cst.Equal, cst.NotEqual)) and int_literal(
        target.comparator
    ) in (0, 1)


def _negated_flag_test(test: cst.Comparison) -> bool:
    """A test of a flag against a literal (`_against_bool`, `_against_flag_number`) holds
    where the flag is off: `is False`, `== 0`, `is not True`, `!= 1`."""
    target = test.comparisons[0]
    comparator = target.comparator
    off = (type(comparator) is cst.Name and comparator.value == "False") or int_literal(
        comparator
    ) == 0
    return isinstance(target.operator, (cst.IsNot, cst.NotEqual)) != off
