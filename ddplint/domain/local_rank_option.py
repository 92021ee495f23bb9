"""The `--local_rank` command-line option as a script declares it, and the one launcher
that passes it by convention: what DDP022 (deprecated launch) and DDP040 (the parser
rejects the launch) both read."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import keyword


def is_required(call: cst.Call) -> bool:
    """`add_argument(..., required=True)`."""
    required = keyword(call, "required")
    return (
        required is not None
        and isinstance(required.value, cst.Name)
        and required.value.value == "True"
    )


def imports_deepspeed(ctx: FileContext) -> bool:
    """The file imports DeepSpeed, whose launcher passes `--local_rank=N` itself."""
    bound = ctx.imports.bindings.values()
    return any(v == "deepspeed" or v.startswith("deepspeed.") for v in bound)
