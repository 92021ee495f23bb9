"""The `__main__` block of a helper module other project files import is a self-test that
runs as its own program: one process, unless the block starts or joins a job
(`ddplint.domain.processes`)."""

from __future__ import annotations

HELPER = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model, local_rank):
    return DDP(model.cuda(local_rank), device_ids=[local_rank])


if __name__ == "__main__":
    SETUP
    net = torch.nn.Linear(4, 4).to(torch.device("cuda:1"))
    print(net(torch.randn(2, 4, device="cuda:1")).shape)
"""
TRAIN = "import model_utils\n\nmodel = model_utils.wrap(net, 0)\n"


def _ddp001_rows(cli, write, setup: str) -> list[int]:
    write("pyproject.toml", "")
    helper = write("model_utils.py", HELPER.replace("SETUP", setup))
    write("train.py", TRAIN)
    result = cli("check", "--no-cache", "--select", "DDP001", "--output-format", "json", helper)
    return [d["location"]["row"] for d in result.json()]


def test_a_helpers_self_test_runs_in_one_process(write, cli):
    assert _ddp001_rows(cli, write, "pass") == []


def test_a_main_block_that_joins_a_job_runs_on_every_rank(write, cli):
    assert _ddp001_rows(cli, write, 'dist.init_process_group("nccl")') == [12, 13]
