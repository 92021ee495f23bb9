"""A one-GPU debugging default before `mp.spawn(nprocs=torch.cuda.device_count())`: after
the pin the job is one process, which uses GPU 0 as it should."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(gpu, ngpus):
    torch.cuda.set_device(gpu)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29400",
                            rank=gpu, world_size=ngpus)
    model = DDP(nn.Linear(4, 4).cuda(gpu), device_ids=[gpu])
    loss = model(torch.randn(2, 4, device=f"cuda:{gpu}")).sum()
    loss.backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ["CUDA_VISIBLE_DEVICES"] = "0"
    ngpus = torch.cuda.device_count()
    mp.spawn(worker, args=(ngpus,), nprocs=torch.cuda.device_count())
