"""The script is its own launcher: it counts the GPUs and starts one worker per GPU with
mp.spawn, so the count is the number of processes by construction; a second entry point
asks the launcher, not the GPU count, whether to join a group."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(gpu, ngpus, steps):
    torch.cuda.set_device(gpu)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29511",
                            rank=gpu, world_size=ngpus)
    net = DDP(nn.Linear(32, 32).cuda(gpu), device_ids=[gpu])
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(steps):
        loss = net(torch.randn(16, 32, device=gpu)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


def launched_main(steps):
    if "WORLD_SIZE" in os.environ:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        worker_net = DDP(nn.Linear(32, 32).cuda(local_rank), device_ids=[local_rank])
        if torch.cuda.device_count() > 1 and dist.get_rank() == 0:
            print(f"{torch.cuda.device_count()} GPUs visible on this node")
        return worker_net
    return None


if __name__ == "__main__":
    ngpus = torch.cuda.device_count()
    if ngpus > 1:
        mp.spawn(worker, nprocs=ngpus, args=(ngpus, 100))
    else:
        worker(0, 1, 100)
