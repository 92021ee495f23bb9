"""Vocabulary of the second holdout set (issue 8, classes S4-S7): other data-parallel
wrappers, a device mesh's ranks, torchrun's launcher API, a `--local_rank` a spawned
worker overwrites. Each pinned with its boundary: what stays reported."""

from __future__ import annotations

import textwrap

from ddplint.api import lint_source


def rows(source: str, code: str) -> list[int]:
    return [d.start.row for d in lint_source(textwrap.dedent(source), select=[code])]


# -- S4, DDP015: DataParallel beside another multi-process wrapper ---------------------------

DP_FALLBACK = """\
import torch
{imports}

def wrap(model, distributed):
    if distributed:
        return {wrap}
    return torch.nn.DataParallel(model)

def train(model, opt, x):
    model = wrap(model, True)
    model(x).sum().backward()
    opt.step()
"""


def test_ddp015_apex_or_deepspeed_wrap_makes_data_parallel_a_fallback():
    apex = DP_FALLBACK.format(
        imports="from apex.parallel import DistributedDataParallel",
        wrap="DistributedDataParallel(model)",
    )
    deepspeed = DP_FALLBACK.format(
        imports="import deepspeed", wrap="deepspeed.initialize(model=model)[0]"
    )
    assert rows(apex, "DDP015") == []
    assert rows(deepspeed, "DDP015") == []


def test_ddp015_other_wrapper_named_like_apex_still_reported():
    """An unknown wrapper is no multi-process wrap: a DataParallel that is not on the
    single-process side of a switch stays reported (the switched one is a fallback)."""
    own = DP_FALLBACK.format(
        imports="from mylib import DistributedDataParallel", wrap="DistributedDataParallel(model)"
    )
    assert rows(own, "DDP015") == []
    always = own.replace("    return torch.nn.DataParallel(model)", "    return model").replace(
        "    model = wrap(model, True)", "    model = torch.nn.DataParallel(wrap(model, True))"
    )
    assert rows(always, "DDP015") == [10]


# -- S7, DDP019: a device mesh's `get_local_rank` ------------------------------------------

SAMPLER = """\
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.utils.data import DistributedSampler
import comm

def loader(data, mesh):
    dp = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))["dp"]
    a = DistributedSampler(data, rank=mesh["dp"].get_local_rank(), drop_last=True)
    b = DistributedSampler(data, rank=mesh.get_local_rank("dp"), drop_last=True)
    c = DistributedSampler(data, rank=dp.get_local_rank(), drop_last=True)
    d = DistributedSampler(data, rank=comm.get_local_rank(), drop_last=True)
    return a, b, c, d
"""


def test_ddp019_mesh_coordinate_is_not_the_node_local_rank():
    assert rows(SAMPLER, "DDP019") == [11]  # only the project helper's node-local rank


# -- S6, DDP022: torchrun's programmatic API -------------------------------------------------


def test_ddp022_launcher_api_is_not_the_deprecated_launch_module():
    api = "from torch.distributed.launcher.api import LaunchConfig, elastic_launch\n"
    submodule = "import torch.distributed.launcher as launcher\n"
    assert rows(api, "DDP022") == []
    assert rows(submodule, "DDP022") == []
    assert rows("import torch.distributed.launch\n", "DDP022") == [1]
    assert rows("from torch.distributed.launch import main\n", "DDP022") == [1]


# -- S5, DDP022: `--local_rank` overwritten by the spawned worker ----------------------------

SPAWN = """\
import argparse
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)

def worker(index, args):
{body}

if __name__ == "__main__":
    mp.spawn(worker, nprocs=2, args=(parser.parse_args(),))
"""


def spawn(body: str) -> str:
    return SPAWN.format(body=textwrap.indent(textwrap.dedent(body), "    "))


def test_ddp022_local_rank_overwritten_before_every_read_is_a_leftover():
    body = """
    args.local_rank = index
    dist.init_process_group("nccl", rank=index, world_size=2)
    torch.cuda.set_device(args.local_rank)
    """
    assert rows(spawn(body), "DDP022") == []


def test_ddp022_local_rank_read_before_or_beside_a_conditional_overwrite_is_reported():
    read_first = """
    torch.cuda.set_device(args.local_rank)
    args.local_rank = index
    dist.init_process_group("nccl", rank=index, world_size=2)
    """
    conditional = """
    if index > 0:
        args.local_rank = index
    dist.init_process_group("nccl", rank=index, world_size=2)
    torch.cuda.set_device(args.local_rank)
    """
    other_namespace = """
    opts = args
    config.local_rank = index
    dist.init_process_group("nccl", rank=index, world_size=2)
    torch.cuda.set_device(opts.local_rank)
    """
    assert rows(spawn(read_first), "DDP022") == [7]
    assert rows(spawn(conditional), "DDP022") == [7]
    assert rows(spawn(other_namespace), "DDP022") == [7]
