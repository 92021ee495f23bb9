"""A detectron2-style launcher: the parent spawns the other local ranks and then sets itself
up as local rank 0. `setup_group` (which ends in a barrier) runs in the parent only where it
is the local main process, and in every spawned worker: every rank reaches the barrier."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def is_local_main_process():
    return not dist.is_initialized() or int(os.environ.get("LOCAL_RANK", 0)) == 0


def setup_group(local_rank, world_size, url):
    dist.init_process_group("nccl", init_method=url, world_size=world_size, rank=local_rank)
    torch.cuda.set_device(local_rank)
    dist.barrier()


def _worker(index, main_func, world_size, url, args):
    setup_group(index + 1, world_size, url)
    main_func(*args)


def launch(main_func, num_gpus, url="tcp://127.0.0.1:29500", args=()):
    if num_gpus > 1 and is_local_main_process():
        context = mp.spawn(
            _worker, nprocs=num_gpus - 1, args=(main_func, num_gpus, url, args), join=False
        )
        if is_local_main_process():
            setup_group(0, num_gpus, url)
        return context
    return None
