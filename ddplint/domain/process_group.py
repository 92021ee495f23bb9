"""Whether code uses the process group itself: torch.distributed, DDP or DistributedSampler,
or asks for its rank, the world size or whether it is the main process (`get_rank()`,
`os.environ["LOCAL_RANK"]`, `is_main_process()`). Asking whether a group exists at all
(`dist.is_initialized()`) is not a use: code written for one process asks it too; nor is
distributed checkpointing (`torch.distributed.checkpoint`: `dcp.load` and `dcp.save` run in
one process when no group exists, as in an offline format conversion).
`ddplint.project` extends this to code that calls such code, or that such code calls."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from ddplint.domain.apis import (
    MAIN_PROCESS_NAME,
    RANK_ENV,
    RANK_FUNCTION,
    WORLD_SIZE_ENV,
    WORLD_SIZE_FUNCTION,
)
from ddplint.domain.ranks import last_name

if TYPE_CHECKING:
    from ddplint.context import FileContext

DISTRIBUTED_APIS = (
    "torch.distributed",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.utils.data.DistributedSampler",
)
# torch.distributed functions that only say whether (or how) a group can exist.
_MODE_QUERIES = frozenset(
    {
        "is_available",
        "is_initialized",
        "is_nccl_available",
        "is_gloo_available",
        "is_mpi_available",
        "is_torchelastic_launched",
    }
)
# torch.distributed namespaces usable without a process group.
_GROUP_FREE = ("torch.distributed.checkpoint",)
_PROCESS_ENV = RANK_ENV | WORLD_SIZE_ENV
# Concrete node classes, tested by `type(node) in ...`: LibCST's `isinstance` on its
# ABC-based classes costs ten times as much where it fails, as it does for most nodes.
_IMPORT_PARTS = frozenset({cst.ImportAlias, cst.AsName, cst.ImportFrom})


def is_process_group_api(name: str) -> bool:
    """`name` (qualified) is a torch.distributed, DDP or DistributedSampler name whose use
    needs a process group: not a query whether a group can exist (`is_initialized`,
    `is_available`), not distributed checkpointing."""
    if not name.startswith(DISTRIBUTED_APIS) or name.startswith(_GROUP_FREE):
        return False
    return name.rpartition(".")[2] not in _MODE_QUERIES


def uses_process_group(ctx: FileContext) -> bool:
    """The module uses a name it imports that needs the process group
    (`is_process_group_api`: `torch.distributed` itself counts unless every use of it is a
    mode query or checkpointing), or one of its calls or environment reads uses the
    process group (`uses_process_group_at`). An import nothing reads is no use: a
    single-GPU baseline that imports DDP and never wraps a model is not distributed."""
    return any(True for _ in process_group_uses(ctx))


def calls_process_group(ctx: FileContext) -> bool:
    """`uses_process_group` but for reading a rank from the environment: the module calls
    the process group's API (`SLURM_PROCID` read as a seed by each task of a job array
    joins no group)."""
    return any(True for _ in _api_uses(ctx))


def process_group_uses(ctx: FileContext) -> Iterator[cst.CSTNode]:
    """The nodes by which the module uses the process group (`uses_process_group`), in
    the order of the checks: where it may use it lazily, first ones first."""
    yield from _api_uses(ctx)
    resolver = ctx.resolver
    for node in (*ctx.nodes_of(cst.Subscript), *ctx.calls):
        if (
            isinstance(node, cst.Subscript | cst.Call)
            and resolver.direct_environ_key(node, node) in _PROCESS_ENV
        ):
            yield node


def _api_uses(ctx: FileContext) -> Iterator[cst.CSTNode]:
    """The uses of the process group's API (`calls_process_group`): a name under
    `torch.distributed` that needs the group, an imported name that does, read, and calls
    that do."""
    imports = ctx.imports
    if "torch.distributed" in imports.modules:
        yield from _namespace_api_nodes(ctx)
    needing = {
        local
        for local, full in imports.bindings.items()
        if is_process_group_api(full) and full != "torch.distributed"
    }
    if needing and needing & ctx.memo(_read_names):
        yield from (
            node
            for node in ctx.nodes_of(cst.Name)
            if type(node) is cst.Name
            and node.value in needing
            and type(ctx.parent(node)) not in _IMPORT_PARTS
        )
    environ = ctx.resolver.direct_environ_key
    yield from (
        call
        for call in ctx.calls
        if uses_process_group_at(ctx, call)
        and not asks_given_group(ctx, call)
        and not asks_if_initialized(ctx, call)
        and environ(call, call) not in _PROCESS_ENV
    )


def imports_unused_process_group_api(ctx: FileContext) -> bool:
    """The module imports a name that needs the process group (`import torch.distributed
    as dist`, DDP, DistributedSampler) and never reads it: a template's leftover, or code
    meant for a launch out of sight. Whether it runs in a process group is unknown."""
    read = ctx.memo(_read_names)
    imports = ctx.imports
    if any(
        is_process_group_api(full) and local not in read for local, full in imports.bindings.items()
    ):
        return True
    return "torch.distributed" in imports.modules and next(_namespace_uses(ctx), None) is None


def may_use_process_group(ctx: FileContext) -> str | None:
    """Why the module may run in a process group though `uses_process_group` does not
    prove it, or None: it imports a process-group name nothing reads
    (`imports_unused_process_group_api`), it asks the rank of a group only a caller may
    pass (`asks_given_group`), or only where a group was started (`asks_if_initialized`)."""
    if imports_unused_process_group_api(ctx):
        return "the file imports torch.distributed or DDP names it never uses"
    if any(asks_given_group(ctx, call) for call in ctx.calls):
        return "the file asks the rank of a process group only when a caller passes one"
    if any(asks_if_initialized(ctx, call) for call in ctx.calls):
        return "the file asks the rank only where a process group has been started"
    return None


# torch.distributed's questions about this process's place in the group.
_PLACE_QUERIES = frozenset({"torch.distributed.get_rank", "torch.distributed.get_world_size"})


def asks_if_initialized(ctx: FileContext, call: cst.Call) -> bool:
    """`call` asks torch.distributed for the rank or world size only where a process
    group exists (`dist.get_rank() if dist.is_initialized() else 0`, or under `if
    dist.is_initialized():`): a helper written for one process and for a job alike."""
    if ctx.call_name(call) not in _PLACE_QUERIES:
        return False
    for condition in ctx.flow.conditions(call):
        for term, value in condition.terms():
            if (
                value
                and type(term) is cst.Call
                and ((ctx.call_name(term) or "").rpartition(".")[2] == "is_initialized")
            ):
                return True
    return False


def asks_given_group(ctx: FileContext, call: cst.Call) -> bool:
    """`call` asks a group object for its rank or size only when one is given:
    `0 if process_group is None else process_group.rank()` in a layer written for tensor
    parallelism, which runs in one process whenever no caller passes a group."""
    func = call.func
    if type(func) is not cst.Attribute or not asks_rank(ctx, call):
        return False
    group = ctx.code(func.value)
    child: cst.CSTNode = call
    for parent in ctx.ancestors(call):
        if isinstance(parent, (cst.If, cst.IfExp)):
            when_none = _tests_none(ctx, parent.test, group)
            if when_none is not None and child is not parent.test:
                return (child is parent.body) is not when_none
        if isinstance(parent, (cst.FunctionDef, cst.Module)):
            return False
        child = parent
    return False


def _tests_none(ctx: FileContext, test: cst.BaseExpression, name: str) -> bool | None:
    """True for `name is None`, False for `name is not None` (or `name` alone), else None."""
    if ctx.code(test) == name:
        return False
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    if ctx.code(test.left) != name or not (
        type(target.comparator) is cst.Name and target.comparator.value == "None"
    ):
        return None
    if type(target.operator) is cst.Is:
        return True
    return False if type(target.operator) is cst.IsNot else None


def uses_process_group_at(ctx: FileContext, call: cst.Call) -> bool:
    """`call` uses the process group: a torch.distributed, DDP or DistributedSampler call
    other than a query whether a group can exist, a call asking for the rank, the world
    size or whether this is the main process, or an environment read of one of them."""
    name = ctx.call_name(call)
    if name is not None and name.startswith(DISTRIBUTED_APIS):
        return is_process_group_api(name)
    return asks_rank(ctx, call) or ctx.resolver.direct_environ_key(call, call) in _PROCESS_ENV


def asks_rank(ctx: FileContext, call: cst.Call) -> bool:
    """`call` asks the rank, the world size or whether this is the main process through
    a function of its own name (`get_rank()`, `idist.get_world_size()`,
    `is_main_process()`), not torch.distributed's: such helpers usually answer without a
    process group too (rank 0 of a world of one)."""
    name = ctx.call_name(call)
    if name is not None and name.startswith(DISTRIBUTED_APIS):
        return False
    function = last_name(call.func)
    return function is not None and bool(
        (RANK_FUNCTION.match(function) and not call.args)
        or WORLD_SIZE_FUNCTION.match(function)
        or (MAIN_PROCESS_NAME.match(function) and "_" in function)  # not `self.main(x)`
    )


def _namespace_api_nodes(ctx: FileContext) -> Iterator[cst.CSTNode]:
    """The chains under `torch.distributed` the module writes that need the process group
    (`dist.all_reduce`, `dist.ReduceOp`, `dist` passed on); not mode queries or
    checkpointing (`dist.is_initialized()`, `dist.checkpoint.load`)."""
    return (
        node
        for name, node in _namespace_nodes(ctx)
        if (name == "torch.distributed" or is_process_group_api(name))
        and not (type(call := ctx.parent(node)) is cst.Call and asks_if_initialized(ctx, call))
    )


def _namespace_uses(ctx: FileContext) -> Iterator[str]:
    """The qualified names under `torch.distributed` the module writes outside its import
    statements, each chain judged whole (`dist.all_reduce`, not its head `dist`)."""
    return (name for name, _ in _namespace_nodes(ctx))


def _namespace_nodes(ctx: FileContext) -> Iterator[tuple[str, cst.CSTNode]]:
    """`_namespace_uses`, each with the chain that writes it."""
    for node in ctx.nodes_of(cst.Attribute, cst.Name):
        parent = ctx.parent(node)
        if type(parent) is cst.Attribute and parent.value is node:
            continue  # the whole chain is judged, not its head
        if type(parent) in _IMPORT_PARTS:
            continue
        name = ctx.qualname(node)  # type: ignore[arg-type]
        if name is not None and name.startswith("torch.distributed"):
            yield name, node


def _read_names(ctx: FileContext) -> frozenset[str]:
    """The plain names the module reads outside its import statements (asked through
    `ctx.memo`: the proof and the "may use" side both read them)."""
    return frozenset(
        node.value
        for node in ctx.nodes_of(cst.Name)
        if type(node) is cst.Name and type(ctx.parent(node)) not in _IMPORT_PARTS
    )
