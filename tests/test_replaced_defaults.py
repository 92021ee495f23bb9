"""A finding on a parameter default that every call in the project replaces is unproven
(`ddplint.domain.replaced_defaults`): the default reaches only a call out of sight."""

from __future__ import annotations

import pytest

RUNNER = """\
import torch
import torch.distributed as dist


class Runner:
    def __init__(self, model, device=torch.device("cuda:0")):
        self.model = model.to(device)


def train(model, local_rank):
    dist.init_process_group("nccl")
    return Runner(model, torch.device("cuda", local_rank))
"""


DISTRIBUTED = "import torch.distributed as dist\nfrom runner import Runner\n\ndist.barrier()\n"


def _ddp001(cli, path) -> list[bool]:
    result = cli(
        "check", "--no-cache", "--preview", "--select", "DDP001", "--output-format", "json", path
    )
    return [finding["unproven"] for finding in result.json()]


@pytest.mark.parametrize(
    ("caller", "source", "unproven"),
    [
        # every call passes the device: only a call out of sight gets the default
        ("evaluate.py", "from runner import Runner\n\nr = Runner(net, device='cpu')\n", True),
        # a module that may run on several ranks keeps the default: proven
        ("evaluate.py", f"{DISTRIBUTED}r = Runner(net)\n", False),
        # a single-process script (no process-group name, not called from distributed
        # code) keeps it harmlessly: the project index does not even read it
        ("plot.py", "from runner import Runner\n\nr = Runner(net)\n", True),
        # `**options` may or may not pass the device
        ("evaluate.py", f"{DISTRIBUTED}r = Runner(net, **options)\n", False),
    ],
)
def test_what_the_calls_of_another_module_pass(write, cli, caller, source, unproven):
    write("pyproject.toml", "")
    runner = write("runner.py", RUNNER)
    write(caller, source)
    assert _ddp001(cli, runner) == [unproven]


def test_a_call_in_the_file_that_keeps_the_default_proves_it(write, cli):
    write("pyproject.toml", "")
    runner = write("runner.py", RUNNER + "\n\ndef evaluate(model):\n    return Runner(model)\n")
    assert _ddp001(cli, runner) == [False]
