"""Only global rank 0 evaluates, and it moves the model with `.cuda(rank)`: under `rank ==
0` the global rank is 0, the first node's local rank 0, whose GPU 0 is its own."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(net, loader, evaluate_every, make_eval_copy):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % evaluate_every == 0 and rank == 0:
            copy = make_eval_copy(model.module).cuda(rank)
            print(f"step {step}: eval copy on GPU {next(copy.parameters()).device}")
