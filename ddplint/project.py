"""What each module of a run offers the others: helpers that set the epoch, issue
collectives or save checkpoints. Lets `main.py` see what `utils.save_on_master` does."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from ddplint.names import dotted

if TYPE_CHECKING:
    from ddplint.context import FileContext


@dataclass(frozen=True)
class ModuleSummary:
    """Facts one module exports, by function name."""

    path: str
    distributed: bool
    collective_functions: frozenset[str]
    set_epoch_params: tuple[tuple[str, tuple[int, ...]], ...]
    saving_functions: frozenset[str]
    rank_guarded_savers: frozenset[str]

    def set_epoch_positions(self, function: str) -> tuple[int, ...]:
        return dict(self.set_epoch_params).get(function, ())


def set_epoch_parameters(ctx: FileContext, func: cst.FunctionDef) -> tuple[int, ...]:
    """Positions of the parameters of `func` on which it calls `set_epoch` (the
    parameter itself or its `.sampler`/`.batch_sampler`)."""
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    offset = 1 if params and params[0] in ("self", "cls") else 0
    positions: set[int] = set()
    for call in ctx.calls_within(func):
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "set_epoch"):
            continue
        receiver = dotted(call.func.value) or ""
        root = receiver.split(".")[0]
        if root in params:
            positions.add(params.index(root) - offset)
    return tuple(sorted(p for p in positions if p >= 0))


def summarize(ctx: FileContext) -> ModuleSummary:
    """The summary of one parsed module (computed without other modules)."""
    facts = ctx.facts
    set_epoch: list[tuple[str, tuple[int, ...]]] = []
    savers: set[str] = set()
    guarded: set[str] = set()
    for name, defs in ctx.functions.items():
        positions = tuple(sorted({p for f in defs for p in set_epoch_parameters(ctx, f)}))
        if positions:
            set_epoch.append((name, positions))
        saves = [c for f in defs for c in ctx.calls_within(f) if ctx.call_name(c) == "torch.save"]
        if saves:
            savers.add(name)
            if all(facts.rank_guard(c) is not None for c in saves):
                guarded.add(name)
    return ModuleSummary(
        path=os.path.abspath(ctx.path),
        distributed=facts.is_distributed,
        collective_functions=frozenset(facts.collective_functions),
        set_epoch_params=tuple(sorted(set_epoch)),
        saving_functions=frozenset(savers),
        rank_guarded_savers=frozenset(guarded),
    )


class Project:
    """The modules of one run (their paths, and once known their summaries), found by
    import name."""

    def __init__(self, paths: Iterable[str], summaries: Iterable[ModuleSummary] = ()) -> None:
        self.paths = frozenset(os.path.abspath(p) for p in paths)
        self.summaries = {s.path: s for s in summaries}

    def dependencies(self, ctx: FileContext) -> set[str]:
        """Paths of the run's modules that `ctx` imports from."""
        found = set()
        for full in ctx.imports.bindings.values():
            for name in {full.rpartition(".")[0], full} - {""}:
                path = self._module_path(ctx.path, name)
                if path is not None and path != os.path.abspath(ctx.path):
                    found.add(path)
        return found

    def _module_file(self, importer: str, module: str) -> ModuleSummary | None:
        path = self._module_path(importer, module)
        return self.summaries.get(path) if path is not None else None

    def _module_path(self, importer: str, module: str) -> str | None:
        level = len(module) - len(module.lstrip("."))
        parts = [p for p in module.lstrip(".").split(".") if p]
        here = os.path.dirname(os.path.abspath(importer))
        if level:
            bases = [here]
            for _ in range(level - 1):
                bases = [os.path.dirname(bases[0])]
        else:
            bases = []
            current = here
            while True:
                bases.append(current)
                parent = os.path.dirname(current)
                if parent == current:
                    break
                current = parent
        for base in bases:
            stem = os.path.join(base, *parts)
            for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
                if candidate in self.paths:
                    return candidate
        return None

    def resolve(self, ctx: FileContext, call: cst.Call) -> tuple[ModuleSummary, str] | None:
        """The project module and function a call refers to, if it is one of ours."""
        qualified = ctx.call_name(call)
        if qualified is None or "." not in qualified.lstrip("."):
            return None
        module, _, function = qualified.rpartition(".")
        if module.startswith("torch"):
            return None
        summary = self._module_file(ctx.path, module)
        if summary is None or os.path.abspath(ctx.path) == summary.path:
            return None
        return summary, function

    def helper_issues_collective(self, ctx: FileContext, call: cst.Call) -> bool:
        found = self.resolve(ctx, call)
        return found is not None and found[1] in found[0].collective_functions

    def helper_set_epoch_positions(self, ctx: FileContext, call: cst.Call) -> tuple[int, ...]:
        found = self.resolve(ctx, call)
        return found[0].set_epoch_positions(found[1]) if found else ()

    def helper_saves(self, ctx: FileContext, call: cst.Call) -> str | None:
        """ "guarded" or "unguarded" for a project helper that saves, else None."""
        found = self.resolve(ctx, call)
        if found is None or found[1] not in found[0].saving_functions:
            return None
        return "guarded" if found[1] in found[0].rank_guarded_savers else "unguarded"

    def imports_distributed_helper(self, ctx: FileContext) -> bool:
        """Whether the file imports from a project module that holds distributed code."""
        return any(
            self.summaries[path].distributed
            for path in self.dependencies(ctx)
            if path in self.summaries
        )
