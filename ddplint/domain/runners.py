"""Which processes of a job run a node: the one answer to "does every rank run this?" and
"does only one rank run this?".

A node runs on
- `ONE_PROCESS` when the job is not distributed there: a branch taken only without
  distribution (`else` of `if args.distributed:`), a file that runs as one process, a
  worker spawned alone (`ddplint.domain.processes.runs_in_one_process`);
- `ONE_RANK` (some ranks only) under a rank gate of its function (`Gates.gate`: an
  enclosing rank test, an earlier `if not main: return`, a main-only decorator) that
  keeps the other ranks out (`Gates.keeps_out`);
- otherwise where the calls of its function run: at module level or in an entry point
  (`main`, a function handed to `mp.spawn`) on `EVERY_RANK`; through the callers of its
  function in this file, else in the other modules of the project (asked lazily, only
  when a rule's finding depends on it: `ProjectView.callers_run`);
- `UNKNOWN` where the callers are out of sight (no project, a method called on an
  object of another module, too many levels up).

A node reached along several paths has several answers: `runners` gives the set. A rule
that assumes every rank runs the node reports when `every_rank` is True (proven), marks
its finding unproven when it is None, and stays silent when it is False; a rule that
assumes only some ranks run it asks `one_rank` the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import DDP_CLASSES, PROCESS_STARTERS, SPAWN_FUNCTIONS, STARTERS
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.processes import runs_in_one_process
from ddplint.domain.project_view import project_of
from ddplint.domain.runner_kinds import Runner, Runners
from ddplint.domain.spawned_workers import index_parameter
from ddplint.engine import argument

_ENTRY_POINTS = frozenset({"main", "train", "run", "worker", "main_worker"})
# What a test runner calls: tests, and the fixtures of `unittest.TestCase`.
_TEST = re.compile(r"^(test|setUp|tearDown)")
_MAIN_WORD = re.compile(r"(^|_)(master|main|chief|primary|leader)(_|$)|rank_?(0|zero)", re.I)
_JOINS = frozenset(
    {"torch.distributed.init_process_group", "torch.distributed.device_mesh.init_device_mesh"}
)
# A rule's own reason a node runs on one rank at a time (`runners`).
Exempt = Callable[[FileContext, cst.CSTNode], bool]
DEPTH = 6  # calls followed up, in this file and into other modules together

__all__ = [
    "Runner",
    "Runners",
    "distribution_opt_in",
    "every_rank",
    "holds_at_every_call",
    "one_process",
    "one_rank",
    "runners",
]


def runners(
    ctx: FileContext, node: cst.CSTNode, depth: int = DEPTH, exempt: Exempt | None = None
) -> Runners:
    """The answers along every path to `node` (see the module's docstring). `exempt` is a
    rule's own reason that a node, or a call on the way up, runs on one rank at a time
    (a save in a rank-0-first context): `ONE_RANK` there."""
    if exempt is not None and exempt(ctx, node):
        return frozenset({Runner.ONE_RANK})
    here = _here(ctx, node)
    if here is not None and here is not Runner.UNKNOWN:
        return frozenset({here})
    func = ctx.enclosing_function(node)
    if func is None:
        found: Runners = frozenset({Runner.EVERY_RANK})
    elif spawned(ctx, func):
        found = _spawned_runners(ctx, node, func)
    else:
        found = function_runners(ctx, func, depth, exempt)
    if here is Runner.UNKNOWN and Runner.EVERY_RANK in found:
        # under a flag named for the main process whose value is not traced: where every
        # rank reaches it, whether all of them pass is not known
        return (found - {Runner.EVERY_RANK}) | {Runner.UNKNOWN}
    return found


def function_runners(
    ctx: FileContext, func: cst.FunctionDef, depth: int = DEPTH, exempt: Exempt | None = None
) -> Runners:
    """Who runs the body of `func`: the answers at its calls (`runners`)."""
    if depth <= 0:
        return frozenset({Runner.UNKNOWN})
    known = ctx.memo(_known)
    key = (id(func), depth, exempt)
    if key not in known:
        known[key] = (func, frozenset({Runner.UNKNOWN}))  # a cycle of calls decides nothing
        known[key] = (func, _function_runners(ctx, func, depth, exempt))
    return known[key][1]


def _known(
    ctx: FileContext,
) -> dict[tuple[int, int, Exempt | None], tuple[cst.FunctionDef, Runners]]:
    """`function_runners` by function and depth, each entry keeping its function."""
    return {}


def _function_runners(
    ctx: FileContext, func: cst.FunctionDef, depth: int, exempt: Exempt | None
) -> Runners:
    sites = outside_calls(ctx, func)
    if sites:
        found: set[Runner] = set()
        for site in sites:
            found |= runners(ctx, site, depth - 1, exempt)
        if passed_around(ctx, func):
            found.add(Runner.EVERY_RANK)
        return frozenset(found)
    if passed_around(ctx, func):
        return frozenset({Runner.EVERY_RANK})
    project = project_of(ctx)
    elsewhere = None if project is None else project.callers_run(ctx, func, depth - 1)
    if elsewhere:
        return elsewhere
    if func.name.value in _ENTRY_POINTS or _TEST.match(func.name.value) or _joins_job(ctx, func):
        return frozenset({Runner.EVERY_RANK})
    return frozenset({Runner.UNKNOWN})


def spawned(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` is the target of `mp.spawn(func, ...)` / `Process(target=func)`: each worker
    runs it."""
    name = func.name.value
    for call in ctx.calls_to(*PROCESS_STARTERS):
        spawns = ctx.call_name(call) in SPAWN_FUNCTIONS
        target = argument(call, 0 if spawns else None, "fn" if spawns else "target")
        if type(target) is cst.Name and target.value == name:
            return True
    return False


def _spawned_runners(ctx: FileContext, node: cst.CSTNode, func: cst.FunctionDef) -> Runners:
    """Who runs `node` in a spawned worker `func`: every rank, unless a test on the worker's
    index (`args.gpu = gpu` ... `if args.gpu is None:`) keeps the spawned workers out; the
    script's direct calls of `func` are its one-process (or one-per-node) fallback, whose
    process count is not known: UNKNOWN."""
    found: set[Runner] = set()
    if not _index_is_none(ctx, node, func):
        found.add(Runner.EVERY_RANK)
    if outside_calls(ctx, func) or not found:
        found.add(Runner.UNKNOWN)
    return frozenset(found)


def _index_is_none(ctx: FileContext, node: cst.CSTNode, func: cst.FunctionDef) -> bool:
    """`node` runs only where a value of `func`'s process index (`index_parameter`: the
    first parameter, which `mp.spawn` fills with an int, never None) is None."""
    index = index_parameter(ctx, func)
    if index is None:
        return False
    for condition in ctx.flow.conditions(node):
        for term, holds in condition.terms():
            if type(term) is not cst.Comparison or len(term.comparisons) != 1:
                continue
            operator = term.comparisons[0].operator
            if not (type(operator) is cst.Is if holds else type(operator) is cst.IsNot):
                continue
            right = term.comparisons[0].comparator
            if not (type(right) is cst.Name and right.value == "None"):
                continue
            if any(
                type(v.expr) is cst.Name
                and v.expr.value == index
                and ctx.enclosing_function(v.expr) is func
                for v in ctx.resolver.values(term.left, node)
            ):
                return True
    return False


def _joins_job(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` joins the process group, wraps a model in DDP or issues a collective outside
    a rank gate: whatever calls it, every rank of the job must run it."""
    facts = facts_of(ctx)
    gates = domain_of(ctx).gates
    return any(
        (
            ctx.call_name(call) in _JOINS
            or ctx.call_name(call) in DDP_CLASSES  # `facts.ddp_wraps`: the DDP constructions
            or facts.is_collective_call(call)
        )
        and ctx.enclosing_function(call) is func
        and gates.gate(call) is None
        for call in ctx.calls_within(func)
    )


def distribution_opt_in(ctx: FileContext) -> bool:
    """The file's distributed mode is opt-in: it starts process groups (`init_process_group`,
    `init_device_mesh`), each only on the distributed side of a mode test, here or at
    every call of its function in this file (`Gates.distributed_only`: under
    `if args.local_rank != -1:`, `if "WORLD_SIZE" in os.environ:`, the `else` of
    `if world_size == 1:`), and spawns no workers: started with no launcher and no
    option turning the mode on, it runs as one process."""
    return ctx.memo(_distribution_opt_in)


def _distribution_opt_in(ctx: FileContext) -> bool:
    starts = list(ctx.calls_to(*STARTERS))
    if not starts or any(ctx.call_name(call) in SPAWN_FUNCTIONS for call in starts):
        return False
    gates = domain_of(ctx).gates
    return all(holds_at_every_call(ctx, call, gates.distributed_only) for call in starts)


def every_rank(ctx: FileContext, node: cst.CSTNode, exempt: Exempt | None = None) -> bool | None:
    """True when some path to `node` runs on every rank, None when none is proven but
    some path is out of sight, False when every path runs on some ranks or one process."""
    return _answer(runners(ctx, node, exempt=exempt), Runner.EVERY_RANK)


def one_rank(ctx: FileContext, node: cst.CSTNode) -> bool | None:
    """True when some path to `node` runs on some ranks only (a rank gate), None when none
    is proven but some path is out of sight, False otherwise."""
    return _answer(runners(ctx, node), Runner.ONE_RANK)


def one_process(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Every path to `node` runs it where the job is not distributed (`ONE_PROCESS`): a
    rule about ranks meeting has nothing to say there."""
    return runners(ctx, node) == frozenset({Runner.ONE_PROCESS})


def _answer(found: Runners, wanted: Runner) -> bool | None:
    if wanted in found:
        return True
    return None if Runner.UNKNOWN in found else False


def _here(ctx: FileContext, node: cst.CSTNode) -> Runner | None:
    """What `node`'s own function says: one process, some ranks, or nothing."""
    if runs_in_one_process(ctx, node):
        return Runner.ONE_PROCESS
    gates = domain_of(ctx).gates
    if any(gates.keeps_out(g) for g in gates.gates(node)):
        return Runner.ONE_RANK
    gate = gates.gate(node)  # also a main-only decorator, or the gate of an enclosing `def`
    if gate is not None and gates.keeps_out(gate):
        return Runner.ONE_RANK
    if any(_named_for_main(c.test) for c in ctx.flow.conditions(node)):
        return Runner.UNKNOWN
    return None


def _named_for_main(test: cst.BaseExpression) -> bool:
    """A flag read as a whole test whose name says "main process" in words the rank
    tests do not take as proof (`args.is_master_node`: the master node holds several
    processes), its value out of sight."""
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test = test.expression
    if type(test) is cst.Attribute:
        name = test.attr.value
    elif type(test) is cst.Name:
        name = test.value
    else:
        return False
    return _MAIN_WORD.search(name) is not None


def holds_at_every_call(
    ctx: FileContext, node: cst.CSTNode, holds: Callable[[cst.CSTNode], bool], depth: int = 3
) -> bool:
    """`holds(node)`, or `node`'s function is called in this file and `holds` at every
    call (a few levels up): a rule's own reason, proven on every path in this file. A
    worker handed to `mp.spawn` runs in the workers too, where no call of this file shows:
    its direct calls (a one-process fallback) do not decide."""
    if holds(node):
        return True
    func = ctx.enclosing_function(node)
    if func is None or depth == 0 or spawned(ctx, func):
        return False
    sites = outside_calls(ctx, func)
    return bool(sites) and all(holds_at_every_call(ctx, s, holds, depth - 1) for s in sites)


def call_sites(ctx: FileContext, func: cst.FunctionDef) -> list[cst.Call]:
    """Calls in this file that may run the function `func`: those the resolver links to
    it (`Dataset(...)` for `Dataset.__init__`), and calls of a method of that name on some
    other object (`tracker.update()`)."""
    resolver = ctx.resolver
    method = ctx.model.enclosing_class(func) is not None
    return [
        c
        for name in resolver.call_names(func)
        for c in ctx.model.calls_by_name.get(name, [])
        if func in resolver.callees(c)
        or (
            method
            and type(c.func) is cst.Attribute
            and type(c.func.value) is cst.Name
            and ctx.call_name(c) is None
        )
    ]


def outside_calls(ctx: FileContext, func: cst.FunctionDef) -> list[cst.Call]:
    """Calls of `func` in this file, its own recursive calls aside."""
    return [s for s in call_sites(ctx, func) if not ctx.is_inside(s, func)]


def is_entry(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` runs though nothing in the file calls it: an entry point by its name
    (`main`), or one passed around by name (`mp.spawn(main_worker, ...)`)."""
    return func.name.value in _ENTRY_POINTS or passed_around(ctx, func)


def passed_around(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` is handed on by name somewhere in the file (`mp.spawn(worker, ...)`,
    `callback=self.save`): it runs where the receiver calls it."""
    return handed_on(ctx, func.name.value)


def handed_on(ctx: FileContext, name: str) -> bool:
    """Something the file names `name` (a function, a class) is referred to without being
    called: handed on (`mp.spawn(worker, ...)`, `registry = {"net": Net}`). Once per
    file and name: a helper called all over a large file has as many mentions."""
    return ctx.remembered(_name_handed_on, name)


def _name_handed_on(ctx: FileContext, name: str, seen: frozenset[str] = frozenset()) -> bool:
    """Some mention of `name` hands it on, or a mention of a name bound to it (`test_fn =
    test`, then `callback=test_fn`; calls of `test_fn(...)` are `call_sites`)."""
    seen |= {name}
    for mention in ctx.memo(_names_by_value).get(name, ()):
        aliases = _aliases_bound(ctx, mention)
        if aliases is None:
            if _passes_around(ctx, mention):
                return True
        elif any(_name_handed_on(ctx, a, seen) for a in aliases if a not in seen):
            return True
    return False


def _aliases_bound(ctx: FileContext, name: cst.Name) -> list[str] | None:
    """The names an assignment binds to `name` itself (`test_fn = test`, element-wise in
    `train_fn, test_fn = train, test`: `Resolver.names_bound_to`); [] where `name` is
    itself assigned to; None where it is no part of an assignment, or is bound to
    something other than a name (`self.fn = test`)."""
    node: cst.CSTNode = name
    parent = ctx.parent(node)
    while isinstance(parent, (cst.Element, cst.Tuple, cst.List)):
        node, parent = parent, ctx.parent(parent)
    if type(parent) is cst.AssignTarget:
        return [] if parent.target is node else None
    names = ctx.resolver.names_bound_to(name)
    return names if names and all("." not in n for n in names) else None


def _names_by_value(ctx: FileContext) -> dict[str, list[cst.Name]]:
    """The file's names by what they spell, in source order: indexed once per file, not
    scanned once per function asked (quadratic in a large file)."""
    index: dict[str, list[cst.Name]] = {}
    for node in ctx.nodes_of(cst.Name):
        if type(node) is cst.Name:
            index.setdefault(node.value, []).append(node)
    return index


def _passes_around(ctx: FileContext, name: cst.Name) -> bool:
    """`name` refers to a function without calling it (`mp.spawn(worker, ...)`,
    `callback=self.save`): not what a call calls (`save(...)`, the attribute of
    `torch.save(...)`), not the name a definition gives (another class's method of the
    same name), not the keyword of an argument."""
    ref: cst.CSTNode = name
    parent = ctx.parent(name)
    if isinstance(parent, (cst.FunctionDef, cst.ClassDef)) and parent.name is name:
        return False
    if type(parent) is cst.Arg and parent.keyword is name:
        return False
    if type(parent) is cst.Attribute and parent.attr is name:
        ref, parent = parent, ctx.parent(parent)
    return not (type(parent) is cst.Call and parent.func is ref)
