"""A trainer called by a hyper-parameter search: its per-epoch save to one fixed name is
still overwritten every epoch within a run."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train_once(lr, out_dir, local_rank):
    model = DDP(nn.Linear(64, 8).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for epoch in range(20):
        for _ in range(100):
            loss = model(torch.randn(32, 64, device=local_rank)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), os.path.join(out_dir, "checkpoint.pt"))  # expect-preview: DDP014
        dist.barrier()


if __name__ == "__main__":
    dist.init_process_group("nccl")
    rank_on_node = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank_on_node)
    for trial_lr in (0.1, 0.03, 0.01):
        train_once(trial_lr, "search", rank_on_node)
    dist.destroy_process_group()
