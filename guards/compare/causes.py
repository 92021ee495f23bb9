"""The cause of the first divergence between two runs, told from what both recorded."""

from __future__ import annotations

from collections import Counter

from .defects import loader_of, name
from .merge import Run, Step

FACTOR_TOLERANCE = 0.05  # how close a ratio must be to the world-size ratio to be called that


def sci(value: float) -> str:
    """One significant digit, ``3e-6`` rather than ``3e-06``."""
    if value == 0:
        return "0"
    return f"{value:.1g}".replace("e-0", "e-").replace("e+0", "e+")


# --- what the two steps hold in common ---------------------------------------------------------
def same_samples(sa: Step, sb: Step) -> bool | None:
    """Whether the steps trained on the same samples: by dataset index, else by the content of
    the rows entering the model; None when either run does not say."""
    if sa.samples is not None and sb.samples is not None:
        return sa.samples == sb.samples
    if sa.digests is not None and sb.digests is not None:
        return sa.digests == sb.digests
    return None


def same_inputs(sa: Step, sb: Step) -> bool | None:
    """Whether the rows entering the model were the same, by content; None when unknown."""
    if sa.digests is None or sb.digests is None:
        return None
    return sa.digests == sb.digests


def same_batch(sa: Step, sb: Step) -> bool | None:
    ga, gb = sa.global_batch, sb.global_batch
    return None if ga is None or gb is None else ga == gb


def common_ground(sa: Step, sb: Step) -> str:
    """ "with the same samples, global batch and learning rate", naming only what was
    recorded; what was not is said to be unknown."""
    known: list[str] = []
    unknown: list[str] = []
    samples = "samples" if same_inputs(sa, sb) is not False else "sample indices (other rows)"
    for fact, noun in ((same_samples(sa, sb), samples), (same_batch(sa, sb), "global batch")):
        (known if fact else unknown).append(noun)
    known.append("learning rate")
    same = "with the same " + (
        known[0] if len(known) == 1 else ", ".join(known[:-1]) + " and " + known[-1]
    )
    return same + (f" ({' and '.join(unknown)} unknown)" if unknown else "")


# --- causes of a divergence ------------------------------------------------------------------
def _sizes(step: Step) -> list[int | None]:
    if all(b is not None for b in step.per_rank_batch):
        return list(step.per_rank_batch)
    return [None if d is None else len(d) for d in step.per_rank_digests]


def _per_process(run: Run, step: Step) -> str:
    sizes = sorted({b for b in _sizes(step) if b is not None})
    each = "/".join(str(s) for s in sizes) or "?"
    return f"{name(run)}: {each} per process x {run.world_size} = {step.global_batch}"


def _batch(a: Run, b: Run, sa: Step, sb: Step) -> tuple[str, list[str]]:
    ga, gb = sa.global_batch, sb.global_batch
    headline = f"not equivalent: global batch {ga} vs {gb} at step {sa.index}"
    lines = [_per_process(a, sa), _per_process(b, sb)]
    if sa.batch is None or sb.batch is None:
        lines.append("counted as the rows entering the model's forward (no DataLoader batches)")
    big, small = (a, sa), (b, sb)
    if (gb or 0) > (ga or 0):
        big, small = (b, sb), (a, sa)
    run, step = big
    loader = run.loader(step.loaders[0][0]) if step.loaders else None
    target_batch = small[1].global_batch
    if loader is not None and target_batch:
        target = target_batch / run.world_size
        want = str(int(target)) if target == int(target) else f"{target:g}"
        lines.append(
            f"the per-process batch is set by the DataLoader at {loader.site} "
            f"(batch_size={loader.batch_size}); for a global batch of {target_batch} with "
            f"{run.world_size} processes it must be {target_batch} / {run.world_size} = {want}"
        )
    return headline, lines


def _only_in(first: tuple[object, ...], second: tuple[object, ...]) -> int:
    return sum((Counter(first) - Counter(second)).values())


def _samples(a: Run, b: Run, sa: Step, sb: Step) -> tuple[str, list[str]]:
    by_index = sa.samples is not None and sb.samples is not None
    ids_a = (sa.samples if by_index else sa.digests) or ()
    ids_b = (sb.samples if by_index else sb.digests) or ()
    headline = (
        f"not equivalent: step {sa.index} consumed different samples "
        f"({_only_in(ids_a, ids_b)} of {len(ids_a)} differ; global batch {sa.global_batch} in "
        "both)"
    )
    lines = []
    if not by_index:
        lines.append(
            "samples told apart by the content of the rows entering the model's forward "
            "(no dataset indices: batches made by hand or from an IterableDataset)"
        )
    doubled_lines = []
    for run, step in ((a, sa), (b, sb)):
        doubled = step.duplicated()
        if not doubled:
            continue
        loader = run.loader(step.loaders[0][0]) if step.loaders else None
        if loader is not None and loader.sampler == "DistributedSampler" and step.by_index():
            doubled_lines.append(
                f"{name(run)}: {doubled} samples were consumed by more than one rank; a "
                "DistributedSampler pads the data by repeating samples when its size is not "
                f"divisible by the world size (set drop_last=True at {loader.site})"
            )
        else:
            doubled_lines.append(
                f"{name(run)}: {doubled} samples were consumed by more than one rank"
            )
    lines += doubled_lines
    if doubled_lines:
        return headline, lines
    loaders = loader_of(a, sa), loader_of(b, sb)
    if loaders[0] is not None and loaders[1] is not None:
        lines.append(
            f"samplers: {loaders[0]} vs {loaders[1]}: the runs draw different sample orders; "
            "compare with shuffle=False, or a DistributedSampler in both runs (it gives the same "
            "global order at any world size for one seed)"
        )
    else:
        lines.append(
            "the batches do not come from a DataLoader: if each rank draws them at random with "
            "a seed of its own (torch.manual_seed(seed + rank)), the runs cannot agree step by "
            "step; to compare, draw the global batch from one seed on every rank and give each "
            "rank its slice"
        )
    return headline, lines


def _inputs(a: Run, b: Run, sa: Step, sb: Step) -> tuple[str, list[str]]:
    differ = _only_in(sa.digests or (), sb.digests or ())
    return (
        f"not equivalent: step {sa.index} took the same dataset samples, but {differ} of "
        f"{sa.rows} rows entering the model differ",
        [
            "the same dataset indices hold other data in the two runs: a dataset built from "
            "random numbers, or a random augmentation, draws from each process's own random "
            "state (and each DataLoader worker's)",
            "to compare, seed the dataset alike in every process and make the transforms "
            "deterministic",
        ],
    )


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
    if same_batch(sa, sb) and x and y:
        ratio = y / x
        scaled = abs(ratio * a.world_size / b.world_size - 1) < FACTOR_TOLERANCE
        lines.append(
            f"the global batch is the same ({sa.global_batch}) in both runs, so the learning "
            "rate must not change"
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
    same = common_ground(sa, sb)
    factor = _world_size_factor(a, b, sa, sb)
    if factor is not None:
        small, big = (b, a) if factor > 1 else (a, b)
        return (
            f"not equivalent: gradient norm off by the world-size factor at step {sa.index} "
            f"({factor:g}x): loss divided by the world size",
            [
                *_numbers(a, b, sa, sb),
                f"{same}, the gradients of {name(small)} are {big.world_size}/"
                f"{small.world_size} of {name(big)}'s: the loss is divided by the world size "
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
            f"not equivalent: the runs drift apart from step {sa.index} {same}: "
            "BatchNorm statistics are per rank",
            [
                *_numbers(a, b, sa, sb),
                f"{name(run)} normalises with per-rank batch statistics (BatchNorm without "
                f"SyncBatchNorm: {layers}), computed on 1/{run.world_size} of the global batch",
                "convert with torch.nn.SyncBatchNorm.convert_sync_batchnorm(model) before "
                "wrapping in DDP (or accept the difference)",
            ],
        )
    what = {"loss": "loss", "grad_norm": "gradient norm", "param_norm": "parameters"}
    named = ", ".join(what[f] for f in fields if f in what)
    lines = [*_numbers(a, b, sa, sb)]
    if sa.index == 0 and "param_norm" in fields:
        lines.append(
            "the parameters differ after the first step: the runs may start from different "
            "initial parameters (seed the random state before building the model)"
        )
    lines.append(
        "look for rank-dependent randomness (dropout or augmentation seeded by rank), a "
        "model that differs between ranks, or a loss that is not a mean over the batch"
    )
    return f"not equivalent: {named} differ at step {sa.index} {same}", lines


def explain(a: Run, b: Run, index: int, fields: list[str], rtol: float) -> tuple[str, list[str]]:
    """The headline and the evidence lines for the first divergence, at step ``index``."""
    if fields == ["count"]:
        return (
            f"not equivalent: {name(a)} recorded {len(a.steps)} steps, {name(b)} {len(b.steps)}",
            ["the runs stopped at different steps: the script ended or failed early in one"],
        )
    sa, sb = a.steps[index], b.steps[index]
    if "skipped" in fields:
        which = a if sa.skipped else b
        return (
            f"not equivalent: GradScaler skipped step {index} in {name(which)} only",
            ["inf/NaN gradients in one run only", *_numbers(a, b, sa, sb)],
        )
    if "batch" in fields:
        return _batch(a, b, sa, sb)
    if "samples" in fields:
        return _samples(a, b, sa, sb)
    if "inputs" in fields:
        return _inputs(a, b, sa, sb)
    if "lr" in fields:
        return _lr(a, b, sa, sb)
    return _values(a, b, sa, sb, fields)


def equivalent(a: Run, b: Run, worst: float) -> list[str]:
    """The verdict lines of two equivalent runs."""
    count = min(len(a.steps), len(b.steps))
    pairs = list(zip(a.steps, b.steps, strict=False))
    samples_known = all(same_samples(sa, sb) for sa, sb in pairs)
    by_content = any(sa.samples is None or sb.samples is None for sa, sb in pairs)
    if samples_known:
        samples = "identical sample sets in every step" + (" (by content)" if by_content else "")
    elif all(same_batch(sa, sb) for sa, sb in pairs):
        samples = (
            "samples unknown (no dataset indices, no model inputs recorded): batch sizes agree"
        )
    else:
        samples = "samples and batch sizes unknown: only the values were compared"
    lines = [f"equivalent: max |loss difference| {sci(worst)} over {count} steps, {samples}"]
    lines += other_inputs(a, b)
    skipped = [s.index for s in a.steps if s.skipped]
    if skipped:
        shown = ", ".join(str(i) for i in skipped[:10])
        lines.append(f"GradScaler skipped step {shown} in both runs (inf/NaN gradients)")
    micro = {s.micro_steps for s in a.steps + b.steps}
    if micro - {0, 1}:
        counts = " / ".join(str(m) for m in sorted(micro))
        lines.append(f"each step accumulates {counts} backward() calls (micro-steps)")
    return lines


def other_inputs(a: Run, b: Run) -> list[str]:
    """A note when the same dataset samples entered the model as other rows, by content, in a
    step whose values agree (a difference the verdict does not rest on)."""
    for sa, sb in zip(a.steps, b.steps, strict=False):
        if same_samples(sa, sb) and sa.samples is not None and same_inputs(sa, sb) is False:
            differ = _only_in(sa.digests or (), sb.digests or ())
            return [
                f"note: from step {sa.index} the same dataset samples entered the model as other "
                f"rows ({differ} of {sa.rows} differ by content): a dataset built from random "
                "numbers or a random augmentation per process, or features computed at another "
                "batch size"
            ]
    return []
