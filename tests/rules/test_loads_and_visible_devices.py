"""DDP033 (`torch.load` without `map_location` on every rank) and DDP034
(`CUDA_VISIBLE_DEVICES` pinned to one GPU on every rank): reported where the code proves
the harm, unproven where it only may be, silent where each process keeps its own GPU."""

from __future__ import annotations

import textwrap

from source_rows import line_of

from ddplint.api import lint_source
from ddplint.diagnostics import Diagnostic

HEADER = """\
import os
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
"""
SETUP = """

def setup():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return local_rank
"""


def src(body: str) -> str:
    return HEADER + textwrap.dedent(body)


def job(body: str) -> str:
    """`body` after a `setup()` helper that joins the job on this process's GPU."""
    return HEADER + SETUP + textwrap.dedent(body)


def found(source: str, code: str) -> list[tuple[int, bool]]:
    """(row, unproven) of each finding of `code`."""
    return [(d.start.row, d.unproven) for d in _lint(source, code)]


def _lint(source: str, code: str) -> list[Diagnostic]:
    return lint_source(source, select=[code])


# -- DDP033 ---------------------------------------------------------------------------------

RESUME = """
def main(args):
    local_rank = setup()
    model = DDP(nn.Linear(4, 4).cuda(), device_ids=[local_rank])
    path = os.path.join(args.out, "last.pth")
    if os.path.exists(path):
        model.module.load_state_dict(LOAD)
    if dist.get_rank() == 0:
        torch.save({"model": model.module.state_dict()}, os.path.join(args.out, "last.pth"))
"""


def resume(load: str) -> str:
    return job(RESUME.replace("LOAD", load))


def test_ddp033_reports_a_resume_of_the_scripts_own_gpu_checkpoint():
    source = resume('torch.load(path)["model"]')
    assert found(source, "DDP033") == [(line_of(source, "torch.load(path)"), False)]
    message = _lint(source, "DDP033")[0].message
    assert "whatever `set_device` says" in message
    assert 'map_location="cpu"' in message


def test_ddp033_map_location_none_is_no_map_location():
    source = resume('torch.load(path, map_location=None)["model"]')
    assert found(source, "DDP033") == [(line_of(source, "torch.load(path"), False)]


def test_ddp033_any_map_location_is_fine():
    for load in (
        'torch.load(path, map_location="cpu")["model"]',
        'torch.load(path, "cpu")["model"]',
        'torch.load(path, map_location=lambda s, l: s)["model"]',
        'torch.load(path, map_location=f"cuda:{local_rank}")["model"]',
        'torch.load(path, map_location={"cuda:0": "cpu"})["model"]',
        'torch.load(path, **load_options)["model"]',
    ):
        assert found(resume(load), "DDP033") == [], load


def test_ddp033_a_load_under_rank_zero_is_one_process():
    source = job(
        """
        def main():
            local_rank = setup()
            model = DDP(nn.Linear(4, 4).cuda(), device_ids=[local_rank])
            if dist.get_rank() == 0:
                torch.save(model.module.state_dict(), "best.pt")
                model.module.load_state_dict(torch.load("best.pt"))
        """
    )
    assert found(source, "DDP033") == []


def test_ddp033_state_moved_to_the_cpu_before_saving_is_fine():
    source = job(
        """
        def main():
            local_rank = setup()
            model = DDP(nn.Linear(4, 4).cuda(), device_ids=[local_rank])
            model.module.load_state_dict(torch.load("w.pt"))
            if dist.get_rank() == 0:
                torch.save({k: v.cpu() for k, v in model.module.state_dict().items()}, "w.pt")
        """
    )
    assert found(source, "DDP033") == []


def test_ddp033_a_file_of_unknown_origin_is_unproven():
    source = job(
        """
        def main(args):
            local_rank = setup()
            model = nn.Linear(4, 4)
            state = torch.load(args.pretrained)
            model.load_state_dict(state)
            model = DDP(model.cuda(), device_ids=[local_rank])
        """
    )
    assert found(source, "DDP033") == [(line_of(source, "torch.load"), True)]


def test_ddp033_a_data_file_is_not_a_checkpoint():
    source = job(
        """
        def main(args):
            local_rank = setup()
            features = torch.load(args.features)
            return features.cuda()
        """
    )
    assert found(source, "DDP033") == []


def test_ddp033_per_rank_files_and_cpu_jobs_are_left_alone():
    per_rank = job(
        """
        def main():
            local_rank = setup()
            model = DDP(nn.Linear(4, 4).cuda(), device_ids=[local_rank])
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            shard = f"opt_{dist.get_rank()}.pt"
            opt.load_state_dict(torch.load(shard))
            torch.save(opt.state_dict(), shard)
        """
    )
    cpu_job = src(
        """
        def main():
            dist.init_process_group("gloo")
            model = DDP(nn.Linear(4, 4))
            model.module.load_state_dict(torch.load("m.pt"))
            if dist.get_rank() == 0:
                torch.save(model.module.state_dict(), "m.pt")
        """
    )
    assert found(per_rank, "DDP033") == []
    assert found(cpu_job, "DDP033") == []


def test_ddp033_a_script_that_sets_visible_devices_is_left_alone():
    source = "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = os.environ['SLURM_LOCALID']\n"
    source += resume('torch.load(path)["model"]')
    assert found(source, "DDP033") == []


# -- DDP034 ---------------------------------------------------------------------------------


def test_ddp034_reports_an_import_time_pin_with_a_per_rank_device():
    source = src(
        """
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"

        def main():
            local_rank = int(os.environ["LOCAL_RANK"])
            torch.cuda.set_device(local_rank)
            dist.init_process_group("nccl")
        """
    )
    assert found(source, "DDP034") == [(line_of(source, '"CUDA_VISIBLE_DEVICES"'), False)]
    assert "invalid device ordinal" in _lint(source, "DDP034")[0].message


def test_ddp034_follows_a_constant_and_the_spawn_index():
    source = src(
        """
        GPU = "2"

        def worker(index, n):
            dist.init_process_group("nccl", rank=index, world_size=n)
            model = DDP(nn.Linear(4, 4).cuda(index), device_ids=[index])

        if __name__ == "__main__":
            os.environ.setdefault("CUDA_VISIBLE_DEVICES", GPU)
            mp.spawn(worker, args=(4,), nprocs=4)
        """
    )
    assert found(source, "DDP034") == [(line_of(source, "setdefault"), False)]


def test_ddp034_a_spawn_of_one_process_shares_no_gpu():
    """`mp.spawn(..., nprocs=1)` (or no `nprocs`: the default is 1) after the pin starts
    one worker: it has the one visible GPU to itself."""
    for spawn in ("mp.spawn(worker, args=(1,), nprocs=1)", "mp.spawn(worker, args=(1,))"):
        source = src(
            f"""
            os.environ["CUDA_VISIBLE_DEVICES"] = "3"

            def worker(index, n):
                dist.init_process_group("nccl", rank=index, world_size=n)
                model = DDP(nn.Linear(4, 4).cuda(index), device_ids=[index])

            if __name__ == "__main__":
                {spawn}
            """
        )
        assert found(source, "DDP034") == [], spawn


def test_ddp034_without_a_per_process_device_is_unproven():
    source = src(
        """
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"

        def main():
            dist.init_process_group("nccl")
            model = DDP(nn.Linear(4, 4).cuda())
        """
    )
    assert found(source, "DDP034") == [(line_of(source, '"CUDA_VISIBLE_DEVICES"'), True)]


def test_ddp034_per_process_values_device_lists_and_one_process_paths_are_fine():
    bodies = (
        """
        def main():
            local_rank = int(os.environ["LOCAL_RANK"])
            os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)
            dist.init_process_group("nccl")
            torch.cuda.set_device(local_rank)
        """,
        """
        os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"

        def main():
            local_rank = int(os.environ["LOCAL_RANK"])
            torch.cuda.set_device(local_rank)
            dist.init_process_group("nccl")
        """,
        """
        def main(args):
            os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
            local_rank = int(os.environ["LOCAL_RANK"])
            torch.cuda.set_device(local_rank)
            dist.init_process_group("nccl")
        """,
        """
        def main():
            local_rank = int(os.environ["LOCAL_RANK"])
            if dist.get_rank() == 0:
                os.environ["CUDA_VISIBLE_DEVICES"] = "0"
            torch.cuda.set_device(local_rank)
            dist.init_process_group("nccl")
        """,
        """
        def main():
            local_rank = int(os.environ["LOCAL_RANK"])
            torch.cuda.set_device(local_rank)
            os.environ["CUDA_VISIBLE_DEVICES"] = "0"
            dist.init_process_group("nccl")
        """,
    )
    for body in bodies:
        assert found(src(body), "DDP034") == [], body


def test_ddp033_a_full_state_gathered_onto_the_cpu_is_not_proven_gpu_state():
    source = job(
        """
        from torch.distributed.fsdp import FullStateDictConfig

        def main():
            local_rank = setup()
            model = DDP(nn.Linear(4, 4).cuda(), device_ids=[local_rank])
            config = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
            model.load_state_dict(torch.load("full.pt"))
            if dist.get_rank() == 0:
                torch.save(model.state_dict(), "full.pt")
        """
    )
    assert [unproven for _, unproven in found(source, "DDP033")] == [True]


def test_ddp033_test_modules_are_left_alone():
    source = resume('torch.load(path)["model"]')
    assert lint_source(source, path="test_resume.py", select=["DDP033"]) == []


def test_scheduler_and_scaler_state_is_no_gpu_evidence():
    """A scheduler's or GradScaler's state holds no tensors: loading it back puts nothing
    on a GPU; the optimizer's state, saved beside it from the GPU, is proven."""
    source = job("""
    def main():
        local_rank = setup()
        model = DDP(nn.Linear(4, 4).cuda(), device_ids=[local_rank])
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, 10)
        scaler = torch.cuda.amp.GradScaler()
        sched.load_state_dict(torch.load("scheduler.pt"))
        scaler.load_state_dict(torch.load("scaler.pt"))
        opt.load_state_dict(torch.load("optimizer.pt"))
        if dist.get_rank() == 0:
            torch.save(sched.state_dict(), "scheduler.pt")
            torch.save(scaler.state_dict(), "scaler.pt")
            torch.save(opt.state_dict(), "optimizer.pt")
    """)
    assert found(source, "DDP033") == [(line_of(source, 'torch.load("optimizer.pt")'), False)]
