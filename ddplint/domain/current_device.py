"""Whether a file relies on the current CUDA device, the one `torch.cuda.set_device`
chooses: a placement that names no index (`.cuda()`, `"cuda"`, `torch.device("cuda")`),
or a process group that may use NCCL (its communicator works on the current device). A
file that places everything by an explicit index (`.to(local_rank)`, `device_ids=
[local_rank]`) over gloo leaves the current device to what other modules do."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import argument, string_value

_INIT = "torch.distributed.init_process_group"


def reads_current_device(ctx: FileContext) -> bool:
    """Some code of the file places a value on the current device, or starts a process
    group whose backend may be NCCL (named, left to its default, or computed)."""
    for node in ctx.nodes_of(cst.SimpleString):
        if string_value(node) == "cuda":  # type: ignore[arg-type]
            return True
    for call in ctx.calls:
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "cuda" and not call.args:
            return True
        name = ctx.call_name(call)
        if name == "torch.cuda.current_device":
            return True
        if name == _INIT:
            backend = string_value(argument(call, 0, "backend"))
            if backend is None or "nccl" in backend.lower():
                return True
    return False
