"""Defects inside one run that no single process would show, and runs whose values say nothing."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from .merge import Run, Step


@dataclass(frozen=True)
class Defect:
    step: int
    headline: str
    lines: list[str]
    kind: str  # "unsharded", "repeated order"


def name(run: Run) -> str:
    """How sentences name a run: "the run on 2 processes", "run out/ddp (2 processes)"."""
    return (
        f"the run on {run.label}"
        if run.label.endswith(("process", "processes"))
        else (f"run {run.label}")
    )


def loader_of(run: Run, step: Step) -> str | None:
    """ "the DataLoader at train.py:12 (DistributedSampler)" for the step's first loader."""
    loader = run.loader(step.loaders[0][0]) if step.loaders else None
    return None if loader is None else f"the DataLoader at {loader.site} ({loader.sampler})"


def _same_on_every_rank(run: Run) -> Defect | None:
    for step in run.steps:
        if not step.same_on_every_rank():
            continue
        count = (
            len(step.per_rank[0] or ()) if step.by_index() else len(step.per_rank_digests[0] or ())
        )
        loader = loader_of(run, step)
        what = "samples" if step.by_index() else "input rows (by content)"
        source = (
            f"{loader} gives each of the {run.world_size} ranks the same batches"
            if loader is not None
            else f"each of the {run.world_size} ranks fed its model the same rows"
        )
        return Defect(
            step.index,
            f"not equivalent: every rank of {name(run)} consumed the same {count} {what} "
            f"in step {step.index}: the data is not sharded",
            [
                f"{source}: a step trains on {run.world_size} copies of each sample, and the "
                f"global batch holds 1/{run.world_size} as many distinct samples",
                "use a DistributedSampler (DataLoader(..., sampler=DistributedSampler(data)))"
                " and call sampler.set_epoch(epoch) every epoch"
                if loader is not None
                else "give each rank its own part of the global batch (a batch drawn at random "
                "with one seed on every rank is the same batch on every rank)",
            ],
            "unsharded",
        )
    return None


def _first_steps(run: Run, loader: int) -> dict[int, Step]:
    """The first step that trained on each iteration (epoch) of ``loader``; iterations no
    backward() followed (a peek, an evaluation pass) have none."""
    found: dict[int, Step] = {}
    for step in run.steps:
        for lid, iteration in step.loaders:
            if lid == loader and iteration not in found:
                found[iteration] = step
    return found


def _repeated_order(run: Run) -> Defect | None:
    for loader in run.loaders:
        if not loader.shuffle:
            continue
        firsts = _first_steps(run, loader.id)
        epochs = {e.iteration: e for e in run.epochs if e.loader == loader.id}
        trained = sorted(firsts)
        for before, iteration in itertools.pairwise(trained):
            previous, step = firsts[before], firsts[iteration]
            if step.per_rank[0] is None or step.per_rank != previous.per_rank:
                continue
            lines = [
                f"the sample order of an epoch of {loader.site} (step {step.index}) starts "
                f"exactly as the previous one (step {previous.index}), though its "
                f"{loader.sampler} shuffles"
            ]
            now, then = epochs.get(iteration), epochs.get(before)
            if loader.sampler == "DistributedSampler":
                if now is not None and then is not None and now.sampler_epoch == then.sampler_epoch:
                    lines.append(
                        f"its epoch stayed {now.sampler_epoch}: sampler.set_epoch(epoch) is never "
                        "called, so every epoch repeats one order"
                    )
                lines.append("call sampler.set_epoch(epoch) at the start of every epoch")
            missing = ": set_epoch missing" if loader.sampler == "DistributedSampler" else ""
            headline = (
                f"not equivalent: step {step.index} of {name(run)} repeats the previous "
                f"epoch's sample order{missing}"
            )
            return Defect(step.index, headline, lines, "repeated order")
    return None


def defects(run: Run) -> list[Defect]:
    """Defects visible inside ``run`` alone, whatever the other run does."""
    found = [_same_on_every_rank(run), _repeated_order(run)]
    return [d for d in found if d is not None]


def _constant(values: list[float | None]) -> float | None:
    """The value every step has, when all are known and equal (one step: only 0 counts)."""
    if not values or any(v is None for v in values):
        return None
    first = values[0]
    if any(v != first for v in values) or (len(values) < 2 and first != 0):
        return None
    return first


def vacuous(a: Run, b: Run) -> list[str]:
    """Why agreeing values would say nothing: the same loss at every step, or no gradient at
    all, in both runs. Empty when the comparison means something."""
    reasons = []
    losses = [_constant([s.loss for s in run.steps]) for run in (a, b)]
    if losses[0] is not None and losses[1] is not None:
        shown = (
            f"{losses[0]:g}"
            if losses[0] == losses[1]
            else f"{losses[0]:g} in one run and {losses[1]:g} in the other"
        )
        reasons.append(f"the loss is {shown} at every step")
    norms = [_constant([s.grad_norm for s in run.steps if not s.skipped]) for run in (a, b)]
    if norms[0] == 0 and norms[1] == 0:
        reasons.append("the gradients are 0 at every step")
    return reasons
