"""DDP015-DDP020: DataParallel, find_unused_parameters, BatchNorm, device and sampler ranks."""

from __future__ import annotations

import textwrap

import pytest
from source_rows import rows

from ddplint.api import fix_source, lint_source

HEADER = """\
import os
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
"""


def src(body: str, header: str = HEADER) -> str:
    return header + textwrap.dedent(body)


def findings(source: str, code: str):
    return lint_source(source, select=[code])


# -- DDP015 --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("import torch", "torch.nn.DataParallel(net)"),
        ("import torch.nn as nn", "nn.DataParallel(net)"),
        ("from torch import nn", "nn.parallel.DataParallel(net)"),
        ("from torch.nn import DataParallel as DP", "DP(net)"),
        ("from torch.nn.parallel import DataParallel", "DataParallel(net)"),
        ("import torch.nn.parallel.data_parallel as dpmod", "dpmod.DataParallel(net)"),
    ],
)
def test_ddp015_every_spelling_in_a_plain_torch_script(imports, call):
    source = f"{imports}\n\nnet = build()\nmodel = {call}\n"
    assert rows(source, "DDP015") == [4]


def test_ddp015_not_for_isinstance_or_a_same_named_local_class():
    source = src("""
    class DataParallel:
        pass

    def unwrap(m):
        return m.module if isinstance(m, (nn.DataParallel, DDP)) else m

    wrapper = DataParallel()
    """)
    assert rows(source, "DDP015") == []


def test_ddp015_dataparallel_fallback_next_to_ddp_is_left_alone():
    source = src("""
    model = nn.Linear(2, 2).cuda()
    if "LOCAL_RANK" in os.environ:
        model = DDP(model, device_ids=[int(os.environ["LOCAL_RANK"])])
    else:
        model = nn.DataParallel(model)
    """)
    assert rows(source, "DDP015") == []


def test_ddp015_fix_uses_the_files_ddp_name_and_local_rank():
    source = textwrap.dedent("""\
    import os
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as Wrap

    def main():
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        model = nn.DataParallel(nn.Linear(2, 2).cuda())  # multi-gpu
        return isinstance(model, Wrap)
    """)
    fixed = fix_source(source, unsafe=True, select=["DDP015"])
    assert (
        "    model = Wrap(nn.Linear(2, 2).cuda(), device_ids=[local_rank])  # multi-gpu\n" in fixed
    )
    assert fix_source(source, unsafe=False, select=["DDP015"]) == source


def test_ddp015_no_fix_without_process_group_or_local_rank_or_with_extra_args():
    no_group = "import torch\nlocal_rank = 0\nm = torch.nn.DataParallel(net)\n"
    extra_args = src("""
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    m = nn.DataParallel(net, device_ids=[0, 1])
    """)
    moved_after = src("""
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    m = nn.DataParallel(net).cuda()
    """)
    no_rank = src("""
    dist.init_process_group("nccl")
    m = nn.DataParallel(net)
    """)
    for source in (no_group, extra_args, moved_after, no_rank):
        (diagnostic,) = findings(source, "DDP015")
        assert diagnostic.fix is None
        assert "GIL" in diagnostic.message


def test_ddp015_local_rank_defined_after_the_call_is_not_used_by_the_fix():
    source = src("""
    dist.init_process_group("nccl")
    m = nn.DataParallel(net)
    local_rank = int(os.environ["LOCAL_RANK"])
    """)
    (diagnostic,) = findings(source, "DDP015")
    assert diagnostic.fix is None


# -- DDP016 --------------------------------------------------------------------------------


def test_ddp016_reports_the_argument():
    source = src("""
    model = DDP(net, device_ids=[local_rank], find_unused_parameters=True)
    """)
    (diagnostic,) = findings(source, "DDP016")
    assert (diagnostic.start.row, diagnostic.start.column) == (8, 43)
    assert "TORCH_DISTRIBUTED_DEBUG" in diagnostic.message
    assert diagnostic.fix is None


@pytest.mark.parametrize(
    "value",
    ["False", "args.find_unused", "cfg['find_unused']", "unused"],
)
def test_ddp016_leaves_non_constant_values_alone(value):
    source = src(f"""
    unused = False
    if args.moe:
        unused = True
    model = DDP(net, device_ids=[local_rank], find_unused_parameters={value})
    """)
    assert rows(source, "DDP016") == []


def test_ddp016_other_constructors_with_the_same_keyword_are_ignored():
    source = src("""
    from accelerate import DistributedDataParallelKwargs
    kwargs = DistributedDataParallelKwargs(find_unused_parameters=True)
    """)
    assert rows(source, "DDP016") == []


# -- DDP017 --------------------------------------------------------------------------------

TV = HEADER + "import torchvision\n"


def test_ddp017_fix_inserts_conversion_before_the_wrap():
    source = src(
        """
    def main(local_rank):
        model = torchvision.models.resnet18().cuda(local_rank)
        model = DDP(model, device_ids=[local_rank])
        return model
    """,
        TV,
    )
    assert rows(source, "DDP017") == [11]
    fixed = fix_source(source, unsafe=True, select=["DDP017"])
    assert fixed == source.replace(
        "    model = DDP(",
        "    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n    model = DDP(",
    )
    assert rows(fixed, "DDP017") == []


def test_ddp017_follows_the_model_into_a_wrap_helper():
    source = src("""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))

    def wrap(m, local_rank):
        return DDP(m.to(local_rank), device_ids=[local_rank])

    plain = wrap(nn.Linear(3, 3), 0)
    with_bn = wrap(Net(), 0)
    """)
    assert rows(source, "DDP017") == [14]


@pytest.mark.parametrize(
    "build",
    [
        "torchvision.models.vit_b_16()",
        "torchvision.models.resnet50(norm_layer=nn.Identity)",
        "torchvision.models.detection.fasterrcnn_resnet50_fpn()",
        "nn.Sequential(nn.Conv2d(3, 8, 3), nn.GroupNorm(2, 8))",
    ],
)
def test_ddp017_models_without_trainable_batchnorm(build):
    source = src(
        f"""
    extra = nn.BatchNorm1d(4)
    model = {build}
    model = DDP(model.cuda(), device_ids=[local_rank])
    """,
        TV,
    )
    assert rows(source, "DDP017") == []


def test_ddp017_sync_bn_anywhere_in_the_file_silences_it():
    source = src(
        """
    model = torchvision.models.resnet50()
    if args.sync_bn:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DDP(model.cuda(), device_ids=[local_rank])
    """,
        TV,
    )
    assert rows(source, "DDP017") == []


# -- DDP018 --------------------------------------------------------------------------------


def test_ddp018_every_device_choice_from_the_global_rank():
    source = src("""
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    model = DDP(net.to(f"cuda:{rank}"), device_ids=[rank], output_device=rank)
    x = x.cuda(int(os.environ["RANK"]))
    """)
    assert rows(source, "DDP018") == [9, 10, 11, 11, 12]
    assert all("LOCAL_RANK" in d.message for d in findings(source, "DDP018"))


def test_ddp018_follows_a_global_rank_into_a_helper_parameter():
    source = src("""
    def place(model, gpu):
        return model.cuda(gpu)

    def main():
        rank = int(os.environ["RANK"])
        local_rank = int(os.environ["LOCAL_RANK"])
        place(net, local_rank)
        place(net, rank)
    """)
    assert rows(source, "DDP018") == [9]


@pytest.mark.parametrize(
    "value",
    [
        'int(os.environ["LOCAL_RANK"])',
        "args.local_rank",
        "dist.get_rank() % torch.cuda.device_count()",
        'int(os.environ["SLURM_LOCALID"])',
    ],
)
def test_ddp018_local_ranks_are_fine(value):
    source = src(f"""
    rank = {value}
    torch.cuda.set_device(rank)
    model = DDP(net.cuda(rank), device_ids=[rank])
    """)
    assert rows(source, "DDP018") == []


def test_ddp018_args_rank_assigned_from_local_rank_is_fine_but_unbound_args_rank_is_not():
    bound = src("""
    args.rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.rank)
    """)
    unbound = src("""
    torch.cuda.set_device(args.rank)
    """)
    assert rows(bound, "DDP018") == []
    assert rows(unbound, "DDP018") == [8]


def test_ddp018_process_group_built_from_the_local_rank_is_single_node():
    source = src("""
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl", rank=local_rank, world_size=torch.cuda.device_count())
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    """)
    assert rows(source, "DDP018") == []


def test_ddp018_spawn_index_is_not_a_global_rank():
    source = src("""
    import torch.multiprocessing as mp

    def train(rank, world_size):
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        torch.cuda.set_device(rank)
        model = DDP(net.to(rank), device_ids=[rank])

    mp.spawn(train, args=(4,), nprocs=4)
    """)
    assert rows(source, "DDP018") == []


# -- DDP019 --------------------------------------------------------------------------------


def test_ddp019_fix_removes_keyword_and_blanks_positional():
    source = src("""
    local_rank = int(os.environ["LOCAL_RANK"])
    a = DistributedSampler(ds, rank=local_rank, shuffle=True)
    b = DistributedSampler(ds, dist.get_world_size(), local_rank, True)
    c = DistributedSampler(ds, shuffle=False, rank=local_rank)
    """)
    assert rows(source, "DDP019") == [9, 10, 11]
    fixed = fix_source(source, unsafe=True, select=["DDP019"])
    assert fixed.endswith(
        "a = DistributedSampler(ds, shuffle=True)\n"
        "b = DistributedSampler(ds, dist.get_world_size(), None, True)\n"
        "c = DistributedSampler(ds, shuffle=False)\n"
    )
    assert fix_source(source, unsafe=False, select=["DDP019"]) == source


def test_ddp019_num_replicas_from_device_count_directly_or_through_a_name():
    source = src("""
    n = torch.cuda.device_count()
    a = DistributedSampler(ds, num_replicas=n, rank=dist.get_rank())
    b = DistributedSampler(ds, num_replicas=dist.get_world_size(), rank=dist.get_rank())
    """)
    (diagnostic,) = findings(source, "DDP019")
    assert diagnostic.start.row == 9
    assert "num_replicas" in diagnostic.message


def test_ddp019_global_ranks_and_single_node_groups_are_fine():
    global_rank = src("""
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    s = DistributedSampler(ds, num_replicas=int(os.environ["WORLD_SIZE"]), rank=rank)
    """)
    single_node = src("""
    def worker(local_rank):
        n = torch.cuda.device_count()
        dist.init_process_group("nccl", rank=local_rank, world_size=n)
        s = DistributedSampler(ds, num_replicas=n, rank=local_rank)
    """)
    assert rows(global_rank, "DDP019") == []
    assert rows(single_node, "DDP019") == []


# -- DDP020 --------------------------------------------------------------------------------


def test_ddp020_flags_default_device_uses_and_fix_inserts_set_device():
    source = src("""
    def main():
        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
        model = DDP(nn.Linear(2, 2).cuda())
        batch = torch.ones(2, device="cuda")
        out = model(batch.to("cuda"))
    """)
    assert rows(source, "DDP020") == [11, 12, 13]
    fixed = fix_source(source, unsafe=True, select=["DDP020"])
    assert fixed == source.replace(
        '    dist.init_process_group("nccl")',
        '    torch.cuda.set_device(local_rank)\n    dist.init_process_group("nccl")',
    )
    assert rows(fixed, "DDP020") == []


def test_ddp020_device_string_variable_reported_once_at_its_definition():
    source = src("""
    dist.init_process_group("nccl")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Linear(2, 2).to(device)
    x = x.to(device)
    """)
    assert rows(source, "DDP020") == [9]


@pytest.mark.parametrize(
    "setup",
    [
        "torch.cuda.set_device(int(os.environ['LOCAL_RANK']))",
        "os.environ['CUDA_VISIBLE_DEVICES'] = os.environ['LOCAL_RANK']",
        "model = DDP(nn.Linear(2, 2).cuda(args.gpu), device_ids=[args.gpu])",
        "from utils import setup_gpu; setup_gpu(int(os.environ['LOCAL_RANK']))",
        "from common.dist import setup_distributed; setup_distributed()",
    ],
)
def test_ddp020_any_per_rank_device_choice_silences_it(setup):
    source = src(f"""
    {setup}
    dist.init_process_group("nccl")
    x = torch.zeros(3).cuda()
    """)
    assert rows(source, "DDP020") == []


def test_ddp020_device_type_arguments_and_stdlib_calls():
    source = src("""
    import logging
    local_rank = int(os.environ["LOCAL_RANK"])
    logging.info("local rank %d", local_rank)
    dist.init_process_group("nccl")
    scaler = torch.amp.GradScaler(device="cuda")
    with torch.autocast(device_type="cuda"):
        y = net(x.cuda())
    """)
    assert rows(source, "DDP020") == [14]


def test_ddp020_only_in_the_file_that_initialises_the_process_group():
    engine = src("""
    def evaluate(model, loader):
        total = torch.zeros(1).cuda()
        dist.all_reduce(total)
        return total
    """)
    assert rows(engine, "DDP020") == []
    assert rows(engine + 'dist.init_process_group("nccl")\n', "DDP020") == [9]
