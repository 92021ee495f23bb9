"""DDP049: a world size the script fixes (a literal, an option's numeric default) overrides
the launcher's WORLD_SIZE at an `env://` rendezvous; a size from the environment, a
default of -1 or a script that starts its own workers is left alone. DDP035 also reports a
`worker_init_fn` that seeds from the worker index alone, proven only where the draws and
torch's sampler are in sight."""

from __future__ import annotations

import json

import pytest

from ddplint.api import lint_source
from ddplint.cli import main
from ddplint.domain import launch_commands
from ddplint.project_files import project_files

INIT = """\
import argparse
import os
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--world-size", "--ws", dest="size", type=int, default={default})
parser.add_argument("--dist-url", default="{url}")
args = parser.parse_args()
{extra}dist.init_process_group("nccl", init_method=args.dist_url, world_size=int(args.size))
"""


def ddp049(source: str) -> list[str]:
    return [d.message for d in lint_source(source, select=["DDP049"])]


def test_an_option_default_is_named_with_its_flag_and_number():
    (message,) = ddp049(INIT.format(default=4, url="env://", extra=""))
    assert "`--world-size` (default 4)" in message
    assert "ranks 4 and up are out of range" in message


@pytest.mark.parametrize(
    ("default", "url", "extra"),
    [
        (-1, "env://", ""),  # torch reads WORLD_SIZE
        (4, "tcp://10.0.0.1:23456", ""),  # a rendezvous the script runs itself
        (4, "env://", "args.size = int(os.environ['WORLD_SIZE'])\n"),
    ],
)
def test_a_size_the_launcher_decides_is_left_alone(default, url, extra):
    assert ddp049(INIT.format(default=default, url=url, extra=extra)) == []


WORKERS = """\
import random
import numpy as np
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, {sampler}

def init_worker(worker_id):
    np.random.seed({seed})
{more}
class Jitter(Dataset):
    def __len__(self):
        return 100

    def __getitem__(self, i):
        return {draw}

def main():
    dist.init_process_group("nccl")
    data = Jitter()
    return DataLoader(data, sampler={sampler}(data), num_workers=4, worker_init_fn=init_worker)
"""


def ddp035(source: str) -> list[tuple[str, bool]]:
    found = lint_source(source, select=["DDP035"])
    return [(d.message.split("`")[1], d.unproven) for d in found]


def test_a_worker_seed_from_the_index_alone_is_reported_once_per_function():
    source = WORKERS.format(
        sampler="DistributedSampler",
        seed="worker_id + 3",
        draw="np.random.rand()",
        more="    random.seed(worker_id)\n",
    )
    assert ddp035(source) == [("np.random.seed(worker_id + 3)", False)]


def test_without_a_draw_in_sight_the_worker_seed_is_unproven():
    source = WORKERS.format(sampler="DistributedSampler", seed="worker_id", draw="i", more="")
    assert ddp035(source) == [("np.random.seed(worker_id)", True)]


@pytest.mark.parametrize(
    "seed", ["worker_id + dist.get_rank() * 100", "torch.initial_seed() % 2**32"]
)
def test_a_worker_seed_that_differs_by_rank_is_left_alone(seed):
    source = WORKERS.format(
        sampler="DistributedSampler", seed=seed, draw="np.random.rand()", more=""
    )
    source = source.replace("import random\n", "import random\nimport torch\n")
    assert ddp035(source) == []


def test_a_lambda_worker_init_fn_is_read_like_a_function():
    source = WORKERS.format(
        sampler="DistributedSampler", seed="worker_id", draw="np.random.rand()", more=""
    ).replace("worker_init_fn=init_worker", "worker_init_fn=lambda k: random.seed(k + 1)")
    assert ddp035(source) == [("random.seed(k + 1)", False)]


@pytest.mark.parametrize(
    ("run", "unproven"),
    [
        ("torchrun --nproc_per_node=8 train.py --world-size 8\n", True),
        ("torchrun --nproc_per_node=8 train.py --world-size=8 --epochs 3\n", True),
        ("torchrun --nproc_per_node=4 train.py --epochs 3\n", False),
        (
            "torchrun --nproc_per_node=8 train.py --world-size 8\n"
            "torchrun --nproc_per_node=2 train.py\n",
            False,
        ),
    ],
)
def test_an_option_every_shipped_command_passes_makes_the_finding_unproven(
    tmp_path, capsys, run, unproven
):
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "train.py").write_text(INIT.format(default=4, url="env://", extra=""))
    (tmp_path / "run.sh").write_text(run, encoding="utf-8")
    project_files.cache_clear()
    launch_commands._commands.cache_clear()
    args = ["check", "--no-cache", "--exit-zero", "--preview", "--output-format", "json"]
    main([*args, "--select", "DDP049", str(tmp_path / "train.py")])
    (found,) = json.loads(capsys.readouterr().out)
    assert found["unproven"] is unproven
