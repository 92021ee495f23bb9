"""What one rank records, as JSON lines in ``DIR/rank<N>.jsonl``, and how it is read back.

Line kinds: ``run`` (first: rank, world size, run id, script), ``loader`` (a DataLoader: where it
was built, its per-process batch size, its sampler), ``epoch`` (an iteration of a loader began:
the sampler's ``epoch`` attribute, the step it began in), ``step`` (one optimizer step: the
batches and model inputs that a ``backward()`` followed), ``note`` (something the recorder could
not know or do), ``end`` (the step limit stopped the run).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECORD_ENV = "GUARDS_RECORD"  # recording on: the folder
STEPS_ENV = "GUARDS_RECORD_STEPS"  # end the run cleanly after this many optimizer steps
FORMAT = 2
READABLE = (1, 2)  # format 1 had no digests


@dataclass(frozen=True)
class Loader:
    """A DataLoader as built by the script."""

    id: int
    site: str  # "file.py:LINE" of the DataLoader(...) call
    batch_size: int | None
    sampler: str  # class name of the sampler that yields indices
    shuffle: bool | None  # None: the sampler does not say
    iterable: bool  # an IterableDataset: sample indices are unknown
    drop_last: bool | None = None


@dataclass(frozen=True)
class Epoch:
    """One iteration over a loader (``for x in loader``) began."""

    loader: int
    iteration: int
    sampler_epoch: int | None  # DistributedSampler.epoch at that moment
    step: int  # the optimizer step its first batch belongs to


@dataclass(frozen=True)
class RankStep:
    """One optimizer step as one rank saw it."""

    step: int
    samples: list[int] | None  # dataset indices consumed since the previous step; None: unknown
    batch: int | None  # samples consumed (None: unknown)
    loss: float | None  # sum of the scalar losses that reached backward() in this step
    backwards: int  # backward() calls in this step (micro-steps)
    grad_norm: float | None  # global L2 norm of the gradients the optimizer used
    lr: list[float]
    param_norm: float | None  # L2 norm of all parameters after the step
    skipped: bool = False  # GradScaler skipped optimizer.step (inf/NaN gradients)
    loaders: list[list[int]] = field(default_factory=list)  # [loader id, iteration] consumed
    digests: list[int] | None = None  # one per row entering the model's forward; None: unknown


@dataclass
class RankRecord:
    """Everything one rank recorded."""

    rank: int
    world_size: int
    run_id: str
    script: str
    loaders: list[Loader] = field(default_factory=list)
    epochs: list[Epoch] = field(default_factory=list)
    steps: list[RankStep] = field(default_factory=list)
    batchnorm: list[str] = field(default_factory=list)  # BatchNorm layers with per-rank statistics
    notes: list[str] = field(default_factory=list)
    limited: bool = False  # stopped by GUARDS_RECORD_STEPS, not by the script's end


def header_line(rank: int, world_size: int, run_id: str, script: str) -> dict[str, Any]:
    return {
        "kind": "run",
        "format": FORMAT,
        "rank": rank,
        "world_size": world_size,
        "run_id": run_id,
        "script": script,
    }


class RecordError(Exception):
    """A recording that cannot be read; the message says which file and why."""


def read_rank(path: Path) -> RankRecord:
    """Parse one rank's file; a truncated last line (a killed process) is ignored."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror}") from exc
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines):
                break
            raise RecordError(f"{path}:{number}: not a recording line ({exc.msg})") from exc
    if not rows or rows[0].get("kind") != "run":
        raise RecordError(f"{path}: not a guards recording (no header line)")
    head = rows[0]
    if head.get("format") not in READABLE:
        raise RecordError(f"{path}: recording format {head.get('format')}, expected {FORMAT}")
    record = RankRecord(head["rank"], head["world_size"], head["run_id"], head["script"])
    for row in rows[1:]:
        kind = row.pop("kind", None)
        if kind == "loader":
            record.loaders.append(Loader(**row))
        elif kind == "epoch":
            record.epochs.append(Epoch(**row))
        elif kind == "step":
            record.steps.append(RankStep(**row))
        elif kind == "batchnorm":
            record.batchnorm.extend(row["layers"])
        elif kind == "note":
            record.notes.append(row["text"])
        elif kind == "end":
            record.limited = row.get("reason") == "limit"
    return record


def read_ranks(folder: Path) -> list[RankRecord]:
    """Every rank of the run recorded in ``folder``, in rank order."""
    if not folder.is_dir():
        raise RecordError(f"{folder}: no such folder")
    first = folder / "rank0.jsonl"
    if not first.exists():
        raise RecordError(f"{folder}: no recording in this folder (rank0.jsonl is missing)")
    head = read_rank(first)
    ranks = [head]
    for rank in range(1, head.world_size):
        path = folder / f"rank{rank}.jsonl"
        if not path.exists():
            raise RecordError(f"{folder}: rank {rank} of {head.world_size} recorded nothing")
        record = read_rank(path)
        if record.run_id != head.run_id:
            raise RecordError(f"{path}: left over from another run (run id differs from rank 0)")
        ranks.append(record)
    return ranks
