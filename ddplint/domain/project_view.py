"""What a file's domain questions ask of the other modules of its project.

`ddplint.project.Project` answers them; the domain names only this protocol, so that it does
not import the project, which builds on the domain. The context holds the project untyped
(it asks nothing of it); `project_of` gives it this type. Each question takes the file's
`FileContext`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, cast

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.checkpoint_formats import SavedFormat
from ddplint.domain.rank_kinds import RankKind
from ddplint.domain.ranks import Side
from ddplint.domain.runner_kinds import Runners
from ddplint.domain.written_files import HelperLoad, HelperWrite


class TextTest(Protocol):
    """A test of a module's text that says, without a parse, that it cannot hold a fact:
    `search(text)` is not None when it may; `pattern` names the test. A compiled pattern
    is one (`ddplint.project.text_tests`)."""

    @property
    def pattern(self) -> str: ...

    def search(self, text: str, /) -> object | None: ...


class CalledFunction(Protocol):
    """What the domain reads of a project function's summary."""

    @property
    def spawn_factors(self) -> tuple[tuple[str, int], ...]: ...

    @property
    def sampler_shuffle(self) -> str: ...


class ResolvedModule(Protocol):
    """What the domain reads of the summary of the module a call resolves to."""

    @property
    def classes(self) -> tuple[str, ...]: ...

    @property
    def drawing_classes(self) -> tuple[str, ...]: ...

    @property
    def reseeds_workers(self) -> bool: ...


class ProjectView(Protocol):
    """The project look-ups of the domain and the rules."""

    def holds_world_size(self, ctx: FileContext, expr: cst.BaseExpression) -> bool: ...

    def saved_formats(self, path: str) -> tuple[tuple[str, SavedFormat], ...]: ...

    def helper_builds_batchnorm(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def helper_runs_backward(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def helper_forwarded_params(
        self, ctx: FileContext, call: cst.Call
    ) -> tuple[tuple[str, int], ...]: ...

    def passes_elsewhere(
        self,
        ctx: FileContext,
        func: cst.FunctionDef,
        name: str,
        holds: Callable[[FileContext, cst.BaseExpression, cst.Call], bool],
    ) -> bool: ...

    def every_call_elsewhere(
        self,
        ctx: FileContext,
        func: cst.FunctionDef,
        holds: Callable[[FileContext, cst.Call], bool],
    ) -> bool: ...

    def arguments_elsewhere(
        self, ctx: FileContext, func: cst.FunctionDef, name: str
    ) -> list[cst.BaseExpression | None] | None: ...

    def returned_rank_test(self, ctx: FileContext, call: cst.Call) -> Side | None: ...

    def returned_rank(self, ctx: FileContext, call: cst.Call) -> RankKind | None: ...

    def main_only_decorator(self, ctx: FileContext, expr: cst.BaseExpression) -> bool: ...

    def switch_value(self, ctx: FileContext, term: cst.BaseExpression) -> bool | None: ...

    def switch_named(self, path: str, name: str) -> bool | None: ...

    def rank_flag(self, path: str, name: str) -> Side | None: ...

    def rank_flag_traced(self, path: str, name: str) -> bool: ...

    def helper_issues_collective(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def helper_combines(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def helper_surely_issues_collective(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def helper_starts_processes(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def helper_starts_one_rank_group(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def helper_reads_local_rank(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def helper_sets_device(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def helper_returns_device_module(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def helper_downloads(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def helper_set_epoch_positions(self, ctx: FileContext, call: cst.Call) -> tuple[int, ...]: ...

    def helper_saves(self, ctx: FileContext, call: cst.Call) -> str | None: ...

    def helper_writes(self, ctx: FileContext, call: cst.Call) -> tuple[HelperWrite, ...]: ...

    def helper_loads(self, ctx: FileContext, call: cst.Call) -> tuple[HelperLoad, ...]: ...

    def helper_returned_loader(self, ctx: FileContext, call: cst.Call) -> list[int | None]: ...

    def helper_returns_ddp(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def resolve(self, ctx: FileContext, call: cst.Call) -> tuple[ResolvedModule, str] | None: ...

    def defined_at(self, ctx: FileContext, call: cst.Call) -> tuple[str, str] | None: ...

    def function_called(
        self, ctx: FileContext, call: cst.Call, text: TextTest | None = None
    ) -> CalledFunction | None: ...

    def strips_prefix_anywhere(self, path: str) -> bool: ...

    def module_text(self, importer: str, qualified: str) -> str | None: ...

    def loaded_elsewhere(self, path: str) -> bool: ...

    def runs_distributed(self, ctx: FileContext) -> bool: ...

    def distributed_callers_call(self, ctx: FileContext, func: cst.FunctionDef) -> bool: ...

    def device_callers(self, path: str) -> tuple[str, ...]: ...

    def launched_per_gpu_elsewhere(self, path: str) -> bool: ...

    def callers_run(self, ctx: FileContext, func: cst.FunctionDef, depth: int) -> Runners | None:
        """Who runs `func` where the other project modules call it
        (`ddplint.domain.runners`); None when none is seen to."""
        ...

    def closure(self, path: str) -> list[str]: ...

    def text_closure(self, path: str) -> set[str]: ...

    def helper_returned_shard(self, ctx: FileContext, call: cst.Call) -> list[int | None]: ...

    def helper_seeds_alike(self, ctx: FileContext, call: cst.Call) -> bool: ...

    def pipeline_draws(self, path: str) -> tuple[bool, bool]: ...


def project_of(ctx: FileContext) -> ProjectView | None:
    """The project `ctx`'s file is checked in, None when it is checked alone (the checker
    and the runner give a `ddplint.project.Project`)."""
    return cast("ProjectView | None", ctx.project)
