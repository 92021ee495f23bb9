"""Branches that need a parameter value no call in sight passes are of unknown liveness
(`ddplint.domain.unpassed_parameters`), so their findings are unproven."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.unpassed_parameters import needs_unpassed_argument
from ddplint.project.queries import Project

BUILDER = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def build(data, world_size=0):
    sampler = None
    if world_size > 1:
        sampler = DistributedSampler(data, num_replicas=world_size)
    return DataLoader(data, sampler=sampler)
"""


def _sampler_needs_unpassed(path: Path) -> bool:
    source = path.read_text()
    ctx = FileContext(str(path), source, cst.parse_module(source), Project.load([str(path)]))
    call = next(c for c in ctx.calls if ctx.code(c.func) == "DistributedSampler")
    return needs_unpassed_argument(ctx, call)


def test_a_branch_no_call_of_the_project_takes_needs_an_unpassed_argument(write):
    write("pyproject.toml", "")
    builder = write("data.py", BUILDER)
    write(
        "train.py",
        "import torch.distributed as dist\nfrom data import build\n\n"
        "dist.init_process_group('nccl')\nloader = build(dataset)\n",
    )
    assert _sampler_needs_unpassed(builder)


def test_a_call_in_another_module_passing_the_value_takes_it(write):
    write("pyproject.toml", "")
    builder = write("data.py", BUILDER)
    write(
        "train.py",
        "import torch.distributed as dist\nfrom data import build\n\n"
        "dist.init_process_group('nccl')\n"
        "loader = build(dataset, world_size=dist.get_world_size())\n",
    )
    assert not _sampler_needs_unpassed(builder)


def test_a_call_in_the_file_passing_the_value_takes_it(write):
    write("pyproject.toml", "")
    builder = write("data.py", BUILDER + "\n\nloader = build(dataset, 8)\n")
    assert not _sampler_needs_unpassed(builder)


def test_a_function_handed_on_gets_its_arguments_out_of_sight(write):
    write("pyproject.toml", "")
    builder = write(
        "data.py",
        BUILDER + "\n\nimport torch.multiprocessing as mp\n\nloader = build(dataset)\n"
        "mp.spawn(build, args=(dataset, 8), nprocs=8)\n",
    )
    assert not _sampler_needs_unpassed(builder)


def test_the_branch_the_default_takes_runs(write):
    write("pyproject.toml", "")
    builder = write(
        "data.py",
        BUILDER.replace("if world_size > 1:", "if world_size <= 1:")
        + "\n\nloader = build(dataset)\n",
    )
    assert not _sampler_needs_unpassed(builder)


def test_a_function_another_module_hands_on_gets_its_arguments_out_of_sight(write):
    write("pyproject.toml", "")
    builder = write("data.py", BUILDER + "\n\nloader = build(dataset)\n")
    write(
        "jobs.py",
        "# from data import build  (the old entry point)\nfrom data import build\n\n"
        "jobs = [pool.submit(build, d, world_size=8) for d in sets]\n",
    )
    assert not _sampler_needs_unpassed(builder)


def test_a_commented_out_mention_elsewhere_hands_nothing_on(write):
    write("pyproject.toml", "")
    builder = write("data.py", BUILDER + "\n\nloader = build(dataset)\n")
    write("notes.py", "# build is the loader factory of data.py\nVERSION = 2\n")
    assert _sampler_needs_unpassed(builder)


BY_KIND = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def build(data, kind="shuffled"):
    if kind == "shuffled":
        return DataLoader(data, sampler=DistributedSampler(data, shuffle=True))
    return DataLoader(data)


def main(dataset):
    dist.init_process_group("nccl")
    return build(dataset, kind={kind})
"""


def test_a_branch_every_call_passes_another_literal_for_needs_it(write):
    """The branch needs the default, and the only call passes another literal: no call in
    sight takes it."""
    write("pyproject.toml", "")
    assert _sampler_needs_unpassed(write("train.py", BY_KIND.format(kind='"streamed"')))


def test_a_call_passing_the_literal_or_a_variable_may_take_it(write):
    write("pyproject.toml", "")
    assert not _sampler_needs_unpassed(write("train.py", BY_KIND.format(kind='"shuffled"')))
    assert not _sampler_needs_unpassed(write("train.py", BY_KIND.format(kind="dataset.kind")))


SWITCHED = BUILDER.replace("world_size=0", "sharded=False").replace(
    "if world_size > 1:", "if sharded:"
)


def test_calls_only_from_one_process_modules_decide_by_what_they_pass(write):
    # WavCaps' captioning: the only caller names no distributed API and passes False
    write("pyproject.toml", "")
    builder = write("data.py", SWITCHED)
    write("train.py", "from data import build\n\nloader = build(dataset, sharded=False)\n")
    assert _sampler_needs_unpassed(builder)


def test_a_one_process_caller_passing_true_or_a_variable_takes_the_branch(write):
    write("pyproject.toml", "")
    builder = write("data.py", SWITCHED)
    caller = write("train.py", "from data import build\n\nloader = build(dataset, True)\n")
    assert not _sampler_needs_unpassed(builder)
    caller.write_text("from data import build\n\nloader = build(dataset, sharded=flag)\n")
    assert not _sampler_needs_unpassed(builder)


def test_a_one_process_module_handing_the_function_on_passes_out_of_sight(write):
    write("pyproject.toml", "")
    builder = write("data.py", SWITCHED)
    write(
        "train.py",
        "from functools import partial\nfrom data import build\n\n"
        "make = partial(build, dataset)\nloader = build(dataset, sharded=False)\n",
    )
    assert not _sampler_needs_unpassed(builder)


def test_a_same_named_function_of_another_module_is_not_a_call_of_this_one(write):
    # WavCaps' retrieval/ and captioning/ each hold data_handling/pretrain_dataset.py
    write("pyproject.toml", "")
    builder = write("captioning/data.py", SWITCHED)
    write(
        "captioning/train.py",
        "import torch.distributed as dist\nfrom data import build\n\n"
        "dist.init_process_group('nccl')\nloader = build(dataset, sharded=False)\n",
    )
    write("retrieval/data.py", SWITCHED)
    write(
        "retrieval/train.py",
        "import torch.distributed as dist\nfrom data import build\n\n"
        "dist.init_process_group('nccl')\nloader = build(dataset, sharded=True)\n",
    )
    assert _sampler_needs_unpassed(builder)


def test_a_library_api_function_gets_its_arguments_from_its_users(write):
    # composer's `export_for_inference(load_path=...)`: no call of the project passes it
    write("pyproject.toml", "[project]\nname = 'loaders'\nversion = '1.0'\n")
    builder = write("loaders/data.py", '__all__ = ["build"]\n\n' + BUILDER)
    write("loaders/__init__.py", "")
    write(
        "train.py",
        "import torch.distributed as dist\nfrom loaders.data import build\n\n"
        "dist.init_process_group('nccl')\nloader = build(dataset)\n\n"
        "if __name__ == '__main__':\n    pass\n",
    )
    assert not _sampler_needs_unpassed(builder)
    builder.write_text(BUILDER)  # not offered: `__all__` and the package do not name it
    assert _sampler_needs_unpassed(builder)


FORWARDING = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def build(data, world_size=0):
    sampler = None
    if world_size > 1:
        sampler = DistributedSampler(data, num_replicas=world_size)
    return DataLoader(data, sampler=sampler)


def run(data, epochs, world_size=0):
    loader = build(data, world_size)
    for _ in range(epochs):
        for batch in loader:
            print(batch)
"""


def test_a_parameter_forwarded_by_a_caller_that_no_call_gives_the_value(write):
    write("pyproject.toml", "")
    builder = write("data.py", FORWARDING)
    write(
        "train.py",
        "import torch.distributed as dist\nfrom data import run\n\n"
        "dist.init_process_group('nccl')\nrun(dataset, 10, 1)\n",
    )
    assert _sampler_needs_unpassed(builder)


def test_a_forwarded_parameter_a_caller_gives_the_value_takes_it(write):
    write("pyproject.toml", "")
    builder = write("data.py", FORWARDING)
    write(
        "train.py",
        "import torch.distributed as dist\nfrom data import run\n\n"
        "dist.init_process_group('nccl')\nrun(dataset, 10, dist.get_world_size())\n",
    )
    assert not _sampler_needs_unpassed(builder)
