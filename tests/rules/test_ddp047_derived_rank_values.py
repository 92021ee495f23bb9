"""DDP047 on an early stop decided on a value that follows one only some ranks compute: the
metric an evaluation function of the file sets where `dist.get_rank() == 0` holds (0 on
the others) and returns, the best epoch set under a test on it. The ranks that keep
training wait for the one that left. A decision broadcast from rank 0 first, or a metric
every rank computes alike, is left alone."""

from __future__ import annotations

import textwrap

from ddplint.api import lint_source

TRAIN = """\
import torch
import torch.distributed as dist


def evaluate(model, loader):
    scores = [model(x).mean().item() for x, _ in loader]
    dist.barrier()
    if dist.get_rank() == 0:
        score = sum(scores) / len(scores)
    else:
        score = 0.0
    return score


def fit(model, optimizer, train_loader, val_loader, epochs, patience):
    best, best_epoch = float("-inf"), 0
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            (model(x) - y).pow(2).mean().backward()
            optimizer.step()
        score = evaluate(model, val_loader)
        {decide}
        if epoch - best_epoch > patience:
            break
"""


def _source(decide: str) -> str:
    return TRAIN.format(decide=textwrap.indent(textwrap.dedent(decide), " " * 8).strip())


def findings(decide: str) -> list:
    return lint_source(_source(decide), select=["DDP047"])


def test_a_patience_counted_on_rank_zeros_metric_leaves_on_one_rank():
    decide = "if score > best:\n    best, best_epoch = score, epoch"
    [finding] = findings(decide)
    assert finding.start.row == _source(decide).count("\n") and not finding.unproven
    assert "`best_epoch` changes as it is set under `score > best`" in finding.message
    assert "`evaluate()` returns it" in finding.message
    assert "only where `dist.get_rank() == 0` holds" in finding.message


def test_rank_zeros_decision_broadcast_first_is_left_alone():
    decide = """\
    last = torch.tensor([float(epoch if score > best else best_epoch)])
    dist.broadcast(last, src=0)
    best, best_epoch = max(best, score), int(last.item())
    """
    assert findings(decide) == []


def test_a_metric_every_rank_computes_is_left_alone():
    body = TRAIN.replace(
        "    if dist.get_rank() == 0:\n        score = sum(scores) / len(scores)\n"
        "    else:\n        score = 0.0\n",
        "    score = sum(scores) / len(scores)\n    if dist.get_rank() == 0:\n"
        "        print(score)\n",
    )
    decide = "if score > best:\n            best, best_epoch = score, epoch"
    assert lint_source(body.format(decide=decide), select=["DDP047"]) == []


STOP_AFTER = """\
import torch
import torch.distributed as dist
from mpi4py import MPI


def sync_value(value):
    tensor = torch.tensor(value)
    dist.broadcast(tensor, 0)
    return tensor.item()


def remaining(limit):
    extra = 0
    if dist.get_rank() == 0:
        extra = limit
    {sync}
    return extra


def fit(model, optimizer, loader, limit):
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        (model(x) - y).pow(2).mean().backward()
        optimizer.step()
        dist.barrier()
        {decide}
        if step >= stop_at:
            break
"""


def _stop_after(sync: str, decide: str) -> list:
    source = STOP_AFTER.format(sync=sync, decide=decide)
    return lint_source(source, select=["DDP047"])


DECIDE = "extra_steps = remaining(limit)\n        stop_at = step + extra_steps"


def test_a_value_returned_after_a_helper_synchronised_it_is_left_alone():
    decide = DECIDE
    assert len(_stop_after("pass", decide)) == 1
    assert _stop_after("extra = sync_value(extra)", decide) == []


def test_a_value_the_ranks_agree_on_through_mpi_is_left_alone():
    decide = DECIDE
    sync = "extra = MPI.COMM_WORLD.bcast(extra)"
    assert _stop_after(sync, decide) == []


def test_a_call_handed_a_rank_dependent_value_is_no_proof_its_result_differs():
    # `remaining(limit)` differs by rank; a helper of another module handed it may return
    # anything (a schedule, a model): its result is not followed
    decide = "extra_steps = remaining(limit)\n        stop_at = step + len(str(extra_steps))"
    assert _stop_after("pass", decide) == []
