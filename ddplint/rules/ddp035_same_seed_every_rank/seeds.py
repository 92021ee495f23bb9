"""Where a script seeds torch's generator: `torch.manual_seed`, library helpers known to
call it (`transformers.set_seed`, Lightning's `seed_everything`), project helpers of other
modules whose body does (`utils.set_seed(args.seed)`, from the project's summaries), and
helpers of unknown modules whose name says they seed: those are a guess, resting on a
name."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.project_view import project_of
from ddplint.domain.random_draws import (
    LIBRARY_SEEDS,
    is_seeding_name,
    runs_only_without_cuda,
    seeds_torch,
)

# Frameworks whose seeding functions do not touch torch's generator.
_OTHER_FRAMEWORKS = ("numpy.", "random.", "tensorflow.", "jax.", "paddle.", "mindspore.")


@dataclass(frozen=True)
class SeedCall:
    """A call that seeds torch; `proven` False when only its name says so."""

    call: cst.Call
    proven: bool


def seed_calls(ctx: FileContext) -> list[SeedCall]:
    """The calls of the file that seed torch's generator (see the module docstring)."""
    project = project_of(ctx)
    found = []
    for call in ctx.calls:
        # `helper_seeds_alike` reads only modules whose text can seed; the unfiltered
        # look-up runs only for a call named like a seeding helper.
        if seeds_torch(ctx, call) or (
            project is not None and project.helper_seeds_alike(ctx, call)
        ):
            if not runs_only_without_cuda(ctx, call):  # a fallback a GPU job never runs
                found.append(SeedCall(call, True))
        elif not _named_helper(ctx, call, ctx.call_name(call)):
            continue
        elif (project is None or project.resolve(ctx, call) is None) and not (
            runs_only_without_cuda(ctx, call)
        ):
            found.append(SeedCall(call, False))
        # else: a project helper whose body was read: it seeds per rank, or not torch
    return found


def _named_helper(ctx: FileContext, call: cst.Call, name: str | None) -> bool:
    """A function of another module (or an unknown library) named like a seeding helper;
    the file's own helpers are followed instead."""
    func = call.func
    last = func.attr.value if type(func) is cst.Attribute else None
    if type(func) is cst.Name:
        last = func.value
    if last is None or not is_seeding_name(last) or ctx.resolver.callees(call):
        return False
    if type(func) is cst.Attribute and name is None:
        return False  # a method of some object (`env.seed`, `rng.set_seed`)
    if name in LIBRARY_SEEDS:
        return False  # read by `seeds_torch`: per device, not the same on every rank
    return name is None or not name.startswith(_OTHER_FRAMEWORKS)
