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
