"""DDP038 on results collected into a list over one rank's shard (`preds.append(...)`),
then turned into a metric and logged as the test result."""

from __future__ import annotations

import textwrap

from ddplint.api import lint_source

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import torch
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler

    def metric(pred, true):
        return np.mean(np.abs(pred - true)), np.mean((pred - true) ** 2)

    def test(model, test_set):
        loader = DataLoader(test_set, sampler=DistributedSampler(test_set, shuffle=False))
        preds, trues = [], []
        with torch.no_grad():
            for x, y in loader:
                preds.append(model(x).cpu())
                trues.append(y)
        {combine}
        mae, mse = metric(torch.cat(preds).numpy(), torch.cat(trues).numpy())
        {log}

    def main(model, test_set):
        dist.init_process_group("nccl")
        test(model, test_set)
    """
)


def findings(combine: str = "pass", log: str = "print(mse, mae)") -> list[str]:
    source = SCRIPT.replace("{combine}", combine).replace("{log}", log)
    return [d.message for d in lint_source(source, select=["DDP038"])]


def test_metric_of_one_shards_collected_results_is_flagged():
    (message,) = findings()
    assert message.startswith("`preds` collects the results of this rank's shard only")


def test_gathered_results_are_silent():
    gather = "dist.all_gather_object([None] * dist.get_world_size(), preds)"
    assert findings(combine=gather) == []


def test_logging_how_many_results_a_rank_holds_is_silent():
    assert findings(log='print(f"{len(preds)} predictions")') == []
