"""A finding on a parameter default that every call in the project replaces is unproven
(`ddplint.domain.replaced_defaults`): the default reaches only a call out of sight."""

from __future__ import annotations

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


def test_a_default_every_call_replaces_is_unproven(write, cli):
    write("pyproject.toml", "")
    runner = write("runner.py", RUNNER)
    write("evaluate.py", "from runner import Runner\n\nr = Runner(net, device='cpu')\n")
    assert _ddp001(cli, runner) == [True]


def test_a_call_in_the_file_that_keeps_the_default_proves_it(write, cli):
    write("pyproject.toml", "")
    runner = write("runner.py", RUNNER + "\n\ndef evaluate(model):\n    return Runner(model)\n")
    assert _ddp001(cli, runner) == [False]


def test_a_call_in_another_module_that_keeps_the_default_proves_it(write, cli):
    write("pyproject.toml", "")
    runner = write("runner.py", RUNNER)
    write("evaluate.py", f"{DISTRIBUTED}r = Runner(net)\n")
    assert _ddp001(cli, runner) == [False]


def test_a_call_in_a_module_that_runs_in_one_process_does_not_count(write, cli):
    """Only code that may run on several ranks meets the shared GPU: a single-process
    script (no process-group name, not called from distributed code) keeps the default
    harmlessly, and the project index does not even read it."""
    write("pyproject.toml", "")
    runner = write("runner.py", RUNNER)
    write("plot.py", "from runner import Runner\n\nr = Runner(net)\n")
    assert _ddp001(cli, runner) == [True]


def test_a_call_through_keyword_arguments_may_keep_the_default(write, cli):
    write("pyproject.toml", "")
    runner = write("runner.py", RUNNER)
    write("evaluate.py", f"{DISTRIBUTED}r = Runner(net, **options)\n")
    assert _ddp001(cli, runner) == [False]
