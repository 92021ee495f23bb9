"""A SLURM job script (`srun python train.py`): each task turns SLURM's variables into the
ones the process group reads, the rendezvous host and port included, so it is its own
launcher and the port it writes is the one every task uses."""
import os
import subprocess

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def init_from_slurm(port=29500):
    nodes = subprocess.check_output(["scontrol", "show", "hostnames", os.environ["SLURM_JOB_NODELIST"]])
    os.environ["MASTER_ADDR"] = nodes.decode().splitlines()[0]
    os.environ["MASTER_PORT"] = str(port)
    os.environ["RANK"] = os.environ["SLURM_PROCID"]
    os.environ["WORLD_SIZE"] = os.environ["SLURM_NTASKS"]
    dist.init_process_group("nccl")
    local_rank = int(os.environ["SLURM_LOCALID"])
    torch.cuda.set_device(local_rank)
    return local_rank


def main():
    local_rank = init_from_slurm()
    model = DDP(nn.Linear(128, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(1000):
        optimizer.zero_grad()
        model(torch.randn(32, 128, device="cuda")).logsumexp(1).mean().backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
