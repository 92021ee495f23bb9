"""Which values of a function the ranks combine, value by value
(`ddplint.domain.combined_values`)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.combined_values import Combined, combined_values
from ddplint.domain.shard_metrics import combines_call

EVALUATE = """\
import torch
import torch.distributed as dist


def gather_all(t):
    parts = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, t)
    return torch.cat(parts)


def evaluate(model, loader, criterion):
    total_loss, correct, seen = 0.0, 0, 0
    predictions = []
    for x, y in loader:
        logits = model(x)
        total_loss += criterion(logits, y).item()
        predicted = gather_all(logits.argmax(1))
        labels = gather_all(y)
        correct += (predicted == labels).sum().item()
        predictions.extend(predicted.tolist())
        seen += len(y)
    stats = torch.tensor([seen])
    dist.all_reduce(stats)
    return total_loss, correct, stats
"""


def combined(source: str, function: str) -> tuple[FileContext, Combined | None]:
    ctx = FileContext("evaluate.py", source, cst.parse_module(source))
    frame = ctx.model.functions[function][0]
    return ctx, combined_values(ctx, frame, combines_call)


def counts(ctx: FileContext, found: Combined) -> dict[str, bool]:
    return {
        ctx.code(node.target): found.counts(node)
        for node in ctx.nodes_of(cst.AugAssign)
        if isinstance(node, cst.AugAssign)
    }


def test_a_gather_vouches_only_for_what_it_combines():
    """The loss summed beside gathered predictions stays this rank's; the count computed
    from the gathered values, and the one all-reduced later, are every rank's."""
    ctx, found = combined(EVALUATE, "evaluate")
    assert found is not None
    assert counts(ctx, found) == {"total_loss": False, "correct": True, "seen": True}


def test_a_container_filled_with_gathered_values_is_combined():
    ctx, found = combined(EVALUATE, "evaluate")
    assert found is not None
    loop = next(n for n in ctx.nodes_of(cst.For) if isinstance(n, cst.For))
    assert "predictions" in found.fed_by(loop)


def test_a_result_read_before_the_gather_is_not_combined():
    """`loss = criterion(out, y)` before `y = gather_all(y)`: the loss is this rank's."""
    source = EVALUATE.replace(
        "        total_loss += criterion(logits, y).item()\n",
        "",
    ).replace(
        "        labels = gather_all(y)\n",
        "        step_loss = criterion(logits, y)\n        y = gather_all(y)\n"
        "        total_loss += step_loss.item()\n        labels = y\n",
    )
    ctx, found = combined(source, "evaluate")
    assert found is not None
    assert counts(ctx, found)["total_loss"] is False


def test_a_combining_call_that_names_nothing_is_out_of_sight():
    """`sync_metrics()` combines what this code cannot name: no value is known alone."""
    source = EVALUATE.replace("    dist.all_reduce(stats)\n", "    sync_metrics()\n")
    _, found = combined(source, "evaluate")
    assert found is None


def test_a_meter_updated_with_a_reduced_value_is_combined():
    """`top1.update(reduced.item())` after `reduced = reduce_mean(acc)`: every rank's."""
    source = EVALUATE.replace(
        "        predictions.extend(predicted.tolist())\n",
        "        reduced = reduce_mean(correct)\n        top1.update(reduced.item())\n"
        "        top5.update(correct)\n",
    )
    ctx, found = combined(source, "evaluate")
    assert found is not None
    loop = next(n for n in ctx.nodes_of(cst.For) if isinstance(n, cst.For))
    updated = found.fed_by(loop, ("update",))
    assert "top1" in updated and "top5" not in updated
