"""DDP041: a seed set in the process that `mp.spawn`s the workers reaches none of them;
one the worker sets itself, or one at module level (each worker imports the script
again), does. DDP035 reads the spawn index as a rank whatever its name."""

from __future__ import annotations

from ddplint.api import lint_source

SCRIPT = """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, DistributedSampler

def worker(gpu, args):
    dist.init_process_group("nccl", rank=gpu, world_size=args.gpus)
{worker_seed}    loader = DataLoader(args.data, batch_size=8, sampler=DistributedSampler(args.data))
    for x in loader:
        noise = torch.randn_like(x)
        (x + noise).sum().backward()

def main(args):
{parent_seed}    mp.spawn(worker, nprocs=args.gpus, args=(args,))
"""


def codes(source: str) -> list[tuple[str, str]]:
    found = lint_source(source, select=["DDP035", "DDP041"])
    return [(d.code, d.message.split("`")[1]) for d in found]


def test_a_seed_only_the_parent_sets_is_reported_where_it_is_set():
    source = SCRIPT.format(worker_seed="", parent_seed="    torch.manual_seed(args.seed)\n")
    assert codes(source) == [("DDP041", "torch.manual_seed(args.seed)")]


def test_a_seed_set_after_the_spawn_is_not_in_the_parent_before_it():
    source = SCRIPT.format(worker_seed="", parent_seed="").replace(
        "args=(args,))\n", "args=(args,))\n    torch.manual_seed(args.seed)\n"
    )
    assert codes(source) == []


def test_a_worker_seeded_by_its_spawn_index_is_left_alone_by_both_rules():
    worker_seed = "    torch.manual_seed(args.seed + gpu)\n"
    source = SCRIPT.format(worker_seed=worker_seed, parent_seed="    torch.manual_seed(0)\n")
    assert codes(source) == []


def test_a_worker_seeded_alike_is_ddp035s_when_its_step_draws():
    worker_seed = "    torch.manual_seed(args.seed)\n"
    source = SCRIPT.format(worker_seed=worker_seed, parent_seed="")
    assert codes(source) == [("DDP035", "torch.manual_seed(args.seed)")]


def test_a_worker_calling_a_seeding_helper_out_of_sight_is_left_alone():
    worker_seed = "    utils.set_random_seed(args.seed + gpu)\n"
    source = "import utils\n" + SCRIPT.format(
        worker_seed=worker_seed, parent_seed="    torch.manual_seed(args.seed)\n"
    )
    assert [c for c, _ in codes(source)] == []
