"""Where each process sees one GPU only, so that `cuda:0`, the default device and a tensor
restored onto the GPU it was saved from are that process's own: code that asserts it
(`assert torch.cuda.device_count() == 1`, in this file or in a setup helper of the project
that it calls), and code that runs only under that test (`if torch.cuda.device_count() ==
1:`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ddplint.domain.apis import DEVICE_COUNT
from ddplint.domain.project_view import project_of
from ddplint.domain.ranks import int_literal

if TYPE_CHECKING:
    from ddplint.context import FileContext


def one_gpu_test(ctx: FileContext, test: cst.BaseExpression) -> bool:
    """`test` holds where the process sees one GPU at most: `torch.cuda.device_count()`
    compared `== 1`, `<= 1` or `< 2`."""
    if not (type(test) is cst.Comparison and len(test.comparisons) == 1):
        return False
    left, target = test.left, test.comparisons[0]
    if not (type(left) is cst.Call and ctx.call_name(left) in DEVICE_COUNT):
        return False
    bound = int_literal(target.comparator)
    operator = target.operator
    return (isinstance(operator, (cst.Equal, cst.LessThanEqual)) and bound == 1) or (
        type(operator) is cst.LessThan and bound == 2
    )


def asserts_one_gpu(ctx: FileContext, call: cst.Call) -> bool:
    """`call` is the `device_count()` of `assert torch.cuda.device_count() == 1`: past
    that statement the process sees one GPU (each process of a job started with its own
    `CUDA_VISIBLE_DEVICES`), or it stops there."""
    comparison = ctx.parent(call)
    holder = ctx.parent(comparison) if type(comparison) is cst.Comparison else None
    return (
        type(holder) is cst.Assert and holder.test is comparison and one_gpu_test(ctx, comparison)
    )


def under_one_gpu(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs only where the process sees one GPU (`if torch.cuda.device_count() ==
    1:`, `<= 1`, `< 2`)."""
    return any(
        condition.holds and one_gpu_test(ctx, condition.test)
        for condition in ctx.flow.conditions(node)
    )


def sees_one_gpu(ctx: FileContext) -> bool:
    """Every process running this file's job sees one GPU: the file asserts it outside any
    condition, or calls a helper of another project module that does, directly or through
    others (`Project.helper_asserts_one_gpu`). Asked only where a finding depends on it."""
    counts = ctx.calls_to(*DEVICE_COUNT)
    if any(asserts_one_gpu(ctx, call) and not ctx.flow.conditions(call) for call in counts):
        return True  # asserted on every path through its function
    project = project_of(ctx)
    return project is not None and any(
        project.helper_asserts_one_gpu(ctx, call) for call in ctx.calls
    )
