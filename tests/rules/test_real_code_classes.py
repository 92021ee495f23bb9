"""False-positive and miss classes found on public repositories (issue 8), each pinned by
the smallest source that shows it: what must be left alone, what must be reported, and
what the message and severity must say."""

from __future__ import annotations

import textwrap

from ddplint.api import lint_source
from ddplint.diagnostics import Severity

HEADER = """\
import io
import os
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
"""


def found(body: str, code: str):
    source = HEADER + textwrap.dedent(body)
    offset = HEADER.count("\n")
    return [(d.start.row - offset, d) for d in lint_source(source, select=[code])]


def rows(body: str, code: str) -> list[int]:
    return [row for row, _ in found(body, code)]


def test_ddp013_rank_gate_through_attribute_and_decorator():
    body = """
    def rank_zero_only(fn):
        return fn

    class Trainer:
        def __init__(self, model, rank):
            self.model = DDP(model)
            self.gpu_id = rank
            self.is_master = rank == 0

        def snapshot(self):
            if self.gpu_id == 0:
                torch.save(self.model.module.state_dict(), "snap.pt")

        def last(self):
            if self.is_master:
                torch.save(self.model.module.state_dict(), "last.pt")

        @rank_zero_only
        def best(self):
            torch.save(self.model.module.state_dict(), "best.pt")

        def unguarded(self):
            torch.save(self.model.module.state_dict(), "every.pt")

        def fit(self):
            self.snapshot()
            self.last()
            self.best()
            self.unguarded()

    def main():
        dist.init_process_group("nccl")
        Trainer(nn.Linear(2, 2), dist.get_rank()).fit()
    """
    assert rows(body, "DDP013") == [30]


def test_ddp013_left_alone_in_a_data_parallel_script():
    body = """
    def main():
        model = nn.DataParallel(nn.Linear(2, 2)).cuda()
        for epoch in range(3):
            torch.save(model.state_dict(), "checkpoint.pt")

    if __name__ == "__main__":
        main()
    """
    assert rows(body, "DDP013") == []
    assert rows(
        body.replace("def main():", "def main():\n        dist.init_process_group('nccl')"),
        "DDP013",
    )


def test_ddp014_message_for_a_computed_name_does_not_claim_every_save_overwrites():
    body = """
    def train(model, out, variant, epochs):
        for epoch in range(epochs):
            if dist.get_rank() == 0:
                torch.save(model.module.state_dict(), f"{out}/model_{variant}.pt")
                torch.save(model.module.state_dict(), f"{out}/model.pt")
    """
    (row_computed, computed), (row_fixed, fixed) = found(body, "DDP014")
    assert (row_computed, row_fixed) == (5, 6)
    assert "every save overwrites" not in computed.message
    assert "cannot tell" in computed.message
    assert "every save overwrites" in fixed.message


def test_ddp014_step_numbered_names_and_once_per_run_saves_are_left_alone():
    body = """
    def train(model, log_dir, steps, save_step):
        for step in range(steps):
            if dist.get_rank() == 0 and step % 1000 == 0:
                name = f"model{step:06d}.pt"
                torch.save(model.module.state_dict(), os.path.join(log_dir, name))
            if dist.get_rank() == 0 and step == save_step:
                torch.save(model.module.state_dict(), os.path.join(log_dir, "screen.pt"))
    """
    assert rows(body, "DDP014") == []


def test_ddp025_severity_follows_what_a_concurrent_download_risks():
    body = """
    import torchvision
    from transformers import AutoModel

    def main(url):
        dist.init_process_group("nccl")
        state = torch.hub.load_state_dict_from_url(url)
        repo = torch.hub.load("pytorch/vision", "resnet50")
        bert = AutoModel.from_pretrained("bert-base-uncased")
        data = torchvision.datasets.CIFAR10("data", download=True)
        mine = torchvision.datasets.CIFAR10(f"data/{dist.get_rank()}", download=True)
    """
    severities = {row: d.severity for row, d in found(body, "DDP025")}
    assert severities == {
        7: Severity.INFO,
        8: Severity.WARNING,
        9: Severity.INFO,
        10: Severity.WARNING,
    }
    hub = dict(found(body, "DDP025"))[7]
    assert "temporary file" in hub.message and "not corrupted" in hub.message


def test_ddp025_message_shows_the_argument_not_a_value_from_another_branch():
    body = """
    from transformers import AutoModel

    init_from = "scratch"

    def main():
        dist.init_process_group("nccl")
        if init_from.startswith("bert"):
            return AutoModel.from_pretrained(init_from)
    """
    [(row, finding)] = found(body, "DDP025")
    assert row == 9
    assert "from_pretrained(init_from)" in finding.message
    assert "scratch" not in finding.message


def test_ddp016_says_it_cannot_know_whether_parameters_are_unused():
    body = """
    model = DDP(nn.Linear(2, 2), find_unused_parameters=True)
    """
    [(_, finding)] = found(body, "DDP016")
    assert "cannot tell" in finding.message


def test_ddp003_validation_sampler_with_default_shuffle_is_left_alone():
    body = """
    def main(dataset_train, dataset_val):
        dist.init_process_group("nccl")
        sampler_train = DistributedSampler(dataset_train)
        sampler_val = DistributedSampler(dataset_val)
        train_loader = DataLoader(dataset_train, sampler=sampler_train)
        val_loader = DataLoader(dataset_val, sampler=sampler_val)
        return train_loader, val_loader
    """
    assert rows(body, "DDP003") == []  # padding harms only a metric reduced in sight


def test_ddp015_data_parallel_fallback_next_to_a_wrap_helper():
    body = """
    def smart_ddp(model, rank):
        return DDP(model, device_ids=[rank])

    def main(model, rank):
        if rank == -1 and torch.cuda.device_count() > 1:
            model = nn.DataParallel(model)
        if rank != -1:
            model = smart_ddp(model, rank)
        return model
    """
    assert rows(body, "DDP015") == []


def test_ddp004_optimizer_built_in_the_constructor_before_a_later_wrap():
    body = """
    from torch.distributed.fsdp import FullyShardedDataParallel
    class Trainer:
        def __init__(self, model):
            self.model = model.cuda()
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

        def setup(self, rank):
            self.model = FullyShardedDataParallel(self.model, device_id=rank)
    """
    assert rows(body, "DDP004") == [6]


def test_ddp001_per_rank_device_table_is_left_alone():
    body = """
    dist.init_process_group("nccl")
    expected = {
        0: torch.zeros(2, device="cuda:0"),
        1: torch.zeros(2, device="cuda:1"),
    }[dist.get_rank()]
    other = torch.zeros(2, device="cuda:0")
    """
    assert rows(body, "DDP001") == [7]


def test_ddp017_runtime_architecture_says_what_is_known():
    body = """
    import torchvision.models as models

    def main(args, local_rank):
        dist.init_process_group("nccl")
        model = models.__dict__[args.arch]().cuda(local_rank)
        return DDP(model, device_ids=[local_rank])
    """
    [(row, finding)] = found(body, "DDP017")
    assert row == 7
    assert "chosen at run time" in finding.message and "cannot tell" in finding.message
