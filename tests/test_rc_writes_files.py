"""Files every rank writes or deletes (DDP050, DDP051) and who runs a load (DDP033),
through `lint_source`."""

import textwrap

from ddplint.api import lint_source


def found(source: str, code: str) -> list[tuple[int, bool]]:
    """(row, unproven) of each finding of `code`."""
    return [(d.start.row, d.unproven) for d in lint_source(textwrap.dedent(source), select=[code])]


SHARDED = """\
import json
import os
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

def write_results(results, out_dir):
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(results, f)

def loader_of(data):
    return DataLoader(data, sampler=DistributedSampler(data))
"""


def test_ddp050_helper_nothing_in_the_file_calls_is_unproven():
    assert found(SHARDED, "DDP050") == [(7, True)]


def test_ddp050_helper_called_on_every_rank_is_proven_and_a_guarded_call_is_silent():
    every = (
        SHARDED
        + """
def main(data, evaluate):
    dist.init_process_group("nccl")
    loader = DataLoader(data, sampler=DistributedSampler(data))
    write_results(evaluate(loader), "out")

if __name__ == "__main__":
    main(None, None)
"""
    )
    assert found(every, "DDP050") == [(7, False)]
    guarded = every.replace(
        '    write_results(evaluate(loader), "out")',
        '    if dist.get_rank() == 0:\n        write_results(evaluate(loader), "out")',
    )
    assert found(guarded, "DDP050") == []


def test_ddp050_leaves_alone_a_script_that_shards_nothing_and_names_built_from_the_pid():
    source = """\
    import os
    import torch.distributed as dist

    def main():
        dist.init_process_group("nccl")
        with open("preds.txt", "w") as f:
            f.write("same on every rank")
        logging_path = f"log_{os.getpid()}.txt"
        with open(logging_path, "w") as f:
            f.write("x")

    if __name__ == "__main__":
        main()
    """
    assert found(source, "DDP050") == []


def test_ddp050_log_handler_with_mode_w_needs_no_sharding():
    source = """\
    import logging
    import torch.distributed as dist

    def main():
        dist.init_process_group("nccl")
        logging.getLogger().addHandler(logging.FileHandler("train.log", mode="w"))
        logging.getLogger().addHandler(logging.FileHandler("all.log"))

    if __name__ == "__main__":
        main()
    """
    rows = found(source, "DDP050")
    assert rows == [(6, False)]
    message = lint_source(textwrap.dedent(source), select=["DDP050"])[0].message
    assert "`train.log`" in message and "lines" in message


def test_ddp051_delete_that_tolerates_a_missing_file_is_silent():
    source = """\
    import os
    import torch.distributed as dist

    def main():
        dist.init_process_group("nccl")
        try:
            os.remove("outputs/best.pt")
        except OSError:
            pass
        if os.path.exists("outputs/last.pt"):
            os.remove("outputs/last.pt")

    if __name__ == "__main__":
        main()
    """
    assert found(source, "DDP051") == [(11, False)]


def test_ddp033_worker_spawned_and_also_called_as_the_one_process_fallback_runs_on_every_rank():
    source = """\
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def main_worker(gpu, args):
        if args.distributed:
            dist.init_process_group("nccl", rank=gpu, world_size=args.world_size)
        torch.cuda.set_device(gpu)
        model = torch.nn.Linear(4, 4).cuda(gpu)
        if args.resume:
            model.load_state_dict(torch.load(args.resume))

    def main(args):
        if args.distributed:
            mp.spawn(main_worker, nprocs=args.world_size, args=(args,))
        else:
            main_worker(0, args)
    """
    assert found(source, "DDP033") == [(11, True)]
