"""What the evidence says: defects inside one run, and the cause of a divergence between two."""

from __future__ import annotations

from dataclasses import dataclass

from .merge import Run, Step

FACTOR_TOLERANCE = 0.05  # how close a ratio must be to the world-size ratio to be called that


def sci(value: float) -> str:
    """One significant digit, ``3e-6`` rather than ``3e-06``."""
    if value == 0:
        return "0"
    return f"{value:.1g}".replace("e-0", "e-").replace("e+0", "e+")


@dataclass(frozen=True)
class Defect:
    step: int
    headline: str
    lines: list[str]


def _name(run: Run) -> str:
    """How sentences name a run: "the run on 2 processes", "run out/ddp (2 processes)"."""
    return (
        f"the run on {run.label}"
        if run.label.endswith(("process", "processes"))
        else (f"run {run.label}")
    )


def _loader_of(run: Run, step: Step) -> str:
    if not step.loaders:
        return "its DataLoader"
    loader = run.loader(step.loaders[0][0])
    if loader is None:
        return "its DataLoader"
    return f"the DataLoader at {loader.site} ({loader.sampler})"


def _same_on_every_rank(run: Run) -> Defect | None:
    for step in run.steps:
        if step.same_on_every_rank():
            count = len(step.per_rank[0] or ())
            return Defect(
                step.index,
                f"not equivalent: every rank of {_name(run)} consumed the same {count} samples "
                f"in step {step.index}: the data is not sharded",
                [
                    f"{_loader_of(run, step)} gives each of the {run.world_size} ranks the same "
                    f"batches: a step trains on {run.world_size} copies of each sample, and the "
                    "global batch holds 1/{} as many distinct samples".format(run.world_size),
                    "use a DistributedSampler (DataLoader(..., sampler=DistributedSampler(data)))"
                    " and call sampler.set_epoch(epoch) every epoch",
                ],
            )
    return None


def _first_steps(run: Run, loader: int) -> dict[int, Step]:
    """The first step that consumed each iteration (epoch) of ``loader``."""
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
        for iteration in sorted(firsts):
            previous = firsts.get(iteration - 1)
            step = firsts[iteration]
            if previous is None or step.per_rank[0] is None:
                continue
            if step.per_rank != previous.per_rank:
                continue
            lines = [
                f"the sample order of epoch {iteration} of {loader.site} starts exactly as in "
                f"epoch {iteration - 1} (step {previous.index}), though its {loader.sampler} "
                "shuffles"
            ]
            now, before = epochs.get(iteration), epochs.get(iteration - 1)
            if loader.sampler == "DistributedSampler":
                if (
                    now is not None
                    and before is not None
                    and now.sampler_epoch == before.sampler_epoch
                ):
                    lines.append(
                        f"its epoch stayed {now.sampler_epoch}: sampler.set_epoch(epoch) is never "
                        "called, so every epoch repeats one order"
                    )
                lines.append("call sampler.set_epoch(epoch) at the start of every epoch")
            missing = ": set_epoch missing" if loader.sampler == "DistributedSampler" else ""
            headline = (
                f"not equivalent: step {step.index} of {_name(run)} repeats the previous "
                f"epoch's sample order{missing}"
            )
            return Defect(step.index, headline, lines)
    return None


def defects(run: Run) -> list[Defect]:
    """Defects visible inside ``run`` alone, whatever the other run does."""
    found = [_same_on_every_rank(run), _repeated_order(run)]
    return [d for d in found if d is not None]


# --- causes of a divergence ------------------------------------------------------------------
def _per_process(run: Run, step: Step) -> str:
    sizes = sorted({b for b in step.per_rank_batch if b is not None})
    each = "/".join(str(s) for s in sizes) or "?"
    return f"{_name(run)}: {each} per process x {run.world_size} = {step.batch}"


def _batch(a: Run, b: Run, sa: Step, sb: Step) -> tuple[str, list[str]]:
    headline = f"not equivalent: global batch {sa.batch} vs {sb.batch} at step {sa.index}"
    lines = [_per_process(a, sa), _per_process(b, sb)]
    big, small = (a, sa), (b, sb)
    if (sb.batch or 0) > (sa.batch or 0):
        big, small = (b, sb), (a, sa)
    run, step = big
    loader = run.loader(step.loaders[0][0]) if step.loaders else None
    if loader is not None and small[1].batch:
        target = small[1].batch / run.world_size
        want = str(int(target)) if target == int(target) else f"{target:g}"
        lines.append(
            f"the per-process batch is set by the DataLoader at {loader.site} "
            f"(batch_size={loader.batch_size}); for a global batch of {small[1].batch} with "
            f"{run.world_size} processes it must be {small[1].batch} / {run.world_size} = {want}"
        )
    return headline, lines


def _samples(a: Run, b: Run, sa: Step, sb: Step) -> tuple[str, list[str]]:
    only_a = len(set(sa.samples or ()) - set(sb.samples or ()))
    headline = (
        f"not equivalent: step {sa.index} consumed different samples "
        f"({only_a} of {sa.batch} differ; global batch {sa.batch} in both)"
    )
    lines = []
    for run, step in ((a, sa), (b, sb)):
        doubled = step.duplicated()
        if doubled:
            loader = run.loader(step.loaders[0][0]) if step.loaders else None
            lines.append(
                f"{_name(run)}: {doubled} samples were consumed by more than one rank; a "
                "DistributedSampler pads the data by repeating samples when its size is not "
                "divisible by the world size"
                + (f" (set drop_last=True at {loader.site})" if loader is not None else "")
            )
    if not lines:
        lines.append(
            f"samplers: {_loader_of(a, sa)} vs {_loader_of(b, sb)}: the runs draw different "
            "sample orders; compare with shuffle=False, or a DistributedSampler in both runs "
            "(it gives the same global order at any world size for one seed)"
        )
    return headline, lines


def _lr(a: Run, b: Run, sa: Step, sb: Step) -> tuple[str, list[str]]:
    pairs = enumerate(zip(sa.lr, sb.lr, strict=False))
    group = next((i for i, (x, y) in pairs if x != y), min(len(sa.lr), len(sb.lr)))
    x = sa.lr[group] if group < len(sa.lr) else None
    y = sb.lr[group] if group < len(sb.lr) else None
    headline = (
        f"not equivalent: learning rate {x:g} vs {y:g} (param group {group}) at step {sa.index}"
        if x is not None and y is not None
        else f"not equivalent: {len(sa.lr)} vs {len(sb.lr)} param groups at step {sa.index}"
    )
    lines = []
    if sa.batch == sb.batch and x and y:
        ratio = y / x
        scaled = abs(ratio * a.world_size / b.world_size - 1) < FACTOR_TOLERANCE
        lines.append(
            f"the global batch is the same ({sa.batch}) in both runs, so the learning rate must "
            "not change"
            + (
                f"; it was scaled with the world size (x{ratio:g})"
                if scaled and a.world_size != b.world_size
                else ""
            )
        )
        lines.append("rescale the learning rate only when the global batch changes")
    return headline, lines


def _world_size_factor(a: Run, b: Run, sa: Step, sb: Step) -> float | None:
    """The ratio a/b of gradient norms when it matches the world-size ratio b/a."""
    if not sa.grad_norm or not sb.grad_norm or a.world_size == b.world_size:
        return None
    ratio = sa.grad_norm / sb.grad_norm
    expected = b.world_size / a.world_size
    return ratio if abs(ratio / expected - 1) < FACTOR_TOLERANCE else None


def _numbers(a: Run, b: Run, sa: Step, sb: Step) -> list[str]:
    def show(value: float | None) -> str:
        return "?" if value is None else f"{value:.6g}"

    return [
        f"loss {show(sa.loss)} vs {show(sb.loss)}, gradient norm {show(sa.grad_norm)} vs "
        f"{show(sb.grad_norm)}, parameter norm {show(sa.param_norm)} vs {show(sb.param_norm)}"
    ]


def _values(a: Run, b: Run, sa: Step, sb: Step, fields: list[str]) -> tuple[str, list[str]]:
    same = "the same samples, global batch and learning rate"
    factor = _world_size_factor(a, b, sa, sb)
    if factor is not None:
        small, big = (b, a) if factor > 1 else (a, b)
        return (
            f"not equivalent: gradient norm off by the world-size factor at step {sa.index} "
            f"({factor:g}x): loss divided by the world size",
            [
                *_numbers(a, b, sa, sb),
                f"with {same}, the gradients of {_name(small)} are {big.world_size}/"
                f"{small.world_size} of {_name(big)}'s: the loss is divided by the world size "
                "before backward() (DDP already averages gradients over ranks), or summed over "
                "the batch instead of averaged",
                "remove the division: backward() on the mean loss of the local batch",
            ],
        )
    bn = [r for r in (a, b) if r.world_size > 1 and r.batchnorm]
    if bn:
        run = bn[0]
        layers = ", ".join(run.batchnorm[:3]) + (", ..." if len(run.batchnorm) > 3 else "")
        return (
            f"not equivalent: the runs drift apart from step {sa.index} with {same}: "
            "BatchNorm statistics are per rank",
            [
                *_numbers(a, b, sa, sb),
                f"{_name(run)} normalises with per-rank batch statistics (BatchNorm without "
                f"SyncBatchNorm: {layers}), computed on 1/{run.world_size} of the global batch",
                "convert with torch.nn.SyncBatchNorm.convert_sync_batchnorm(model) before "
                "wrapping in DDP (or accept the difference)",
            ],
        )
    what = {"loss": "loss", "grad_norm": "gradient norm", "param_norm": "parameters"}
    named = ", ".join(what[f] for f in fields if f in what)
    return (
        f"not equivalent: {named} differ at step {sa.index} with {same}",
        [
            *_numbers(a, b, sa, sb),
            "look for rank-dependent randomness (dropout or augmentation seeded by rank), a "
            "model that differs between ranks, or a loss that is not a mean over the batch",
        ],
    )


def explain(a: Run, b: Run, index: int, fields: list[str], rtol: float) -> tuple[str, list[str]]:
    """The headline and the evidence lines for the first divergence, at step ``index``."""
    if fields == ["count"]:
        return (
            f"not equivalent: {_name(a)} recorded {len(a.steps)} steps, {_name(b)} {len(b.steps)}",
            ["the runs stopped at different steps: the script ended or failed early in one"],
        )
    sa, sb = a.steps[index], b.steps[index]
    if "skipped" in fields:
        which = a if sa.skipped else b
        return (
            f"not equivalent: GradScaler skipped step {index} in {_name(which)} only",
            ["inf/NaN gradients in one run only", *_numbers(a, b, sa, sb)],
        )
    if "batch" in fields:
        return _batch(a, b, sa, sb)
    if "samples" in fields:
        return _samples(a, b, sa, sb)
    if "lr" in fields:
        return _lr(a, b, sa, sb)
    return _values(a, b, sa, sb, fields)


def equivalent(a: Run, b: Run, worst: float) -> list[str]:
    """The verdict lines of two equivalent runs."""
    count = min(len(a.steps), len(b.steps))
    known = all(s.samples is not None for s in a.steps + b.steps)
    samples = (
        "identical sample sets in every step"
        if known
        else "sample indices unknown (an IterableDataset or a custom loader): batch sizes agree"
    )
    lines = [f"equivalent: max |loss difference| {sci(worst)} over {count} steps, {samples}"]
    skipped = [s.index for s in a.steps if s.skipped]
    if skipped:
        shown = ", ".join(str(i) for i in skipped[:10])
        lines.append(f"GradScaler skipped step {shown} in both runs (inf/NaN gradients)")
    micro = {s.micro_steps for s in a.steps + b.steps}
    if micro - {0, 1}:
        counts = " / ".join(str(m) for m in sorted(micro))
        lines.append(f"each step accumulates {counts} backward() calls (micro-steps)")
    return lines
