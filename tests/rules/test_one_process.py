"""Code that runs in one process (`analysis.processes.runs_in_one_process`): command-line
subcommands that start no job, tests on project TestCase bases, parametrizations built by
test helpers, devices that are expected values; each next to the case that must still be
reported."""

from __future__ import annotations

import textwrap

from ddplint.api import lint_source

HEADER = """\
import argparse
import torch
import torch.distributed as dist
import torchvision
"""


def rows(body: str, code: str) -> list[int]:
    source = HEADER + textwrap.dedent(body)
    offset = HEADER.count("\n")
    return [d.start.row - offset for d in lint_source(source, select=[code])]


ARGPARSE = """
def fetch(args):
    torchvision.datasets.MNIST(args.root, download=True)

def train(args):
    {join}
    torchvision.datasets.MNIST(args.root, download=True)

def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers()
    fetch_cmd = commands.add_parser("fetch")
    fetch_cmd.set_defaults(func=fetch)
    train_cmd = commands.add_parser("train")
    train_cmd.set_defaults(func=train)
    args = parser.parse_args()
    args.func(args)
"""


def test_argparse_subcommand_without_a_job_runs_alone():
    body = ARGPARSE.format(join='dist.init_process_group("nccl")')
    assert rows(body, "DDP025") == [7]


def test_subcommand_reaching_the_job_through_a_helper_is_not_alone():
    body = (
        ARGPARSE.replace("def fetch(args):\n", "def fetch(args):\n    setup()\n").format(
            join="setup()"
        )
        + '\ndef setup():\n    dist.init_process_group("nccl")\n'
    )
    assert rows(body, "DDP025") == [4, 8]


def test_no_subcommand_alone_when_the_module_joins_the_job():
    body = 'dist.init_process_group("nccl")\n' + ARGPARSE.format(join="pass")
    assert rows(body, "DDP025") == [4, 8]


def test_subcommands_alone_only_beside_one_that_runs_a_job():
    """With no subcommand that joins the job, nothing sets one apart as run alone (the
    job may start elsewhere): both downloads are reported."""
    assert rows(ARGPARSE.format(join="pass"), "DDP025") == [3, 7]


def test_test_case_named_for_a_job_is_not_single_process():
    body = """
    import unittest

    class LoaderTestCase(unittest.TestCase):
        pass

    class MultiProcessLoaderTestCase(unittest.TestCase):
        pass

    class OneProcess(LoaderTestCase):
        @unittest.skipIf(False, "always runs")
        def test_download(self):
            torchvision.datasets.MNIST("/tmp/m", download=True)

    class EveryRank(MultiProcessLoaderTestCase):
        @unittest.skipIf(False, "always runs")
        def test_download(self):
            torchvision.datasets.MNIST("/tmp/m", download=True)

    def main():
        dist.init_process_group("nccl")
    """
    assert rows(body, "DDP025") == [18]


def test_parametrize_on_a_test_that_runs_a_job_is_reported():
    body = """
    import pytest

    def with_first_gpu(func):
        return pytest.mark.parametrize("device", [torch.device("cuda:0")])(func)

    @pytest.mark.parametrize("device", [torch.device("cuda:0")])
    def test_all_reduce(device, local_rank):
        dist.init_process_group("nccl")
        dist.all_reduce(torch.ones(1, device=device))
    """
    assert rows(body, "DDP001") == [7]


def test_compared_device_is_an_expected_value_used_device_is_not():
    body = """
    def check(local_rank):
        dist.init_process_group("nccl")
        x = torch.ones(1, device=torch.device("cuda:1"))
        assert x.device == torch.device("cuda:1")
        if x.device != torch.device("cuda", 0):
            print("moved")
    """
    assert rows(body, "DDP001") == [4]


def test_world_size_one_through_a_name_is_one_process_two_is_not():
    body = """
    import unittest

    SINGLE = 1

    class OneRank(unittest.TestCase):
        def test_sum(self):
            dist.init_process_group("nccl", rank=0, world_size=SINGLE)
            dist.all_reduce(torch.ones(1, device="cuda:0"))

    class TwoRanks(unittest.TestCase):
        def test_sum(self):
            dist.init_process_group("nccl", rank=0, world_size=2)
            dist.all_reduce(torch.ones(1, device="cuda:0"))
    """
    assert rows(body, "DDP001") == [14]


def test_fake_group_started_after_the_device_still_simulates_one_process():
    body = """
    def trace(rank, world_size):
        device = torch.device("cuda:0")
        dist.init_process_group(backend="fake", rank=rank, world_size=world_size)
        return torch.zeros(2, device=device)

    def run(rank, world_size):
        device = torch.device("cuda:0")
        dist.init_process_group(backend="nccl", rank=rank, world_size=world_size)
        return torch.zeros(2, device=device)
    """
    assert rows(body, "DDP001") == [8]


def test_ray_actor_without_gpus_of_its_own_is_reported():
    body = """
    import ray

    @ray.remote(num_gpus=1)
    class OwnGpu:
        def __init__(self):
            dist.init_process_group("nccl")
            self.x = torch.zeros(2, device="cuda:0")

    @ray.remote(num_cpus=2)
    class NoGpu:
        def __init__(self):
            dist.init_process_group("nccl")
            self.x = torch.zeros(2, device="cuda:0")
    """
    assert rows(body, "DDP001") == [14]


def test_parent_that_only_calls_its_worker_is_not_the_launcher():
    body = """
    def worker(rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        return torch.zeros(2, device="cuda:0")

    def spawn_all(world_size):
        shards = [torch.zeros(2, device="cuda:1")]
        torch.multiprocessing.spawn(worker, args=(world_size,), nprocs=world_size)
        return shards

    def run_inline(rank, world_size):
        shards = [torch.zeros(2, device="cuda:1")]
        return worker(rank, world_size), shards
    """
    assert rows(body, "DDP001") == [4, 12]


def test_parent_that_also_runs_the_worker_without_spawn_is_not_only_the_parent():
    body = """
    def worker(rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        return torch.zeros(2).cuda()

    def main(world_size, spawn):
        if spawn:
            torch.multiprocessing.spawn(worker, args=(world_size,), nprocs=world_size)
        else:
            worker(0, world_size)
    """
    assert rows(body, "DDP020") == [4]


def test_class_that_sets_one_rank_but_spawns_workers_is_not_one_process():
    body = """
    import os
    import unittest

    def worker(rank):
        pass

    class Spawning(unittest.TestCase):
        def setUp(self):
            os.environ["WORLD_SIZE"] = "1"

        def test_spawn(self):
            torch.multiprocessing.spawn(worker, nprocs=2)
            dist.init_process_group("nccl")
            torch.zeros(2, device="cuda:0")
    """
    assert rows(body, "DDP001") == [15]


def test_rank_zero_stand_in_after_a_spawning_set_up_runs_in_every_worker():
    body = """
    from shardkit import MultiProcessTestCase, ShardedEnv, shard

    class StandIn(MultiProcessTestCase):
        def test_shard(self):
            shard(ShardedEnv.from_local(world_size=2, rank=0), device="cuda:0")

    class SpawnedStandIn(MultiProcessTestCase):
        def setUp(self):
            torch.multiprocessing.spawn(self.run_test, nprocs=2)

        def test_shard(self):
            shard(ShardedEnv.from_local(world_size=2, rank=0), device="cuda:0")

    def main():
        dist.init_process_group("nccl")
    """
    assert rows(body, "DDP001") == [13]


MODES = """
def fetch(args):
    torchvision.datasets.MNIST(args.root, download=True)

def train(args):
    dist.init_process_group("nccl")
    torchvision.datasets.MNIST(args.root, download=True)

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="train")
    args = parser.parse_args()
    if args.mode == "fetch":
        fetch(args)
    elif "train" == args.mode:
        for _ in range(2):
            print("compound statements in a branch are no dispatch")
        train(args)
"""


def test_a_mode_chosen_by_an_option_without_a_job_runs_alone():
    assert rows(MODES, "DDP025") == [7]


def test_a_mode_function_also_called_outside_the_dispatch_is_not_alone():
    body = MODES.replace("        train(args)\n", "        train(args)\n    fetch(args)\n")
    assert rows(body, "DDP025") == [3, 7]
