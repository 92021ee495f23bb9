"""One run's ranks merged into global steps, the way DDP sees a step."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .records import Epoch, Loader, RankRecord, RankStep, read_ranks


@dataclass(frozen=True)
class Step:
    """One optimizer step of the whole job."""

    index: int
    samples: tuple[int, ...] | None  # every rank's indices, sorted (a multiset); None: unknown
    per_rank: tuple[tuple[int, ...] | None, ...]  # each rank's indices in consumption order
    batch: int | None  # global batch: the sum over ranks
    per_rank_batch: tuple[int | None, ...]
    loss: float | None  # mean over ranks, as DDP averages gradients
    grad_norm: float | None  # rank 0's (the gradients are synchronised)
    grad_norm_spread: float  # largest relative difference between ranks' gradient norms
    lr: tuple[float, ...]
    param_norm: float | None
    skipped: bool
    micro_steps: int
    loaders: tuple[tuple[int, int], ...]  # (loader id, iteration) consumed by rank 0
    digests: tuple[int, ...] | None = None  # every rank's input rows by content, sorted
    per_rank_digests: tuple[tuple[int, ...] | None, ...] = ()

    @property
    def rows(self) -> int | None:
        """Rows that entered the model's forward, over all ranks (None: unknown)."""
        return None if self.digests is None else len(self.digests)

    @property
    def global_batch(self) -> int | None:
        """Samples in the step: from the DataLoaders, else the rows entering the model."""
        return self.batch if self.batch is not None else self.rows

    def _identities(self) -> tuple[tuple[object, ...] | None, ...]:
        """Each rank's samples: dataset indices where known, else input rows by content."""
        if self.per_rank and all(s is not None for s in self.per_rank):
            return self.per_rank
        return self.per_rank_digests

    def duplicated(self) -> int:
        """Samples consumed by more than one rank in this step."""
        per_rank = self._identities()
        if len(per_rank) < 2 or any(s is None for s in per_rank):
            return 0
        owners: Counter[object] = Counter()
        for samples in per_rank:
            owners.update(set(samples or ()))
        return sum(1 for count in owners.values() if count > 1)

    def same_on_every_rank(self) -> bool:
        per_rank = self._identities()
        first = per_rank[0] if per_rank else None
        return len(per_rank) > 1 and bool(first) and all(s == first for s in per_rank)

    def by_index(self) -> bool:
        """Whether the samples are known by dataset index (else by content, or unknown)."""
        return self.samples is not None


@dataclass
class Run:
    """A recorded run, merged over its ranks."""

    label: str
    world_size: int
    script: str
    steps: list[Step]
    loaders: list[Loader]
    epochs: list[Epoch]  # rank 0's
    batchnorm: list[str]
    notes: list[str] = field(default_factory=list)
    limited: bool = False  # the step limit ended it: later steps exist but were not recorded

    def loader(self, loader_id: int) -> Loader | None:
        return next((x for x in self.loaders if x.id == loader_id), None)

    def processes(self) -> str:
        return f"{self.world_size} process" + ("" if self.world_size == 1 else "es")


def _relative_spread(values: list[float]) -> float:
    if len(values) < 2:
        return 0.0
    high, low = max(values), min(values)
    scale = max(abs(high), abs(low))
    return 0.0 if scale == 0 else (high - low) / scale


def _order(index: object) -> tuple[int, int, str]:
    """Sort key for sample indices: ints first, numerically; other keys by their text."""
    return (0, index, "") if isinstance(index, int) else (1, 0, str(index))


def _union(per_rank: tuple[tuple[int, ...] | None, ...]) -> tuple[int, ...] | None:
    """The ranks' samples as one sorted multiset; None when a rank's are unknown."""
    if any(s is None for s in per_rank):
        return None
    return tuple(sorted((i for s in per_rank for i in s or ()), key=_order))


def _rows(rank: RankStep) -> tuple[int, ...] | None:
    """A rank's input digests, when they are rows along the batch dimension: where its
    DataLoaders say how many samples it took, the row count must agree (a model called on
    sequence-first tensors, or twice per batch, is known by index only)."""
    if rank.digests is None or (rank.batch is not None and rank.batch != len(rank.digests)):
        return None
    return tuple(rank.digests)


def merge_step(index: int, ranks: list[RankStep]) -> Step:
    per_rank = tuple(None if r.samples is None else tuple(r.samples) for r in ranks)
    samples = _union(per_rank)
    per_rank_digests = tuple(_rows(r) for r in ranks)
    batches = tuple(r.batch for r in ranks)
    batch = None if any(b is None for b in batches) else sum(b or 0 for b in batches)
    losses = [r.loss for r in ranks if r.loss is not None]
    loss = sum(losses) / len(losses) if len(losses) == len(ranks) else None
    norms = [r.grad_norm for r in ranks if r.grad_norm is not None]
    head = ranks[0]
    return Step(
        index=index,
        samples=samples,
        per_rank=per_rank,
        batch=batch,
        per_rank_batch=batches,
        loss=loss,
        grad_norm=head.grad_norm,
        grad_norm_spread=_relative_spread(norms),
        lr=tuple(head.lr),
        param_norm=head.param_norm,
        skipped=head.skipped,
        micro_steps=head.backwards,
        loaders=tuple((int(a), int(b)) for a, b in head.loaders),
        digests=_union(per_rank_digests),
        per_rank_digests=per_rank_digests,
    )


def merge(ranks: list[RankRecord], label: str) -> Run:
    """Global steps from every rank's steps; steps that not every rank recorded are dropped."""
    head = ranks[0]
    count = min(len(r.steps) for r in ranks)
    notes = list(dict.fromkeys(n for r in ranks for n in r.notes))
    if any(len(r.steps) != count for r in ranks):
        lengths = ", ".join(f"rank {r.rank}: {len(r.steps)}" for r in ranks)
        notes.append(f"ranks recorded different step counts ({lengths}); compared {count}")
    steps = [merge_step(i, [r.steps[i] for r in ranks]) for i in range(count)]
    batchnorm = list(dict.fromkeys(x for r in ranks for x in r.batchnorm))
    return Run(
        label, head.world_size, head.script, steps, head.loaders, head.epochs, batchnorm, notes
    )


def load_run(folder: Path, label: str | None = None) -> Run:
    """Read and merge the run recorded in ``folder``."""
    return merge(read_ranks(folder), label or str(folder))
