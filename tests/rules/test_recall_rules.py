"""DDP027-DDP031: what changes when one process becomes N (seeds, metrics, world size,
epoch order, SyncBatchNorm), each reported only where the code proves it."""

from __future__ import annotations

import textwrap

from source_rows import line_of, rows

from ddplint.api import fix_source, lint_source

HEADER = """\
import os
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
"""


def src(body: str) -> str:
    return HEADER + textwrap.dedent(body)


# -- DDP027: a per-rank sampler seed ------------------------------------------------------


def test_ddp027_seed_offset_by_the_rank_is_reported_with_the_share_never_seen():
    source = src(
        """
        def main(args, ds):
            dist.init_process_group("nccl")
            seed = args.seed + dist.get_rank()
            torch.manual_seed(seed)
            return DistributedSampler(ds, seed=seed, drop_last=True)
        """
    )
    found = lint_source(source, select=["DDP027"])
    assert [d.start.row for d in found] == [line_of(source, "DistributedSampler(ds")]
    assert "34% with 8" in found[0].message


def test_ddp027_follows_a_helper_of_the_file_returning_a_rank_offset():
    source = src(
        """
        def rank_seed(base):
            return base + int(os.environ["RANK"])

        def main(ds):
            dist.init_process_group("nccl")
            return DistributedSampler(ds, seed=rank_seed(0), drop_last=True)
        """
    )
    assert rows(source, "DDP027") == [line_of(source, "seed=rank_seed")]


def test_ddp027_a_name_is_decided_by_its_value_not_its_spelling():
    source = src(
        """
        def main(ds, args):
            dist.init_process_group("nccl")
            local_rank = 0  # the reference run: one seed for every process
            return DistributedSampler(ds, seed=args.seed + local_rank, drop_last=True)
        """
    )
    assert rows(source, "DDP027") == []


def test_ddp027_an_attribute_stored_in_another_function_is_not_proof():
    source = src(
        """
        def configure(args):
            args.seed = args.seed + dist.get_rank()

        def build(args, ds):
            dist.init_process_group("nccl")
            return DistributedSampler(ds, seed=args.seed, drop_last=True)
        """
    )
    assert rows(source, "DDP027") == []


def test_ddp027_silent_without_shuffling_or_for_another_split():
    source = src(
        """
        def main(ds, seed):
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            a = DistributedSampler(ds, shuffle=False, seed=seed + rank)
            b = DistributedSampler(ds, num_replicas=1, rank=0, seed=seed + rank)
            c = [DistributedSampler(ds, num_replicas=4, rank=r, seed=seed + r) for r in range(4)]
            return a, b, c
        """
    )
    assert rows(source, "DDP027") == []


def test_ddp027_a_shared_seed_is_clean():
    source = src(
        """
        def main(ds, args):
            dist.init_process_group("nccl")
            torch.manual_seed(args.seed + dist.get_rank())
            return DistributedSampler(ds, seed=args.seed, drop_last=True)
        """
    )
    assert rows(source, "DDP027") == []


# -- DDP028: a shard's count divided by the whole dataset ---------------------------------

EVAL = """
def evaluate(model, loader):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
{tail}

def main(model, test_set):
    dist.init_process_group("nccl")
    loader = DataLoader(test_set, batch_size=64, {sampler})
    evaluate(model, loader)
"""


def evaluation(tail: str, sampler: str = "sampler=DistributedSampler(test_set, shuffle=False)"):
    return src(EVAL.format(tail=textwrap.indent(textwrap.dedent(tail), "    "), sampler=sampler))


def test_ddp028_accuracy_over_the_whole_dataset_is_reported_in_numbers():
    source = evaluation("print(correct / len(loader.dataset))")
    found = lint_source(source, select=["DDP028"])
    assert [d.start.row for d in found] == [line_of(source, "print(correct")]
    assert "with 8 processes the value reads about 1/8 of the true one" in found[0].message


def test_ddp028_a_cuda_synchronize_combines_nothing():
    source = evaluation(
        """
        torch.cuda.synchronize()
        print(correct / len(loader.dataset))
        """
    )
    assert rows(source, "DDP028") == [line_of(source, "print(correct")]


def test_ddp028_the_dataset_itself_measured_counts_too():
    source = src(
        """
        def main(model, test_set):
            dist.init_process_group("nccl")
            loader = DataLoader(test_set, sampler=DistributedSampler(test_set, shuffle=False))
            total_loss = 0.0
            for x, y in loader:
                total_loss += nn.functional.mse_loss(model(x), y, reduction="sum").item()
            n = len(test_set)
            total_loss /= n
            print(total_loss)
        """
    )
    assert rows(source, "DDP028") == [line_of(source, "total_loss /= n")]


def test_ddp028_silent_when_the_counts_are_combined_or_per_rank():
    reduced = evaluation(
        """
        t = torch.tensor([correct], device="cuda")
        dist.all_reduce(t)
        print(t.item() / len(loader.dataset))
        """
    )
    helper = evaluation(
        """
        correct = reduce_tensor(torch.tensor(correct))
        print(correct / len(loader.dataset))
        """
    )
    seen = evaluation("print(correct / len(loader))")
    assert rows(reduced, "DDP028") == rows(helper, "DDP028") == rows(seen, "DDP028") == []


def test_ddp028_silent_when_every_rank_sees_every_sample():
    assert rows(evaluation("print(correct / len(loader.dataset))", "shuffle=False"), "DDP028") == []


def test_ddp028_a_returned_share_summed_by_the_caller_is_right():
    source = src(
        """
        def share(model, loader):
            correct = 0
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
            return correct / len(loader.dataset)

        def main(model, test_set):
            dist.init_process_group("nccl")
            loader = DataLoader(test_set, sampler=DistributedSampler(test_set, shuffle=False))
            t = torch.tensor(share(model, loader))
            dist.all_reduce(t)
        """
    )
    assert rows(source, "DDP028") == []


def test_ddp028_silent_when_the_loader_cannot_be_traced():
    source = src(
        """
        def evaluate(model, loader):
            correct = 0
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
            print(correct / len(loader.dataset))
        """
    )
    assert rows(source, "DDP028") == []


# -- DDP029: the device count as the world size -------------------------------------------


def test_ddp029_batch_split_and_lr_scaled_by_the_device_count():
    source = src(
        """
        def main(args):
            dist.init_process_group("nccl")
            ngpus = torch.cuda.device_count()
            batch = args.batch_size // ngpus
            lr = args.lr * ngpus
            return batch, lr
        """
    )
    found = lint_source(source, select=["DDP029"])
    assert [d.start.row for d in found] == [
        line_of(source, "batch = args"),
        line_of(source, "lr = args"),
    ]
    assert "2 nodes of 8 GPUs" in found[0].message


def test_ddp029_silent_for_a_device_pick_a_spawn_sized_job_or_dataparallel():
    pick = src(
        """
        def main(args):
            dist.init_process_group("nccl")
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
            return args.batch_size // dist.get_world_size()
        """
    )
    spawned = src(
        """
        def worker(rank, n, args):
            dist.init_process_group("nccl", rank=rank, world_size=n)
            return args.batch_size // n

        if __name__ == "__main__":
            n = torch.cuda.device_count()
            mp.spawn(worker, args=(n, None), nprocs=n)
        """
    )
    data_parallel = src(
        """
        def main(args, model):
            if args.ddp:
                dist.init_process_group("nccl")
            else:
                model = nn.DataParallel(model)
            return args.batch_size // torch.cuda.device_count()
        """
    )
    for source in (pick, spawned, data_parallel):
        assert rows(source, "DDP029") == []


def test_ddp029_the_distributed_branch_of_a_script_with_a_dataparallel_fallback():
    source = src(
        """
        def main(args, model, batch_size):
            ngpus = torch.cuda.device_count()
            if args.distributed:
                dist.init_process_group("nccl")
                batch_size = batch_size // ngpus
                model = DDP(model.cuda(), device_ids=[int(os.environ["LOCAL_RANK"])])
            else:
                model = nn.DataParallel(model)
            return model, batch_size
        """
    )
    assert rows(source, "DDP029") == [line_of(source, "batch_size = batch_size //")]


def test_ddp029_a_metric_is_averaged_only_after_a_sum():
    summed = src(
        """
        def mean(t):
            dist.all_reduce(t)
            return t / torch.cuda.device_count()

        def main():
            dist.init_process_group("nccl")
        """
    )
    maximum = summed.replace("dist.all_reduce(t)", "dist.all_reduce(t, op=dist.ReduceOp.MAX)")
    assert rows(summed, "DDP029") == [line_of(summed, "return t /")]
    assert rows(maximum, "DDP029") == []


# -- DDP002: a sampler built anew in every epoch ------------------------------------------

REBUILT = """
def main(train_set, model, epochs):
    dist.init_process_group("nccl")
    for epoch in range(epochs):
        {build}
        loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        for x, y in loader:
            model(x).sum().backward()
"""


def rebuilt(build: str) -> str:
    return src(REBUILT.format(build=build))


def test_ddp002_a_sampler_rebuilt_each_epoch_repeats_its_order_and_gets_no_fix():
    source = rebuilt("sampler = DistributedSampler(train_set, drop_last=True)")
    found = lint_source(source, select=["DDP002"])
    assert [d.start.row for d in found] == [line_of(source, "for epoch")]
    assert "each new sampler starts at epoch 0" in found[0].message
    assert found[0].fix is None


def test_ddp002_a_rebuilt_sampler_is_clean_when_told_the_epoch_or_seeded_by_it():
    told = rebuilt(
        "sampler = DistributedSampler(train_set, drop_last=True); sampler.set_epoch(epoch)"
    )
    seeded = rebuilt("sampler = DistributedSampler(train_set, seed=100 + epoch, drop_last=True)")
    unshuffled = rebuilt("sampler = DistributedSampler(train_set, shuffle=False)")
    for source in (told, seeded, unshuffled):
        assert rows(source, "DDP002") == []


def test_ddp002_a_dataset_changed_each_pass_is_not_an_epoch_repeat():
    source = rebuilt("train_set.resample(); sampler = DistributedSampler(train_set)")
    assert rows(source, "DDP002") == []


def test_ddp002_a_new_dataset_each_pass_is_not_an_epoch_repeat():
    source = src(
        """
        def main(make_stage, model):
            dist.init_process_group("nccl")
            for level in range(4):
                stage = make_stage(level)
                sampler = DistributedSampler(stage, drop_last=True)
                for x, y in DataLoader(stage, batch_size=8, sampler=sampler):
                    model(x).sum().backward()
        """
    )
    assert rows(source, "DDP002") == []


# -- DDP031: a --sync-bn option nothing reads ---------------------------------------------

SYNC_BN = """
import argparse

def main(model):
    parser = argparse.ArgumentParser()
    parser.add_argument("--sync-bn", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("nccl")
{use}
"""


def sync_bn(use: str) -> str:
    return src(SYNC_BN.format(use=textwrap.indent(textwrap.dedent(use), "    ")))


def test_ddp031_an_option_shown_but_never_applied_is_reported():
    source = sync_bn('print("sync bn:", args.sync_bn)')
    found = lint_source(source, select=["DDP031"])
    assert [d.start.row for d in found] == [line_of(source, "add_argument")]
    assert "`--sync-bn` is parsed but its value (`sync_bn`) is never used" in found[0].message


def test_ddp031_silent_when_the_value_decides_or_may_be_read_elsewhere():
    decided = sync_bn(
        """
        if args.sync_bn:
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        """
    )
    as_dict = sync_bn("config = dict(vars(args))")
    to_library = sync_bn(
        """
        import somelib
        somelib.build(args)
        """
    )
    converted = sync_bn("model = nn.SyncBatchNorm.convert_sync_batchnorm(model)")
    for source in (decided, as_dict, to_library, converted):
        assert rows(source, "DDP031") == []


def test_ddp031_reads_the_other_files_of_the_project(cli, write, tmp_path):
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    train = write(
        "train.py",
        """\
        import argparse
        import torch.distributed as dist
        from model import build

        parser = argparse.ArgumentParser()
        parser.add_argument("--sync_bn", action="store_true")
        args = parser.parse_args()
        dist.init_process_group("nccl")
        net = build(args)
        """,
    )
    model = write(
        "model.py",
        """\
        def build(args):
            return args
        """,
    )
    found = cli("check", "--no-cache", "--isolated", "--select", "DDP031", train)
    assert "DDP031" in found.out
    model.write_text("def build(args):\n    return args.sync_bn\n", encoding="utf-8")
    found = cli("check", "--no-cache", "--isolated", "--select", "DDP031", train)
    assert "DDP031" not in found.out


# -- DDP032: gloo for a CUDA model --------------------------------------------------------


def test_ddp032_gloo_with_a_cuda_model_is_reported_with_an_unsafe_fix():
    source = src(
        """
        def main(model, local_rank):
            dist.init_process_group("gloo")
            torch.cuda.set_device(local_rank)
            return DDP(model.cuda(local_rank), device_ids=[local_rank])
        """
    )
    assert rows(source, "DDP032") == [line_of(source, 'init_process_group("gloo")')]
    fixed = fix_source(source, unsafe=True, select=["DDP032"])
    assert 'init_process_group("nccl")' in fixed


def test_ddp032_silent_for_cpu_models_chosen_backends_and_side_groups():
    cpu = src(
        """
        def main(model):
            dist.init_process_group("gloo")
            x = torch.ones(2).cuda()
            return DDP(model)
        """
    )
    chosen = src(
        """
        def main(model, rank):
            dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
            return DDP(model.cuda(rank), device_ids=[rank])
        """
    )
    side = src(
        """
        def main(model, rank):
            dist.init_process_group("gloo")
            fast = dist.new_group(backend="nccl")
            return DDP(model.cuda(rank), device_ids=[rank], process_group=fast)
        """
    )
    guarded = src(
        """
        def main(model, args):
            dist.init_process_group("gloo")
            if args.gpu is not None:
                model = DDP(model.cuda(args.gpu), device_ids=[args.gpu])
            return model
        """
    )
    for source in (cpu, chosen, side, guarded):
        assert rows(source, "DDP032") == []


def test_ddp029_follows_the_count_through_an_attribute_and_a_helper_parameter():
    source = src(
        """
        def reduce_mean(tensor, nprocs):
            rt = tensor.clone()
            dist.all_reduce(rt, op=dist.ReduceOp.SUM)
            rt /= nprocs
            return rt

        def main(args, loss, acc):
            args.nprocs = torch.cuda.device_count()
            dist.init_process_group("nccl")
            return reduce_mean(loss, args.nprocs), reduce_mean(acc, args.nprocs)
        """
    )
    assert rows(source, "DDP029") == [line_of(source, "rt /= nprocs")]
