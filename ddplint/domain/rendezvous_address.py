"""Where a file's process group meets: the address its `init_process_group` reads, and
whether that address is this machine (`MASTER_ADDR` pinned to `localhost`, or
`init_method="tcp://127.0.0.1:29500"`), so that every process of the job runs here."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import string_value
from ddplint.domain.environment_writes import constant_writes
from ddplint.engine.resolve import argument

ADDRESS = "MASTER_ADDR"
LOOPBACK = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "::1"})
_INIT = "torch.distributed.init_process_group"
_INIT_METHOD = 1


def address_writes(ctx: FileContext) -> int:
    """How many statements write MASTER_ADDR into an environment, whatever the value."""
    return sum(
        1
        for node in ctx.nodes_of(cst.Assign)
        if type(node) is cst.Assign
        and len(node.targets) == 1
        and ADDRESS in ctx.code(node.targets[0].target)
    )


def meets_through_environment(ctx: FileContext) -> bool:
    """An `init_process_group` of the file reads the address from the environment
    (`env://`, the default)."""
    return any(_init_method(ctx, init) == "env://" for init in ctx.calls_to(_INIT))


def meets_on_this_machine(ctx: FileContext) -> bool:
    """Every `init_process_group` of the file (one at least) meets at this machine: by
    `tcp://` on a loopback address, or through the environment while the file writes
    MASTER_ADDR only as a loopback address. The job is then one node's processes."""
    inits = list(ctx.calls_to(_INIT))
    if not inits:
        return False
    writes = constant_writes(ctx, ADDRESS)
    pinned = (
        bool(writes)
        and len(writes) == address_writes(ctx)
        and all(v in LOOPBACK for w in writes for v in w.literals)
    )
    for init in inits:
        method = _init_method(ctx, init)
        if method == "env://":
            if not pinned:
                return False
        elif method is None or _tcp_host(method) not in LOOPBACK:
            return False
    return True


def _init_method(ctx: FileContext, init: cst.Call) -> str | None:
    """The `init_method` of `init` as written (`env://` when left out), else None."""
    method = argument(init, _INIT_METHOD, "init_method")
    if method is None:
        return "env://"
    return string_value(method)


def _tcp_host(method: str) -> str | None:
    """`localhost` of `tcp://localhost:12355`."""
    if not method.startswith("tcp://"):
        return None
    host = method[len("tcp://") :].rpartition(":")[0]
    return host.strip("[]") or None
