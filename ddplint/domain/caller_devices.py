"""Uses of the current CUDA device that belong to the callers: a library helper of a
module that starts the process group elsewhere in the file (`def dist_init(): ...`) but is
itself never run by that file, only called from other project modules, some of which set
the device (`setup_dist_env()` calling `torch.cuda.set_device(local_rank)`). Such a helper
runs on whatever device its callers chose; whether they chose one is their file's question."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ddplint.domain.project_view import project_of

if TYPE_CHECKING:
    from ddplint.context import FileContext


def device_of_callers(ctx: FileContext, use: cst.CSTNode) -> bool:
    """`use` is in a module-level function this file never names outside its own body
    (no call, no callback) that project modules call, and a module calling into this one sets the
    process's device (`Project.device_callers`)."""
    project = project_of(ctx)
    func = ctx.enclosing_function(use)
    if project is None or func is None or ctx.parent(func) is not ctx.module:
        return False
    name = func.name.value
    named_here = any(
        type(node) is cst.Name
        and node.value == name
        and node is not func.name
        and func not in ctx.ancestors(node)  # its own attributes: `helper._buffer`
        for node in ctx.nodes_of(cst.Name)
    )
    return not named_here and name in project.device_callers(ctx.path)
